// Package checkout is the Checkout.com adapter: it charges cards through the Payments API, or
// authorises them to capture or void later, with 3-D Secure when the card's issuer asks for it,
// and refunds them (JSON requests and answers), looks up what became of them, and holds a sandbox
// that answers as Checkout.com's sandbox does.
package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

// Name is the provider's name on payments and in routing.
const Name = "checkout"

// Response codes of Checkout.com's declines that Paygate tells apart; any other is card_declined.
// (An approval is read from approved, since several 10xxx codes approve.)
const (
	codeApproved          = "10000"
	codeInsufficientFunds = "20051"
	codeExpiredCard       = "20054"
)

// Client speaks to Checkout.com's API at BaseURL.
type Client struct {
	BaseURL   string
	SecretKey string
	provider.Caller
}

var _ provider.Provider = (*Client)(nil)

// Name identifies Checkout.com on payments.
func (*Client) Name() string { return Name }

type source struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth int    `json:"expiry_month"`
	ExpiryYear  int    `json:"expiry_year"`
	CVV         string `json:"cvv"`
	Name        string `json:"name,omitempty"`
}

type paymentRequest struct {
	Source      source            `json:"source"`
	Amount      int64             `json:"amount"`
	Currency    string            `json:"currency"`
	Reference   string            `json:"reference"`
	Capture     bool              `json:"capture"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// ThreeDS is sent, with SuccessURL and FailureURL, only for a charge with a return URL:
	// without one no 3-D Secure is asked for.
	ThreeDS *threeDS `json:"3ds,omitempty"`
	// SuccessURL and FailureURL are where Checkout.com sends the shopper's browser back to once
	// they authenticated, with cko-session-id added: both are Paygate's return address, which
	// asks Checkout.com what became of the payment whichever the browser comes back to.
	SuccessURL string `json:"success_url,omitempty"`
	FailureURL string `json:"failure_url,omitempty"`
}

// threeDS asks Checkout.com to authenticate the shopper (3-D Secure) where the card's issuer
// wants it: the payment then waits for them (202 Pending); a frictionless one is answered at once.
type threeDS struct {
	Enabled bool `json:"enabled"`
}

// Checkout.com's look-ups do not show whether a payment was requested with capture false, and
// only for one that was does a look-up report what was captured of it: so Paygate marks such a
// payment in its metadata, which the look-ups show.
const (
	captureKey    = "paygate_capture"
	captureManual = "manual"
)

type paymentAnswer struct {
	ID              string `json:"id"`
	ActionID        string `json:"action_id"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	Approved        bool   `json:"approved"`
	Status          string `json:"status"`
	ResponseCode    string `json:"response_code"`
	ResponseSummary string `json:"response_summary"`
	Reference       string `json:"reference"`
	Links           links  `json:"_links"`
}

// links are the addresses Checkout.com gives with a payment; Paygate reads its redirect, the page
// the shopper authenticates on, given while the payment waits for them.
type links struct {
	Redirect struct {
		Href string `json:"href"`
	} `json:"redirect"`
}

type refundRequest struct {
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

// captureRequest captures an authorisation. A final capture releases what it does not take, as
// provider.CaptureRequest means.
type captureRequest struct {
	Amount      int64  `json:"amount"`
	CaptureType string `json:"capture_type"`
	Reference   string `json:"reference"`
}

const captureFinal = "Final"

type voidRequest struct {
	Reference string `json:"reference"`
}

// actionAnswer is Checkout.com's answer to an action it took to process later: a refund, a
// capture, a void.
type actionAnswer struct {
	ActionID  string `json:"action_id"`
	Reference string `json:"reference"`
}

// payment is a payment as Checkout.com's look-ups show it.
type payment struct {
	ID          string    `json:"id"`
	RequestedOn time.Time `json:"requested_on"`
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Reference   string    `json:"reference"`
	Approved    bool      `json:"approved"`
	Status      string    `json:"status"`
	Balances    struct {
		// TotalCaptured is how much was captured, in Checkout.com's units of the currency.
		TotalCaptured int64 `json:"total_captured"`
	} `json:"balances"`
	// Metadata holds what the payment was requested with; its values may be any JSON.
	Metadata map[string]any `json:"metadata"`
	Links    links          `json:"_links"`
}

// Statuses of a payment that Paygate reads.
const (
	statusDeclined = "Declined"
	// A payment not decided yet: with a redirect link, one waiting for the shopper to
	// authenticate.
	statusPending = "Pending"
	// An authorisation voided, or left to lapse.
	statusVoided  = "Voided"
	statusExpired = "Expired"
)

// paymentList is a page of the payments made under one reference, newest first.
type paymentList struct {
	Limit      int       `json:"limit"`
	Skip       int       `json:"skip"`
	TotalCount int       `json:"total_count"`
	Data       []payment `json:"data"`
}

// action is a step in a payment's life (its authorization, a refund) as Checkout.com lists it.
type action struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	ProcessedOn time.Time `json:"processed_on"`
	Amount      int64     `json:"amount"`
	// Approved is whether the step went through; a step without it has no outcome yet.
	Approved        *bool  `json:"approved,omitempty"`
	ResponseCode    string `json:"response_code,omitempty"`
	ResponseSummary string `json:"response_summary,omitempty"`
	Reference       string `json:"reference,omitempty"`
}

