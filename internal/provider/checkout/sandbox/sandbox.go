// Package sandbox is Checkout.com's built-in stand-in: it answers the requests the Checkout.com
// adapter sends as Checkout.com's sandbox does, and sends its webhooks.
package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Sandbox answers as Checkout.com's sandbox does, for the requests the adapter sends: it charges
// the test cards with their outcomes, or authorises them only (capture false), captures and voids
// authorisations, takes refunds to settle later, replays an answer to a repeated
// Cko-Idempotency-Key, and answers the adapter's look-ups (payments by reference, a payment with
// its balances and metadata, its actions) from what it stored. It keeps its state in Paygate's
// database, so every server sees one Checkout.com.
//
//	4242424242424242  approved (10000)
//	4000000000000002  declined, 20005 (do not honour)
//	4000000000009995  declined, 20051 (insufficient funds)
//	4000000000000069  declined, 20054 (expired card)
//	4000000000000119  503: the acquirer could not be reached, nothing was done
//	4000002760003184  3-D Secure, then approved once the shopper authenticated
//	4000008400001629  3-D Secure, then declined (20005) even once the shopper authenticated
//
// A payment of a 3-D Secure card, requested with 3ds.enabled, a success_url and a failure_url,
// waits for the shopper (202, status Pending) on its challenge page, at _links.redirect: pages +
// /challenge/{id}. The page's form decides it once (see authentication.go); a payment of such a
// card requested without 3ds.enabled is declined (20154, 3DS authentication required).
//
// An approved payment requested with capture false is Authorized, and refunds nothing. Of the
// captures (POST /payments/{id}/captures) and voids (POST /payments/{id}/voids) of an
// authorisation, through any servers at once, one is taken (202): a capture, of all or part of
// it, is final and releases the rest, making the payment Captured, refunded no more than was
// captured; a void makes it Voided. Any other capture or void, of a payment captured at once
// too, is refused 403 (Capture not allowed, Void not allowed), and a capture above the
// authorisation 422 (capture_value_greater_than_authorized).
//
// Settle settles the refunds pending for SettleAfter or longer: each is approved, but a refund of
// 13.13 (1313 minor units, provider.FailingRefundMinor) is declined (20005) and its amount can be
// refunded again. A payment's actions list its authorization, its capture or void and its
// settled refunds, latest first; a pending refund is not listed.
//
// Its switches make it answer 503 (Outage), 500 (Fault), late (Latency) or 502 after acting
// (LoseAnswers).
//
// With SendWebhooks it sends Checkout.com's events, signed, about the answers it keeps:
// payment_approved (for an authorisation, and alone for a payment captured at once) or
// payment_declined for a payment, payment_pending for one waiting for the shopper,
// payment_captured for a capture, payment_voided for a void; a replayed answer sends nothing
// again. Refunds are told of as they settle (SendRefundSettled), and payments waiting for the
// shopper as they are decided.
type Sandbox struct {
	provider.SandboxSwitches

	// SettleAfter is how long a refund stays pending on the sandbox's clock; 0 means
	// provider.DefaultSettleAfter.
	SettleAfter time.Duration
	// Settled, when set, hears of each refund this server settled, once it is committed; among
	// the servers over one database each refund is heard of once (the payment_refunded and
	// payment_refund_declined webhooks tell the same). A server stopped between the two loses it.
	Settled func(ctx context.Context, refund provider.SettledRefund)

	provider.SandboxWebhooks

	store *sandboxstore.Store
	// pages is where the shopper's browser reaches the challenge pages; counting, how
	// Checkout.com counts amounts, for the pages to show them.
	pages    string
	counting provider.Counting
	mux      *http.ServeMux
}

