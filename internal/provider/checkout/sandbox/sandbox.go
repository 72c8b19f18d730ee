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
// the test cards with their outcomes, takes refunds to settle later, replays an answer to a
// repeated Cko-Idempotency-Key, and answers the adapter's look-ups (payments by reference, a
// payment, its actions) from what it stored. It keeps its state in Paygate's database, so every
// server sees one Checkout.com.
//
//	4242424242424242  approved (10000)
//	4000000000000002  declined, 20005 (do not honour)
//	4000000000009995  declined, 20051 (insufficient funds)
//	4000000000000069  declined, 20054 (expired card)
//	4000000000000119  503: the acquirer could not be reached, nothing was done
//
// Settle settles the refunds pending for SettleAfter or longer: each is approved, but a refund of
// 13.13 (1313 minor units, provider.FailingRefundMinor) is declined (20005) and its amount can be
// refunded again. A payment's actions list its authorization and its settled refunds, latest
// first; a pending refund is not listed.
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency).
//
// With SendWebhooks it sends Checkout.com's events, signed, about the answers it keeps:
// payment_approved or payment_declined for a payment; a replayed answer sends nothing again.
// Refunds are told of as they settle (SendRefundSettled).
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
}

// New returns the sandbox over its state in client's database, on the clock now, signing its
// webhooks with sign.
func New(client *ent.Client, now func() time.Time, sign outbound.WebhookSigner) *Sandbox {
	return &Sandbox{store: sandboxstore.New(client, "checkout", now), SandboxWebhooks: provider.NewSandboxWebhooks(sign)}
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

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	paymentID, isRefund := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/payments/"), "/refunds")
	isRefund = isRefund && strings.HasPrefix(r.URL.Path, "/payments/")
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
	case r.Method != http.MethodPost || (r.URL.Path != "/payments" && !isRefund):
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer, replayed, reused, err := s.store.Answer(r.Context(), r.Header.Get("Cko-Idempotency-Key"), r.URL.Path+"\n"+string(body), func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		if isRefund {
			return s.refund(ctx, tx, paymentID, body)
		}
		return s.pay(ctx, tx, body)
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
	if listed && code == "" {
		return sandboxstore.Answer{Status: http.StatusServiceUnavailable}, nil
	}
	payment := paymentAnswer{ID: prefixid.New("pay"), ActionID: prefixid.New("act"), Amount: req.Amount, Currency: req.Currency,
		Approved: true, Status: statusCaptured, ResponseCode: codeApproved, ResponseSummary: "Approved", Reference: req.Reference}
	event := eventPaymentApproved
	if listed {
		event, payment.Approved, payment.Status, payment.ResponseCode, payment.ResponseSummary = eventPaymentDeclined, false, "Declined", code, "Declined"
	}
	answer := sandboxstore.JSON(http.StatusCreated, payment)
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.ID, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount, Currency: req.Currency, Status: payment.Status, Body: answer.Body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	return answer, s.emitOnCommit(tx, event, s.paymentEventOf(payment))
}

// refund takes a refund of a captured payment, to settle later.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error) {
	var req refundRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, paymentID)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return sandboxstore.Answer{Status: http.StatusNotFound}, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case req.Amount == 0:
		req.Amount = payment.Amount - payment.Refunded
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
	refund := refundAnswer{ActionID: prefixid.New("act"), Reference: req.Reference}
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
	charge, err := s.store.Get(ctx, sandboxobject.KindCharge, id)
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

// actions answers a payment's settled refunds and its authorization, latest first.
func (s *Sandbox) actions(ctx context.Context, id string) (sandboxstore.Answer, error) {
	charge, err := s.store.Get(ctx, sandboxobject.KindCharge, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return sandboxstore.Answer{Status: http.StatusNotFound}, nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	_, authorization, err := view(charge)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	refunds, err := s.store.Refunds(ctx, id, listedRefunds)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	var listed []json.RawMessage
	for _, refund := range refunds {
		if refund.Status != refundPending { // a settled refund's body is its action
			listed = append(listed, refund.Body)
		}
	}
	body, err := json.Marshal(authorization)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusOK, append(listed, body)), nil
}

// view is a stored payment as the look-ups show it, and its authorization.
func view(charge *ent.SandboxObject) (payment, action, error) {
	var answered paymentAnswer
	if err := json.Unmarshal(charge.Body, &answered); err != nil {
		return payment{}, action{}, err
	}
	p := payment{ID: answered.ID, RequestedOn: charge.CreatedAt, Amount: answered.Amount, Currency: answered.Currency,
		Reference: answered.Reference, Approved: answered.Approved, Status: answered.Status}
	authorization := action{ID: answered.ActionID, Type: actionAuthorization, ProcessedOn: charge.CreatedAt, Amount: answered.Amount,
		Approved: &answered.Approved, ResponseCode: answered.ResponseCode, ResponseSummary: answered.ResponseSummary, Reference: answered.Reference}
	return p, authorization, nil
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