// Action types Paygate reads.
const (
	actionAuthorization = "Authorization"
	actionRefund        = "Refund"
)

// counting is how Checkout.com counts amounts: whole units of the currencies it lists as taken in
// full (ISO 4217's zero-decimal ones, but the Chilean peso, which it counts in hundredths),
// thousandths of the three-decimal ones with the last digit 0, and hundredths of the rest.
var counting = provider.Counting{Provider: "checkout.com", Scales: map[string]int{"CLP": 2}, ThreeDecimalsInTens: true}

// Counting says how the provider counts amounts.
func (*Client) Counting() provider.Counting { return counting }

// Charge requests and captures a card payment or, when req.CaptureManually, authorises it only
// (capture false), to capture or void later; an approved authorisation (status Authorized) is
// Approved, nothing captured yet. A decline is a result (Checkout.com answers it 201 with
// approved false). A payment with a req.ReturnURL asks for 3-D Secure, sending the browser back
// there: a card whose issuer wants the shopper to authenticate is answered 202 Pending with the
// page to send them to (_links.redirect), a result that awaits the shopper. Without a ReturnURL
// nothing of 3-D Secure is sent, and such a card is declined (20154, 3DS authentication
// required). An answer by which Checkout.com did nothing (a 4xx, a 503) or a refused connection
// is provider.ErrUnavailable; a payment pending otherwise, an idempotency conflict, another 5xx, a
// timeout or an answer that cannot be read leaves the outcome unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	request := paymentRequest{
		Source: source{Type: "card", Number: req.Card.Number(), ExpiryMonth: req.Card.ExpMonth, ExpiryYear: req.Card.ExpYear, CVV: req.Card.CVC(),
			Name: req.HolderName},
		Amount: amount, Currency: req.Amount.Currency, Reference: req.PaymentID, Capture: !req.CaptureManually, Description: req.Description,
	}
	if req.ReturnURL != "" {
		request.ThreeDS, request.SuccessURL, request.FailureURL = &threeDS{Enabled: true}, req.ReturnURL, req.ReturnURL
	}
	if req.CaptureManually {
		request.Metadata = map[string]string{captureKey: captureManual}
	}
	answer, err := c.post(ctx, "/payments", req.PaymentID, request)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusCreated && answer.Status != http.StatusAccepted {
		return provider.ChargeResult{}, unsuccessful(answer)
	}
	var payment paymentAnswer
	if err := json.Unmarshal(answer.Body, &payment); err != nil || payment.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: unreadable payment (%d bytes)", len(answer.Body))
	}
	switch {
	case answer.Status == http.StatusAccepted:
		if result, ok := awaiting(payment.ID, payment.Status, payment.Links); ok {
			return result, nil
		}
		return provider.ChargeResult{}, unsuccessful(answer)
	case payment.Approved:
		return provider.ChargeResult{ProviderPaymentID: payment.ID, Approved: true}, nil
	case payment.Status != statusDeclined:
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s is %s, outcome unknown", payment.ID, payment.Status)
	}
	return decline(payment.ID, payment.ResponseCode, payment.ResponseSummary), nil
}

// awaiting is the payment id waiting for the shopper to authenticate on the page its redirect link
// gives; ok is false for a payment in another state.
func awaiting(id, status string, l links) (result provider.ChargeResult, ok bool) {
	if status != statusPending || l.Redirect.Href == "" {
		return provider.ChargeResult{}, false
	}
	return provider.ChargeResult{ProviderPaymentID: id, RedirectURL: l.Redirect.Href}, true
}

