// Package stripe is the Stripe adapter: it charges cards through PaymentIntents, sending the
// shopper to authenticate (3-D Secure) when the card's issuer asks, captures or voids those
// authorised to capture manually, and refunds them over Stripe's HTTP API (form-encoded requests,
// JSON answers, read with stripe-go's wire types), looks up what became of them, and holds a
// sandbox that answers as Stripe's test mode does.
package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/internal/provider"
)

// Name is the provider's name on payments and in routing.
const Name = "stripe"

// Client speaks to Stripe's API at BaseURL.
type Client struct {
	BaseURL string
	APIKey  string
	provider.Caller
}

var (
	_ provider.Provider      = (*Client)(nil)
	_ provider.RefundLister  = (*Client)(nil)
	_ provider.Capturer      = (*Client)(nil)
	_ provider.Authenticator = (*Client)(nil)
)

// Name identifies Stripe on payments.
func (*Client) Name() string { return Name }

// Charge creates and confirms a PaymentIntent for the card. A decline is a result, and so is a
// PaymentIntent that waits for the shopper to authenticate: Stripe sends their browser back to
// the request's ReturnURL (its return_url) once they are done. Without a ReturnURL no redirect is
// asked for, and a card that needs authentication is declined (authentication_required). An
// answer by which Stripe did nothing (processing_error, a refused request, a 503) or a refused
// connection is provider.ErrUnavailable; an answer that leaves the outcome in doubt (a 500, a key
// still in use, a payment still processing), a timeout or an answer that cannot be read leaves
// it unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	form := url.Values{
		"amount":                               {strconv.FormatInt(amount, 10)},
		"currency":                             {strings.ToLower(req.Amount.Currency)},
		"confirm":                              {"true"},
		"payment_method_data[type]":            {"card"},
		"payment_method_data[card][number]":    {req.Card.Number()},
		"payment_method_data[card][exp_month]": {strconv.Itoa(req.Card.ExpMonth)},
		"payment_method_data[card][exp_year]":  {strconv.Itoa(req.Card.ExpYear)},
		"payment_method_data[card][cvc]":       {req.Card.CVC()},
		"metadata[paygate_id]":                 {req.PaymentID},
	}
	if req.Description != "" {
		form.Set("description", req.Description)
	}
	if req.CaptureManually {
		form.Set("capture_method", string(stripego.PaymentIntentCaptureMethodManual))
	}
	if req.ReturnURL != "" {
		form.Set("return_url", req.ReturnURL)
	} else {
		// Stripe refuses to confirm, without a return_url, a PaymentIntent that takes payment
		// methods which redirect the shopper, as its automatic payment methods do unless told
		// never to. A card is no such method: one that needs authentication is then left
		// requires_action for Stripe.js to take (use_stripe_sdk), which intentResult declines.
		form.Set("automatic_payment_methods[enabled]", "true")
		form.Set("automatic_payment_methods[allow_redirects]", string(stripego.PaymentIntentAutomaticPaymentMethodsAllowRedirectsNever))
	}
	answer, err := c.post(ctx, "/v1/payment_intents", form, req.PaymentID)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status == http.StatusPaymentRequired {
		return declined(answer)
	}
	if err := unsuccessful(answer); err != nil {
		return provider.ChargeResult{}, err
	}
	var intent stripego.PaymentIntent
	if err := json.Unmarshal(answer.Body, &intent); err != nil || intent.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("stripe: unreadable payment intent (%d bytes)", len(answer.Body))
	}
	return intentResult(&intent)
}