// New returns the sandbox over its state in client's database, on the clock now, signing its
// webhooks with sign, its challenge pages reached by the browser at pages and showing amounts
// counted as counting says.
func New(client *ent.Client, now func() time.Time, sign outbound.WebhookSigner, pages string, counting provider.Counting) *Sandbox {
	s := &Sandbox{store: sandboxstore.New(client, "checkout", now), SandboxWebhooks: provider.NewSandboxWebhooks(sign), pages: pages,
		counting: counting, mux: http.NewServeMux()}
	challenge := provider.Challenge{Provider: "Checkout.com", Describe: s.describeChallenge, Finish: s.finishChallenge}
	s.mux.Handle("GET /challenge/{id}", challenge) // HEAD too
	s.mux.Handle("POST /challenge/{id}", challenge)
	s.mux.HandleFunc("/", s.serveAPI)
	return s
}

// The statuses of a refund in the sandbox's store.
const (
	refundPending  = "Pending"
	refundApproved = "Refunded"
	refundDeclined = "Declined"
)

// testCards are the response codes of the test cards; an empty code is an acquirer failure.
var testCards = map[string]string{
	"4000000000000002": "20005",
	"4000000000009995": codeInsufficientFunds,
	"4000000000000069": codeExpiredCard,
	"4000000000000119": "",
}

// ServeHTTP serves the API and, to the shopper's browser, the challenge pages.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// serveAPI answers the API, as its switches say.
func (s *Sandbox) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	run := s.poster(r.URL.Path)
	switch {
	case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || len(r.Header.Get("Authorization")) == len("Bearer "):
		w.WriteHeader(http.StatusUnauthorized)
		return
	case s.Outage.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case s.Fault.Load():
		w.WriteHeader(http.StatusInternalServerError)
		return
	case r.Method == http.MethodGet && (r.URL.Path == "/payments" || strings.HasPrefix(r.URL.Path, "/payments/")):
		s.lookUp(w, r)
		return
	case r.Method != http.MethodPost || run == nil:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer, replayed, reused, err := s.store.Answer(r.Context(), r.Header.Get("Cko-Idempotency-Key"), r.URL.Path+"\n"+string(body), func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		return run(ctx, tx, body)
	})
	switch {
	case err != nil:
		w.WriteHeader(http.StatusInternalServerError)
		return
	case reused:
		provider.WriteJSON(w, http.StatusConflict, invalid("idempotency_key_reused"))
		return
	case replayed:
		w.Header().Set("Cko-Idempotent-Replayed", "true")
	}
	s.Deliver(w, answer.Status, answer.Body)
}

// poster is what answers a POST to path: a payment, or an action on one (a refund, a capture, a
// void); nil for a path the sandbox does not answer.
func (s *Sandbox) poster(path string) func(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	if path == "/payments" {
		return s.pay
	}
	rest, found := strings.CutPrefix(path, "/payments/")
	paymentID, operation, _ := strings.Cut(rest, "/")
	var act func(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error)
	switch {
	case !found:
		return nil
	case operation == "refunds":
		act = s.refund
	case operation == "captures":
		act = s.capture
	case operation == "voids":
		act = s.void
	default:
		return nil
	}
	return func(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
		return act(ctx, tx, paymentID, body)
	}
}

// invalid is Checkout.com's answer to a request it refuses.
func invalid(codes ...string) map[string]any {
	return map[string]any{"request_id": prefixid.New("req"), "error_type": "request_invalid", "error_codes": codes}
}