// decline is the decline of the payment id with Checkout.com's response code and summary.
func decline(id, responseCode, responseSummary string) provider.ChargeResult {
	result := provider.ChargeResult{ProviderPaymentID: id, DeclineCode: "card_declined", RawDeclineCode: responseCode,
		DeclineMessage: responseSummary}
	switch responseCode {
	case codeInsufficientFunds:
		result.DeclineCode = "insufficient_funds"
	case codeExpiredCard:
		result.DeclineCode = "expired_card"
	}
	return result
}

// unsuccessful is the error an answer other than the one expected means: the outcome in doubt
// for a 202 (still pending), an idempotency conflict (409: the key's first request may be running
// or done) or a 5xx but 503; else a refusal by which Checkout.com did nothing.
func unsuccessful(answer provider.Answer) error {
	if answer.Status == http.StatusAccepted || answer.Status == http.StatusConflict || answer.Indeterminate() {
		return fmt.Errorf("checkout.com: outcome unknown: answered %d", answer.Status)
	}
	return answer.Refused("checkout.com")
}

// Refund asks for part or all of a payment back. Checkout.com takes it (202) and says later, by
// webhook, whether it went through.
func (c *Client) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.RefundResult{}, err
	}
	answer, err := c.post(ctx, "/payments/"+req.ProviderPaymentID+"/refunds", req.RefundID,
		refundRequest{Amount: amount, Reference: req.RefundID})
	if err != nil {
		return provider.RefundResult{}, err
	}
	if answer.Status != http.StatusAccepted {
		return provider.RefundResult{}, unsuccessful(answer)
	}
	var refund actionAnswer
	if err := json.Unmarshal(answer.Body, &refund); err != nil || refund.ActionID == "" {
		return provider.RefundResult{}, fmt.Errorf("checkout.com: unreadable refund (%d bytes)", len(answer.Body))
	}
	return provider.RefundResult{ProviderRefundID: refund.ActionID, Pending: true}, nil
}

var _ provider.Capturer = (*Client)(nil)

// Capture captures the amount of an authorisation and releases the rest (a final capture).
// Checkout.com takes it (202) and confirms it by webhook: payment_captured or
// payment_capture_declined.
func (c *Client) Capture(ctx context.Context, req provider.CaptureRequest) (provider.CaptureResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.CaptureResult{}, err
	}
	err = c.act(ctx, "capture", provider.ErrUnavailable, "/payments/"+url.PathEscape(req.ProviderPaymentID)+"/captures", req.IdempotencyKey,
		captureRequest{Amount: amount, CaptureType: captureFinal, Reference: req.PaymentID})
	if err != nil {
		return provider.CaptureResult{}, err
	}
	return provider.CaptureResult{Pending: true}, nil
}

// Cancel voids an authorisation. Checkout.com takes it (202) and confirms it by webhook:
// payment_voided or payment_void_declined. Its voids take no reason. A payment waiting for the
// shopper to authenticate (Pending) holds no authorisation yet: Checkout.com refuses its void (403,
// Void not allowed), which is provider.ErrNothingToCancel here, and declines the payment itself
// (20152) once the shopper has let 15 minutes pass. The 403 does not say why the void was not
// allowed, and a payment captured or voided already is answered the same; that is safe, since
// Paygate looks the payment up before it believes there was nothing to cancel.
func (c *Client) Cancel(ctx context.Context, req provider.CancelRequest) (provider.CancelResult, error) {
	err := c.act(ctx, "void", provider.ErrNothingToCancel, "/payments/"+url.PathEscape(req.ProviderPaymentID)+"/voids", req.IdempotencyKey,
		voidRequest{Reference: req.PaymentID})
	if err != nil {
		return provider.CancelResult{}, err
	}
	return provider.CancelResult{Pending: true}, nil
}