// intentResult is what a PaymentIntent says of its charge: approved (for one to capture manually:
// authorised, captured or voided), declined, waiting for the shopper to authenticate, or, while
// it is processing, not known yet.
func intentResult(intent *stripego.PaymentIntent) (provider.ChargeResult, error) {
	manual := intent.CaptureMethod == stripego.PaymentIntentCaptureMethodManual
	switch {
	case intent.Status == stripego.PaymentIntentStatusRequiresAction && shopperRedirect(intent) != "":
		return provider.ChargeResult{ProviderPaymentID: intent.ID, RedirectURL: shopperRedirect(intent)}, nil
	case intent.Status == stripego.PaymentIntentStatusSucceeded && manual:
		captured, err := paygateAmount(intent.AmountReceived, string(intent.Currency))
		if err != nil {
			return provider.ChargeResult{}, fmt.Errorf("stripe: payment intent %s: amount_received: %w", intent.ID, err)
		}
		return provider.ChargeResult{ProviderPaymentID: intent.ID, Approved: true, Captured: captured.Minor}, nil
	case intent.Status == stripego.PaymentIntentStatusSucceeded, intent.Status == stripego.PaymentIntentStatusRequiresCapture:
		return provider.ChargeResult{ProviderPaymentID: intent.ID, Approved: true}, nil
	case intent.Status == stripego.PaymentIntentStatusCanceled:
		return canceledResult(intent), nil
	case intent.Status == stripego.PaymentIntentStatusProcessing:
		return provider.ChargeResult{}, fmt.Errorf("stripe: payment intent %s still processing, outcome unknown", intent.ID)
	case intent.Status == stripego.PaymentIntentStatusRequiresPaymentMethod && intent.LastPaymentError != nil:
		result := decline(intent.LastPaymentError)
		result.ProviderPaymentID = intent.ID
		return result, nil
	case intent.Status == stripego.PaymentIntentStatusRequiresAction:
		// Authentication that only Stripe.js can take the shopper through (use_stripe_sdk), as
		// Stripe asks of a charge without a return_url: nothing was charged, and nobody can
		// authenticate, so the card is declined as Stripe declines one that needs authentication
		// when the shopper is not there to give it.
		return provider.ChargeResult{ProviderPaymentID: intent.ID, DeclineCode: "card_declined",
			RawDeclineCode: string(stripego.DeclineCodeAuthenticationRequired), DeclineMessage: authenticationRequired}, nil
	default: // requires_confirmation: a step Paygate cannot take
		return provider.ChargeResult{ProviderPaymentID: intent.ID, DeclineCode: "card_declined", RawDeclineCode: string(intent.Status),
			DeclineMessage: "The card needs a step Paygate cannot take (" + string(intent.Status) + ")."}, nil
	}
}

// authenticationRequired is Stripe's message for a card declined because it needs authentication.
const authenticationRequired = "Your card was declined. This transaction requires authentication."

// shopperRedirect is the page the PaymentIntent asks the shopper's browser to be sent to, "" when
// its next action is no redirect.
func shopperRedirect(intent *stripego.PaymentIntent) string {
	if intent.NextAction == nil || intent.NextAction.Type != stripego.PaymentIntentNextActionTypeRedirectToURL || intent.NextAction.RedirectToURL == nil {
		return ""
	}
	return intent.NextAction.RedirectToURL.URL
}

// Authenticated reads the PaymentIntent as it stands once the shopper's browser is back: Stripe
// decides it when its page is done with, and sends payment_intent.succeeded,
// amount_capturable_updated or payment_failed too. The intent is the charge's; when Stripe's
// answer with its id was lost, the one the browser names (payment_intent), or else the one a
// search finds. Either way it must carry the payment's paygate_id, so that what the browser
// brought back from another payment's page never decides this one.
func (c *Client) Authenticated(ctx context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	intentID := req.ProviderPaymentID
	if intentID == "" {
		intentID = req.Returned.Get("payment_intent")
	}
	if intentID == "" {
		result, found, err := c.LookupCharge(ctx, req.PaymentID)
		if err == nil && !found {
			err = fmt.Errorf("stripe: no payment intent found for %s yet, cannot tell", req.PaymentID)
		}
		return result, err
	}
	answer, err := c.get(ctx, "/v1/payment_intents/"+url.PathEscape(intentID), nil)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, cannotTell(answer)
	}
	var intent stripego.PaymentIntent
	if err := json.Unmarshal(answer.Body, &intent); err != nil || intent.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("stripe: unreadable payment intent (%d bytes)", len(answer.Body))
	}
	if intent.Metadata[paygateIDKey] != req.PaymentID {
		return provider.ChargeResult{}, fmt.Errorf("stripe: payment intent %s is not payment %s's", intent.ID, req.PaymentID)
	}
	return intentResult(&intent)
}