// pay requests a payment.
func (s *Sandbox) pay(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case req.Amount < 1:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("amount_invalid")), nil
	case len(req.Currency) != 3:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("currency_invalid")), nil
	case req.Source.Type != "card" || req.Source.Number == "":
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("card_number_invalid")), nil
	}
	code, listed := testCards[req.Source.Number]
	summary := "Declined"
	asksAuthentication := provider.AsksAuthentication(req.Source.Number)
	switch {
	case listed && code == "":
		return sandboxstore.Answer{Status: http.StatusServiceUnavailable}, nil
	case asksAuthentication && (req.ThreeDS == nil || !req.ThreeDS.Enabled):
		// The issuer wants 3-D Secure, which was not asked for.
		code, summary, listed = codeAuthenticationRequired, "3DS authentication required", true
	case asksAuthentication && !provider.WebAddress(req.SuccessURL):
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("success_url_invalid")), nil
	case asksAuthentication && !provider.WebAddress(req.FailureURL):
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("failure_url_invalid")), nil
	case asksAuthentication:
		return s.awaitShopper(ctx, tx, req)
	}
	payment := paymentAnswer{ID: prefixid.New("pay"), ActionID: prefixid.New("act"), Amount: req.Amount, Currency: req.Currency,
		Approved: true, Status: statusCaptured, ResponseCode: codeApproved, ResponseSummary: "Approved", Reference: req.Reference}
	if req.Capture != nil && !*req.Capture {
		payment.Status = statusAuthorized
	}
	event := eventPaymentApproved
	if listed {
		event, payment.Approved, payment.Status, payment.ResponseCode, payment.ResponseSummary = eventPaymentDeclined, false, statusDeclined, code, summary
	}
	payment.Balances = balancesOf(payment.Status, req.Amount, req.Amount, 0)
	body, err := json.Marshal(storedPayment{paymentAnswer: payment, Metadata: req.Metadata})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.ID, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount, Currency: req.Currency, Status: payment.Status, Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusCreated, payment), s.emitOnCommit(tx, event, s.paymentEventOf(payment))
}

// storedPayment is a payment's body in the store: its answer, its status kept up to date, and
// what the look-ups show beside it. Its balances are those it was answered with: the look-ups
// count them afresh (view).
type storedPayment struct {
	paymentAnswer
	Metadata map[string]any `json:"metadata,omitempty"`
	// CaptureOrVoid is the action taken on its authorisation, once taken.
	CaptureOrVoid *action `json:"capture_or_void,omitempty"`
	Links         links   `json:"_links,omitempty"`
	// Authentication is what decides a payment waiting for the shopper, once they have
	// authenticated or failed to.
	Authentication *authentication `json:"authentication,omitempty"`
}

// balancesOf counts the balances of a payment of amount in status, of which captured was
// captured (when Captured) and refunded is refunded.
func balancesOf(status string, amount, captured, refunded int64) balances {
	switch status {
	case statusAuthorized:
		return balances{TotalAuthorized: amount, AvailableToVoid: amount, AvailableToCapture: amount}
	case statusCaptured:
		return balances{TotalAuthorized: amount, TotalCaptured: captured, TotalRefunded: refunded, AvailableToRefund: captured - refunded}
	case statusVoided:
		return balances{TotalAuthorized: amount, TotalVoided: amount}
	}
	return balances{} // declined: nothing is held
}

// capturedOf is how much of a captured payment was captured: what its capture took, or the
// whole amount of a payment captured at once.
func capturedOf(charge *ent.SandboxObject) int64 {
	if charge.Captured != nil {
		return *charge.Captured
	}
	return charge.Amount
}

// notAllowed is the answer to a capture or void that the payment's state does not allow: Capture
// not allowed, Void not allowed.
var notAllowed = bodiless(http.StatusForbidden)

// bodiless is an answer of status alone to a POST. It is kept under its idempotency key as any
// answer, which needs a body: an empty one.
func bodiless(status int) sandboxstore.Answer {
	return sandboxstore.Answer{Status: status, Body: []byte{}}
}