// act asks for an action on an authorisation (what: a capture, a void), which Checkout.com takes
// (202) to process later. It refuses one the payment's state does not allow with 403 ("Capture
// not allowed", "Void not allowed"), which is notAllowed (provider.ErrUnavailable, or an error
// beside it), and an invalid one (an amount above the authorisation) with 422,
// provider.ErrUnavailable: neither is an outage, since they say nothing of its other requests.
// Other answers are read as a refund's are.
func (c *Client) act(ctx context.Context, what string, notAllowed error, path, idempotencyKey string, body any) error {
	answer, err := c.post(ctx, path, idempotencyKey, body)
	if err != nil {
		return err
	}
	if answer.Status != http.StatusAccepted {
		err := unsuccessful(answer)
		// Refused counts a 403 as refused credentials, an outage, unless an earlier try was lost
		// (an unknown outcome, which stands).
		if answer.Status == http.StatusForbidden && errors.Is(err, provider.ErrOutage) {
			return fmt.Errorf("%w: checkout.com refused the %s: answered %d", notAllowed, what, answer.Status)
		}
		return err
	}
	var taken actionAnswer
	if err := json.Unmarshal(answer.Body, &taken); err != nil || taken.ActionID == "" {
		return fmt.Errorf("checkout.com: unreadable %s (%d bytes), outcome unknown", what, len(answer.Body))
	}
	return nil
}

var _ provider.Reconciler = (*Client)(nil)

// paymentsLimit is how many payments under one reference a look-up reads: Paygate makes one per
// payment (the payment's id is its idempotency key), so more were made by someone else.
const paymentsLimit = 10

// LookupCharge finds the payment made under Paygate's payment id as its reference and reads it as
// Charge reads an answer, one waiting for the shopper to authenticate too; a declined payment's
// response code is read from its authorization. A payment authorised to capture later is read
// further: what was captured of it, or that its authorisation was voided.
func (c *Client) LookupCharge(ctx context.Context, paymentID string) (provider.ChargeResult, bool, error) {
	query := url.Values{"reference": {paymentID}, "limit": {strconv.Itoa(paymentsLimit)}}
	answer, err := c.get(ctx, "/payments?"+query.Encode())
	if err != nil {
		return provider.ChargeResult{}, false, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, false, fmt.Errorf("checkout.com: look-up answered %d, cannot tell", answer.Status)
	}
	var list paymentList
	if err := json.Unmarshal(answer.Body, &list); err != nil {
		return provider.ChargeResult{}, false, fmt.Errorf("checkout.com: unreadable payment list (%d bytes)", len(answer.Body))
	}
	for _, p := range list.Data {
		if p.Approved {
			result, err := approval(p)
			return result, err == nil, err
		}
	}
	for _, p := range list.Data {
		if result, ok := awaiting(p.ID, p.Status, p.Links); ok {
			return result, true, nil
		}
		if p.Status != statusDeclined {
			return provider.ChargeResult{}, false, fmt.Errorf("checkout.com: payment %s is %s, outcome unknown", p.ID, p.Status)
		}
	}
	switch {
	case list.TotalCount > len(list.Data):
		return provider.ChargeResult{}, false, fmt.Errorf("checkout.com: %d payments for %s, cannot tell", list.TotalCount, paymentID)
	case len(list.Data) == 0:
		return provider.ChargeResult{}, false, nil
	}
	return c.declined(ctx, list.Data[0].ID), true, nil // the newest
}

// declined is the decline of the payment id, which Checkout.com shows Declined: a decline whatever
// its actions list. Its response code is its authorization's, the one action that carries it,
// since the payment itself shows none. A payment whose shopper failed 3-D Secure, or let it lapse,
// was never sent for authorisation and lists none: its decline has no code of the provider's
// (the payment_authentication_failed webhook carries 20151 or 20152), and neither has one whose
// actions cannot be read now. Either is card_declined.
func (c *Client) declined(ctx context.Context, id string) provider.ChargeResult {
	actions, _, err := c.actions(ctx, id)
	if err == nil {
		for _, a := range actions {
			if a.Type == actionAuthorization {
				return decline(id, a.ResponseCode, a.ResponseSummary)
			}
		}
	}
	return decline(id, "", "Declined")
}

var _ provider.Authenticator = (*Client)(nil)