// canceledResult is what a canceled PaymentIntent says of its charge. Stripe zeroes
// amount_capturable when it voids an authorisation, so an intent that made its charge without a
// payment error is the one that had the amount authorised; any other was never approved.
func canceledResult(intent *stripego.PaymentIntent) provider.ChargeResult {
	if intent.LatestCharge != nil && intent.LastPaymentError == nil {
		return provider.ChargeResult{ProviderPaymentID: intent.ID, Approved: true, Canceled: true}
	}
	result := provider.ChargeResult{DeclineCode: "card_declined", RawDeclineCode: string(intent.Status),
		DeclineMessage: "The payment was canceled before it was authorised."}
	if intent.LastPaymentError != nil {
		result = decline(intent.LastPaymentError)
	}
	result.ProviderPaymentID, result.Canceled = intent.ID, true
	return result
}

// declined reads a 402 card_error into a decline, or an outage for processing_error.
func declined(answer provider.Answer) (provider.ChargeResult, error) {
	var body struct {
		Error stripego.Error `json:"error"`
	}
	if err := json.Unmarshal(answer.Body, &body); err != nil || body.Error.Type != stripego.ErrorTypeCard {
		return provider.ChargeResult{}, fmt.Errorf("stripe: unreadable card error (%d bytes)", len(answer.Body))
	}
	if body.Error.Code == stripego.ErrorCodeProcessingError {
		return provider.ChargeResult{}, answer.Failed("stripe (processing_error)")
	}
	result := decline(&body.Error)
	if body.Error.PaymentIntent != nil {
		result.ProviderPaymentID = body.Error.PaymentIntent.ID
	}
	return result, nil
}

// decline maps a card error to Paygate's decline codes, keeping Stripe's own.
func decline(e *stripego.Error) provider.ChargeResult {
	raw := string(e.DeclineCode)
	if raw == "" {
		raw = string(e.Code)
	}
	result := provider.ChargeResult{DeclineCode: "card_declined", RawDeclineCode: raw, DeclineMessage: e.Msg}
	switch {
	case e.Code == stripego.ErrorCodeExpiredCard || e.DeclineCode == "expired_card":
		result.DeclineCode = "expired_card"
	case e.DeclineCode == "insufficient_funds":
		result.DeclineCode = "insufficient_funds"
	}
	return result
}

// unsuccessful is nil for a 2xx answer and otherwise the error it means: the outcome in doubt
// for a 5xx (but 503) or an idempotency conflict (the key's first request may be running or
// done), else a refusal by which Stripe did nothing.
func unsuccessful(answer provider.Answer) error {
	if answer.Status >= 200 && answer.Status < 300 {
		return nil
	}
	var body struct {
		Error stripego.Error `json:"error"`
	}
	json.Unmarshal(answer.Body, &body)
	if answer.Indeterminate() || answer.Status == http.StatusConflict || body.Error.Type == stripego.ErrorTypeIdempotency {
		return fmt.Errorf("stripe: outcome unknown: answered %d %s %s", answer.Status, body.Error.Type, body.Error.Code)
	}
	return answer.Refused(fmt.Sprintf("stripe (%s %s)", body.Error.Type, body.Error.Code))
}