// authorisation reads the payment paymentID, Authorized, for an action on its authorisation whose
// request (body) it reads into req. refused, when its Status is set, is the answer instead: no
// such payment, a malformed request, or a payment in another state.
func (s *Sandbox) authorisation(ctx context.Context, tx *ent.Tx, paymentID string, body []byte, req any) (charge *ent.SandboxObject, stored storedPayment, refused sandboxstore.Answer, err error) {
	charge, err = s.store.GetIn(ctx, tx, sandboxobject.KindCharge, paymentID)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return nil, storedPayment{}, bodiless(http.StatusNotFound), nil
	case err != nil:
		return nil, storedPayment{}, sandboxstore.Answer{}, err
	case json.Unmarshal(body, req) != nil:
		return nil, storedPayment{}, sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case charge.Status != statusAuthorized:
		return nil, storedPayment{}, notAllowed, nil
	}
	if err := json.Unmarshal(charge.Body, &stored); err != nil {
		return nil, storedPayment{}, sandboxstore.Answer{}, err
	}
	return charge, stored, sandboxstore.Answer{}, nil
}

// capture captures all or part of an authorisation (all when no amount is given), releasing the
// rest. The payment moves only if it is Authorized still, so of the captures and voids of one
// authorisation through any servers at once one is taken, the others not allowed.
func (s *Sandbox) capture(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error) {
	var req captureRequest
	charge, stored, refused, err := s.authorisation(ctx, tx, paymentID, body, &req)
	if refused.Status != 0 || err != nil {
		return refused, err
	}
	switch {
	case req.Amount == 0:
		req.Amount = charge.Amount
	case req.Amount < 0:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("amount_invalid")), nil
	case req.Amount > charge.Amount:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("capture_value_greater_than_authorized")), nil
	}
	taken := actionAnswer{ActionID: prefixid.New("act"), Reference: req.Reference}
	stored.Status, stored.CaptureOrVoid = statusCaptured, s.approvedAction(actionCapture, taken, req.Amount)
	next, err := json.Marshal(stored)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	moved, err := s.store.Capture(ctx, tx, paymentID, statusAuthorized, statusCaptured, req.Amount, next)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if !moved { // another capture, or a void, was taken first
		return notAllowed, nil
	}
	return sandboxstore.JSON(http.StatusAccepted, taken), s.emitOnCommit(tx, eventPaymentCaptured, s.actionEventOf(charge, taken, req.Amount))
}

// void voids an authorisation, releasing all of it; it moves the payment as capture does.
func (s *Sandbox) void(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error) {
	var req voidRequest
	charge, stored, refused, err := s.authorisation(ctx, tx, paymentID, body, &req)
	if refused.Status != 0 || err != nil {
		return refused, err
	}
	taken := actionAnswer{ActionID: prefixid.New("act"), Reference: req.Reference}
	stored.Status, stored.CaptureOrVoid = statusVoided, s.approvedAction(actionVoid, taken, charge.Amount)
	next, err := json.Marshal(stored)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	moved, err := s.store.SetStatus(ctx, tx, paymentID, statusAuthorized, statusVoided, next)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if !moved {
		return notAllowed, nil
	}
	return sandboxstore.JSON(http.StatusAccepted, taken), s.emitOnCommit(tx, eventPaymentVoided, s.actionEventOf(charge, taken, charge.Amount))
}

// approvedAction is the action of type kind taken now (a capture, a void) of amount, as the
// payment's actions list it.
func (s *Sandbox) approvedAction(kind string, taken actionAnswer, amount int64) *action {
	approved := true
	return &action{ID: taken.ActionID, Type: kind, ProcessedOn: s.store.Now(), Amount: amount, Approved: &approved,
		ResponseCode: codeApproved, ResponseSummary: "Approved", Reference: taken.Reference}
}