// Authenticated reads what became of a payment that waited for the shopper to authenticate, once
// their browser came back: the payment under its id (GET /payments/{id}), refused unless its
// reference is req's payment, read as LookupCharge reads it. Without the id (the charge's answer
// was lost) it is looked up by its reference. The cko-session-id the browser brought back is not
// used: it names the authentication session, which the payment's id already says, and a browser
// could bring back another payment's.
func (c *Client) Authenticated(ctx context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	if req.ProviderPaymentID == "" {
		result, found, err := c.LookupCharge(ctx, req.PaymentID)
		if err == nil && !found {
			err = fmt.Errorf("checkout.com: no payment has the reference %s", req.PaymentID)
		}
		return result, err
	}
	answer, err := c.get(ctx, "/payments/"+url.PathEscape(req.ProviderPaymentID))
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: look-up answered %d, cannot tell", answer.Status)
	}
	var p payment
	if err := json.Unmarshal(answer.Body, &p); err != nil || p.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: unreadable payment (%d bytes)", len(answer.Body))
	}
	if p.Reference != req.PaymentID {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s has the reference %q, not %s", p.ID, p.Reference, req.PaymentID)
	}
	if result, ok := awaiting(p.ID, p.Status, p.Links); ok {
		return result, nil
	}
	switch {
	case p.Approved:
		return approval(p)
	case p.Status == statusDeclined:
		return c.declined(ctx, p.ID), nil
	}
	return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s is %s, outcome unknown", p.ID, p.Status)
}

// approval reads an approved payment. One requested with capture false reports what was captured
// of it (balances.total_captured: 0 while Authorized) and whether its authorisation is void; one
// captured at once reports its approval alone, as Charge answered it.
func approval(p payment) (provider.ChargeResult, error) {
	result := provider.ChargeResult{ProviderPaymentID: p.ID, Approved: true}
	if p.Metadata[captureKey] != captureManual {
		return result, nil
	}
	currency, err := money.ParseCurrency(p.Currency)
	if err != nil {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s in %q: %w", p.ID, p.Currency, err)
	}
	captured, err := counting.Amount(p.Balances.TotalCaptured, currency)
	if err != nil {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s: %w", p.ID, err)
	}
	result.Captured = captured.Minor
	result.Canceled = p.Status == statusVoided || p.Status == statusExpired
	return result, nil
}

// LookupRefund finds the refund among the payment's actions, by its action id or its reference.
// Checkout.com lists a refund once it has processed it: one it took (its action id is known) but
// does not list yet is pending.
func (c *Client) LookupRefund(ctx context.Context, providerPaymentID, refundID, providerRefundID string) (provider.RefundStatus, error) {
	actions, found, err := c.actions(ctx, providerPaymentID)
	if err != nil {
		return "", err
	}
	if !found {
		return provider.RefundNotFound, nil
	}
	for _, a := range actions {
		if a.Type != actionRefund || !(providerRefundID != "" && a.ID == providerRefundID || refundID != "" && a.Reference == refundID) {
			continue
		}
		switch {
		case a.Approved == nil:
			return provider.RefundPending, nil
		case *a.Approved:
			return provider.RefundSucceeded, nil
		default:
			return provider.RefundFailed, nil
		}
	}
	if providerRefundID != "" {
		return provider.RefundPending, nil
	}
	return provider.RefundNotFound, nil
}

// actions lists the payment's actions; found is false when Checkout.com has no such payment.
func (c *Client) actions(ctx context.Context, paymentID string) (actions []action, found bool, err error) {
	answer, err := c.get(ctx, "/payments/"+url.PathEscape(paymentID)+"/actions")
	switch {
	case err != nil:
		return nil, false, err
	case answer.Status == http.StatusNotFound:
		return nil, false, nil
	case answer.Status != http.StatusOK:
		return nil, false, fmt.Errorf("checkout.com: look-up answered %d, cannot tell", answer.Status)
	}
	if err := json.Unmarshal(answer.Body, &actions); err != nil {
		return nil, false, fmt.Errorf("checkout.com: unreadable payment actions (%d bytes)", len(answer.Body))
	}
	return actions, true, nil
}

// get reads path (with its query).
func (c *Client) get(ctx context.Context, path string) (provider.Answer, error) {
	return c.Caller.Get(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, http.Header{"Authorization": {"Bearer " + c.SecretKey}})
}

// post sends body as JSON to path with the idempotency key.
func (c *Client) post(ctx context.Context, path, idempotencyKey string, body any) (provider.Answer, error) {
	header := http.Header{"Authorization": {"Bearer " + c.SecretKey}, "Cko-Idempotency-Key": {idempotencyKey}}
	return c.Caller.PostJSON(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, body)
}