// Refund refunds part or all of a PaymentIntent. Stripe answers most card refunds at once; one it
// answers pending settles later.
func (c *Client) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.RefundResult{}, err
	}
	form := url.Values{
		"payment_intent":       {req.ProviderPaymentID},
		"amount":               {strconv.FormatInt(amount, 10)},
		"metadata[paygate_id]": {req.RefundID},
	}
	answer, err := c.post(ctx, "/v1/refunds", form, req.RefundID)
	if err != nil {
		return provider.RefundResult{}, err
	}
	if err := unsuccessful(answer); err != nil {
		return provider.RefundResult{}, err
	}
	var refund stripego.Refund
	if err := json.Unmarshal(answer.Body, &refund); err != nil || refund.ID == "" {
		return provider.RefundResult{}, fmt.Errorf("stripe: unreadable refund (%d bytes)", len(answer.Body))
	}
	switch refund.Status {
	case stripego.RefundStatusSucceeded:
		return provider.RefundResult{ProviderRefundID: refund.ID}, nil
	case stripego.RefundStatusFailed, stripego.RefundStatusCanceled:
		return provider.RefundResult{}, fmt.Errorf("%w: stripe refund %s is %s", provider.ErrUnavailable, refund.ID, refund.Status)
	default: // pending, requires_action
		return provider.RefundResult{ProviderRefundID: refund.ID, Pending: true}, nil
	}
}

// Capture captures the amount of a PaymentIntent authorised to capture manually; Stripe releases
// what it does not capture. A refusal (the intent is no longer requires_capture, the amount is more
// than it holds) is provider.ErrUnavailable, as Charge reads one.
func (c *Client) Capture(ctx context.Context, req provider.CaptureRequest) (provider.CaptureResult, error) {
	amount, err := counting.Units(req.Amount)
	if err != nil {
		return provider.CaptureResult{}, err
	}
	form := url.Values{"amount_to_capture": {strconv.FormatInt(amount, 10)}}
	intent, err := c.moveIntent(ctx, req.ProviderPaymentID, "capture", form, req.IdempotencyKey)
	if err != nil {
		return provider.CaptureResult{}, err
	}
	if intent.Status != stripego.PaymentIntentStatusSucceeded {
		return provider.CaptureResult{}, fmt.Errorf("stripe: payment intent %s is %s after its capture, outcome unknown", intent.ID, intent.Status)
	}
	return provider.CaptureResult{}, nil
}

// Cancel voids the authorisation of a PaymentIntent, releasing all of it. Stripe takes no
// cancellation_reason expired: an authorisation let lapse was abandoned.
func (c *Client) Cancel(ctx context.Context, req provider.CancelRequest) (provider.CancelResult, error) {
	reason := stripego.PaymentIntentCancellationReason(req.Reason)
	if reason == stripego.PaymentIntentCancellationReasonExpired {
		reason = stripego.PaymentIntentCancellationReasonAbandoned
	}
	form := url.Values{}
	if reason != "" {
		form.Set("cancellation_reason", string(reason))
	}
	intent, err := c.moveIntent(ctx, req.ProviderPaymentID, "cancel", form, req.IdempotencyKey)
	if err != nil {
		return provider.CancelResult{}, err
	}
	if intent.Status != stripego.PaymentIntentStatusCanceled {
		return provider.CancelResult{}, fmt.Errorf("stripe: payment intent %s is %s after its cancellation, outcome unknown", intent.ID, intent.Status)
	}
	return provider.CancelResult{}, nil
}

// moveIntent sends form to the PaymentIntent's action (capture, cancel) with the idempotency key,
// and reads the intent Stripe answers with.
func (c *Client) moveIntent(ctx context.Context, intentID, action string, form url.Values, idempotencyKey string) (*stripego.PaymentIntent, error) {
	answer, err := c.post(ctx, "/v1/payment_intents/"+url.PathEscape(intentID)+"/"+action, form, idempotencyKey)
	if err != nil {
		return nil, err
	}
	if err := unsuccessful(answer); err != nil {
		return nil, err
	}
	var intent stripego.PaymentIntent
	if err := json.Unmarshal(answer.Body, &intent); err != nil || intent.ID == "" {
		return nil, fmt.Errorf("stripe: unreadable payment intent after its %s (%d bytes)", action, len(answer.Body))
	}
	return &intent, nil
}