// refund takes a refund of a captured payment, to settle later: of an authorisation, none
// until it is captured, and then no more than was captured.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error) {
	var req refundRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, paymentID)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return bodiless(http.StatusNotFound), nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case req.Amount == 0:
		req.Amount = capturedOf(payment) - payment.Refunded
	}
	taken := false
	if req.Amount >= 1 {
		if taken, err = s.store.TakeRefund(ctx, tx, paymentID, statusCaptured, req.Amount); err != nil {
			return sandboxstore.Answer{}, err
		}
	}
	if !taken {
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("refund_amount_exceeds_balance")), nil
	}
	refund := actionAnswer{ActionID: prefixid.New("act"), Reference: req.Reference}
	answer := sandboxstore.JSON(http.StatusAccepted, refund)
	err = s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.ActionID, Kind: sandboxobject.KindRefund, Reference: req.Reference,
		ChargeID: paymentID, Amount: req.Amount, Currency: payment.Currency, Status: refundPending, Body: answer.Body})
	return answer, err
}

// lookUp answers a GET: the payments under a reference, a payment, or a payment's actions.
func (s *Sandbox) lookUp(w http.ResponseWriter, r *http.Request) {
	var answer sandboxstore.Answer
	var err error
	id, isActions := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/payments/"), "/actions")
	switch {
	case r.URL.Path == "/payments":
		answer, err = s.list(r.Context(), r.URL.Query())
	case id == "" || strings.Contains(id, "/"):
		answer = sandboxstore.Answer{Status: http.StatusNotFound}
	case isActions:
		answer, err = s.actions(r.Context(), id)
	default:
		answer, err = s.payment(r.Context(), id)
	}
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	provider.WriteAnswer(w, answer.Status, answer.Body)
}

// list answers the payments made under a reference, newest first.
func (s *Sandbox) list(ctx context.Context, query url.Values) (sandboxstore.Answer, error) {
	reference := query.Get("reference")
	limit, limitErr := strconv.Atoi(cmp.Or(query.Get("limit"), "10"))
	skip, skipErr := strconv.Atoi(cmp.Or(query.Get("skip"), "0"))
	switch {
	case reference == "" || len(reference) > 80:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("reference_invalid")), nil
	case limitErr != nil || limit < 1 || limit > 100:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("paging_limit_invalid")), nil
	case skipErr != nil || skip < 0 || skip+limit > 1000: // the endpoint lists 1000 payments at most
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("paging_skip_invalid")), nil
	}
	charges, err := s.store.ByReference(ctx, sandboxobject.KindCharge, reference, skip, limit)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	total, err := s.store.CountByReference(ctx, sandboxobject.KindCharge, reference)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	list := paymentList{Limit: limit, Skip: skip, TotalCount: total, Data: []payment{}}
	for _, charge := range charges {
		if charge, err = s.current(ctx, charge); err != nil {
			return sandboxstore.Answer{}, err
		}
		p, _, err := view(charge)
		if err != nil {
			return sandboxstore.Answer{}, err
		}
		list.Data = append(list.Data, p)
	}
	return sandboxstore.JSON(http.StatusOK, list), nil
}

// payment answers a payment as it stands.
func (s *Sandbox) payment(ctx context.Context, id string) (sandboxstore.Answer, error) {
	charge, err := s.charge(ctx, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return sandboxstore.Answer{Status: http.StatusNotFound}, nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	p, _, err := view(charge)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusOK, p), nil
}

// listedRefunds bounds the refunds a payment's actions list.
const listedRefunds = 1000