var _ provider.Reconciler = (*Client)(nil)

// searchLimit is how many PaymentIntents a look-up asks for: Paygate makes one per payment (the
// payment's id is its idempotency key), so more were made by someone else.
const searchLimit = 10

// LookupCharge finds the PaymentIntent made for the payment by its metadata, through Stripe's
// search, and reads it as Charge reads an answer: an intent that succeeded or holds an
// authorisation is an approval, one waiting for the shopper to authenticate is found waiting, one
// still processing leaves the outcome unknown.
func (c *Client) LookupCharge(ctx context.Context, paymentID string) (provider.ChargeResult, bool, error) {
	query := url.Values{"query": {"metadata['paygate_id']:'" + strings.ReplaceAll(paymentID, "'", `\'`) + "'"},
		"limit": {strconv.Itoa(searchLimit)}}
	answer, err := c.get(ctx, "/v1/payment_intents/search", query)
	if err != nil {
		return provider.ChargeResult{}, false, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, false, cannotTell(answer)
	}
	var found stripego.PaymentIntentSearchResult
	if err := json.Unmarshal(answer.Body, &found); err != nil {
		return provider.ChargeResult{}, false, fmt.Errorf("stripe: unreadable search result (%d bytes)", len(answer.Body))
	}
	var newest *stripego.PaymentIntent
	for _, intent := range found.Data {
		switch {
		case intent == nil || intent.ID == "":
			return provider.ChargeResult{}, false, fmt.Errorf("stripe: unreadable search result (%d bytes)", len(answer.Body))
		case intent.Status == stripego.PaymentIntentStatusSucceeded, intent.Status == stripego.PaymentIntentStatusRequiresCapture,
			intent.Status == stripego.PaymentIntentStatusProcessing:
			result, err := intentResult(intent)
			return result, err == nil, err
		case newest == nil || intent.Created > newest.Created:
			newest = intent
		}
	}
	switch {
	case found.HasMore:
		return provider.ChargeResult{}, false, fmt.Errorf("stripe: more than %d payment intents for %s, cannot tell", searchLimit, paymentID)
	case newest == nil:
		return provider.ChargeResult{}, false, nil
	}
	result, err := intentResult(newest)
	return result, err == nil, err
}

// ListRefunds lists the refunds of the PaymentIntent providerPaymentID, up to refundsLimit of
// them, for a charge.refunded that does not name them.
func (c *Client) ListRefunds(ctx context.Context, providerPaymentID string) ([]provider.RefundNotice, error) {
	list, found, err := c.refundsOf(ctx, providerPaymentID)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("stripe: no payment intent %s to list the refunds of", providerPaymentID)
	}
	notices := make([]provider.RefundNotice, 0, len(list.Data))
	for _, refund := range list.Data {
		notice, err := refundNotice(refund)
		if err != nil {
			return nil, fmt.Errorf("stripe: %w", err)
		}
		notices = append(notices, notice)
	}
	return notices, nil
}

// refundsOf is the first page, of refundsLimit, of the refunds of PaymentIntent intentID; found
// is false when Stripe has no such PaymentIntent.
func (c *Client) refundsOf(ctx context.Context, intentID string) (list stripego.RefundList, found bool, err error) {
	answer, err := c.get(ctx, "/v1/refunds", url.Values{"payment_intent": {intentID}, "limit": {strconv.Itoa(refundsLimit)}})
	switch {
	case err != nil:
		return list, false, err
	case missing(answer):
		return list, false, nil
	case answer.Status != http.StatusOK:
		return list, false, cannotTell(answer)
	}
	if err := json.Unmarshal(answer.Body, &list); err != nil {
		return list, false, fmt.Errorf("stripe: unreadable refund list (%d bytes)", len(answer.Body))
	}
	return list, true, nil
}

// refundsLimit is how many refunds of a PaymentIntent a look-up reads: more than Paygate makes of
// one payment.
const refundsLimit = 100

// LookupRefund reads the refund by its id, or, when Stripe's answer with the id was lost, finds it
// among the PaymentIntent's refunds by its metadata.
func (c *Client) LookupRefund(ctx context.Context, providerPaymentID, refundID, providerRefundID string) (provider.RefundStatus, error) {
	var refund stripego.Refund
	if providerRefundID != "" {
		answer, err := c.get(ctx, "/v1/refunds/"+url.PathEscape(providerRefundID), nil)
		switch {
		case err != nil:
			return "", err
		case missing(answer):
			return provider.RefundNotFound, nil
		case answer.Status != http.StatusOK:
			return "", cannotTell(answer)
		}
		if err := json.Unmarshal(answer.Body, &refund); err != nil || refund.ID == "" {
			return "", fmt.Errorf("stripe: unreadable refund (%d bytes)", len(answer.Body))
		}
	} else {
		list, found, err := c.refundsOf(ctx, providerPaymentID)
		switch {
		case err != nil:
			return "", err
		case !found:
			return provider.RefundNotFound, nil
		}
		for _, listed := range list.Data {
			if listed != nil && listed.Metadata["paygate_id"] == refundID {
				refund = *listed
				break
			}
		}
		switch {
		case refund.ID == "" && list.HasMore:
			return "", fmt.Errorf("stripe: more than %d refunds of %s, cannot tell", refundsLimit, providerPaymentID)
		case refund.ID == "":
			return provider.RefundNotFound, nil
		}
	}
	return refundStatus(refund.Status), nil
}

// refundStatus is what a refund's status at Stripe means to Paygate: a canceled refund failed,
// and one not settled yet (pending, requires_action) is pending.
func refundStatus(status stripego.RefundStatus) provider.RefundStatus {
	switch status {
	case stripego.RefundStatusSucceeded:
		return provider.RefundSucceeded
	case stripego.RefundStatusFailed, stripego.RefundStatusCanceled:
		return provider.RefundFailed
	default:
		return provider.RefundPending
	}
}

// missing reports whether Stripe answered that the object asked for does not exist.
func missing(answer provider.Answer) bool {
	var body struct {
		Error stripego.Error `json:"error"`
	}
	return answer.Status == http.StatusNotFound && json.Unmarshal(answer.Body, &body) == nil &&
		body.Error.Code == stripego.ErrorCodeResourceMissing
}

// cannotTell is the error for a look-up answered otherwise than expected.
func cannotTell(answer provider.Answer) error {
	var body struct {
		Error stripego.Error `json:"error"`
	}
	json.Unmarshal(answer.Body, &body)
	return fmt.Errorf("stripe: look-up answered %d %s %s, cannot tell", answer.Status, body.Error.Type, body.Error.Code)
}

// get reads path with query.
func (c *Client) get(ctx context.Context, path string, query url.Values) (provider.Answer, error) {
	target := strings.TrimSuffix(c.BaseURL, "/") + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	return c.Caller.Get(ctx, target, http.Header{"Authorization": {"Bearer " + c.APIKey}})
}

// post sends form to path with the idempotency key.
func (c *Client) post(ctx context.Context, path string, form url.Values, idempotencyKey string) (provider.Answer, error) {
	header := http.Header{"Authorization": {"Bearer " + c.APIKey}, "Content-Type": {"application/x-www-form-urlencoded"},
		"Idempotency-Key": {idempotencyKey}}
	return c.Caller.Post(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, []byte(form.Encode()))
}

// counting is how Stripe counts amounts: in ISO 4217's minor units but for the króna, which Stripe
// counts in hundredths (for backwards compatibility, it says), and the ariary, which it counts
// whole.
var counting = provider.Counting{Provider: "stripe", Scales: map[string]int{"ISK": 2, "MGA": 0}}

// Counting says how the provider counts amounts.
func (*Client) Counting() provider.Counting { return counting }