// actions answers a payment's settled refunds, its capture or void and its authorization, latest
// first.
func (s *Sandbox) actions(ctx context.Context, id string) (sandboxstore.Answer, error) {
	charge, err := s.charge(ctx, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return sandboxstore.Answer{Status: http.StatusNotFound}, nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	_, steps, err := view(charge)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	refunds, err := s.store.Refunds(ctx, id, listedRefunds)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	listed := []json.RawMessage{} // none for a payment waiting for the shopper
	for _, refund := range refunds {
		if refund.Status != refundPending { // a settled refund's body is its action
			listed = append(listed, refund.Body)
		}
	}
	for _, step := range steps {
		body, err := json.Marshal(step)
		if err != nil {
			return sandboxstore.Answer{}, err
		}
		listed = append(listed, body)
	}
	return sandboxstore.JSON(http.StatusOK, listed), nil
}

// view is a stored payment as the look-ups show it, and its actions but refunds, latest first:
// its capture or void, its authorization (none while it waits for the shopper, nor once declined
// as its shopper failed to authenticate: it was never sent for authorisation). Its balances are
// counted from the store's columns, which refunds through any server move without touching its
// body.
func view(charge *ent.SandboxObject) (payment, []action, error) {
	var stored storedPayment
	if err := json.Unmarshal(charge.Body, &stored); err != nil {
		return payment{}, nil, err
	}
	p := payment{ID: stored.ID, RequestedOn: charge.CreatedAt, Amount: stored.Amount, Currency: stored.Currency,
		Reference: stored.Reference, Approved: stored.Approved, Status: stored.Status,
		Balances: balancesOf(charge.Status, charge.Amount, capturedOf(charge), charge.Refunded), Metadata: stored.Metadata, Links: stored.Links}
	if stored.Status == statusPending || unauthenticated(stored.ResponseCode) {
		return p, nil, nil
	}
	authorization := action{ID: stored.ActionID, Type: actionAuthorization, ProcessedOn: charge.CreatedAt, Amount: stored.Amount,
		Approved: &stored.Approved, ResponseCode: stored.ResponseCode, ResponseSummary: stored.ResponseSummary, Reference: stored.Reference}
	if stored.CaptureOrVoid != nil {
		return p, []action{*stored.CaptureOrVoid, authorization}, nil
	}
	return p, []action{authorization}, nil
}

// codeRefundDeclined is the response code of the refund the sandbox declines.
const codeRefundDeclined = "20005"

// refundOutcome is how the sandbox settles a refund of amount: approved, but for
// provider.FailingRefundMinor.
func refundOutcome(amount int64) (approved bool, responseCode, responseSummary string) {
	if amount == provider.FailingRefundMinor {
		return false, codeRefundDeclined, "Declined - Do Not Honour"
	}
	return true, codeApproved, "Approved"
}

// Settle settles the refunds pending for SettleAfter or longer, and tells Settled of each.
func (s *Sandbox) Settle(ctx context.Context) (int, error) {
	settled, err := s.store.SettleDue(ctx, refundPending, cmp.Or(s.SettleAfter, provider.DefaultSettleAfter),
		func(refund *ent.SandboxObject, at time.Time) sandboxstore.Settlement {
			approved, code, summary := refundOutcome(refund.Amount)
			body, _ := json.Marshal(action{ID: refund.ID, Type: actionRefund, ProcessedOn: at, Amount: refund.Amount, Approved: &approved,
				ResponseCode: code, ResponseSummary: summary, Reference: refund.Reference}) // strings, numbers and a time: cannot fail
			if !approved {
				return sandboxstore.Settlement{Status: refundDeclined, Body: body, Failed: true}
			}
			return sandboxstore.Settlement{Status: refundApproved, Body: body}
		})
	var sendErr error
	for _, done := range settled {
		approved, code, summary := refundOutcome(done.Refund.Amount)
		if s.Settled != nil {
			s.Settled(ctx, provider.SettledRefund{ProviderRefundID: done.Refund.ID, RefundID: done.Refund.Reference,
				ProviderPaymentID: *done.Refund.ChargeID, Amount: money.Amount{Minor: done.Refund.Amount, Currency: done.Refund.Currency},
				Succeeded: approved, ResponseCode: code, Reason: summary, SettledAt: done.At})
		}
		if s.SendsWebhooks() {
			sendErr = errors.Join(sendErr, s.SendRefundSettled(SettledRefund{PaymentID: *done.Refund.ChargeID, ActionID: done.Refund.ID,
				Reference: done.Refund.Reference, Amount: done.Refund.Amount, Currency: done.Refund.Currency, Succeeded: approved}))
		}
	}
	return len(settled), errors.Join(err, sendErr)
}
