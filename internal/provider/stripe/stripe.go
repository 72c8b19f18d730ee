// Package stripe is the Stripe adapter: it charges cards through PaymentIntents and refunds them
// over Stripe's HTTP API (form-encoded requests, JSON answers, read with stripe-go's wire types),
// and holds a sandbox that answers as Stripe's test mode does.
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

var _ provider.Provider = (*Client)(nil)

// Name identifies Stripe on payments.
func (*Client) Name() string { return Name }

// Charge creates and confirms a PaymentIntent for the card. A decline is a result; Stripe's
// processing_error, a refused request, a 5xx or a refused connection is provider.ErrUnavailable
// (nothing was charged); a timeout or an answer that cannot be read leaves the outcome unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	form := url.Values{
		"amount":                               {strconv.FormatInt(req.Amount.Minor, 10)},
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
	status, body, err := c.post(ctx, "/v1/payment_intents", form, req.PaymentID)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if status == http.StatusPaymentRequired {
		return declined(body)
	}
	if err := refused(status, body); err != nil {
		return provider.ChargeResult{}, err
	}
	var intent stripego.PaymentIntent
	if err := json.Unmarshal(body, &intent); err != nil || intent.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("stripe: unreadable payment intent (%d bytes)", len(body))
	}
	if intent.Status != stripego.PaymentIntentStatusSucceeded {
		// Anything else (requires_action for 3-D Secure, above all) cannot complete here.
		return provider.ChargeResult{ProviderPaymentID: intent.ID, DeclineCode: "card_declined", RawDeclineCode: string(intent.Status),
			DeclineMessage: "The card needs a step Paygate cannot take (" + string(intent.Status) + ")."}, nil
	}
	return provider.ChargeResult{ProviderPaymentID: intent.ID, Approved: true}, nil
}

// declined reads a 402 card_error into a decline, or an outage for processing_error.
func declined(body []byte) (provider.ChargeResult, error) {
	var answer struct {
		Error stripego.Error `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.Error.Type != stripego.ErrorTypeCard {
		return provider.ChargeResult{}, fmt.Errorf("stripe: unreadable card error (%d bytes)", len(body))
	}
	e := answer.Error
	if e.Code == stripego.ErrorCodeProcessingError {
		return provider.ChargeResult{}, fmt.Errorf("%w: stripe processing_error", provider.ErrUnavailable)
	}
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
	if e.PaymentIntent != nil {
		result.ProviderPaymentID = e.PaymentIntent.ID
	}
	return result, nil
}

// refused turns an answer other than a success into an error: Stripe did nothing for a 4xx, and
// a 5xx is an outage to fail over from.
func refused(status int, body []byte) error {
	if status >= 200 && status < 300 {
		return nil
	}
	var answer struct {
		Error stripego.Error `json:"error"`
	}
	json.Unmarshal(body, &answer)
	return fmt.Errorf("%w: stripe answered %d %s %s", provider.ErrUnavailable, status, answer.Error.Type, answer.Error.Code)
}

// Refund refunds part or all of a PaymentIntent. Stripe answers a card refund at once.
func (c *Client) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	form := url.Values{
		"payment_intent":       {req.ProviderPaymentID},
		"amount":               {strconv.FormatInt(req.Amount.Minor, 10)},
		"metadata[paygate_id]": {req.RefundID},
	}
	status, body, err := c.post(ctx, "/v1/refunds", form, req.RefundID)
	if err != nil {
		return provider.RefundResult{}, err
	}
	if err := refused(status, body); err != nil {
		return provider.RefundResult{}, err
	}
	var refund stripego.Refund
	if err := json.Unmarshal(body, &refund); err != nil || refund.ID == "" {
		return provider.RefundResult{}, fmt.Errorf("stripe: unreadable refund (%d bytes)", len(body))
	}
	if refund.Status == stripego.RefundStatusFailed || refund.Status == stripego.RefundStatusCanceled {
		return provider.RefundResult{}, fmt.Errorf("%w: stripe refund %s is %s", provider.ErrUnavailable, refund.ID, refund.Status)
	}
	return provider.RefundResult{ProviderRefundID: refund.ID}, nil
}

// post sends form to path with the idempotency key.
func (c *Client) post(ctx context.Context, path string, form url.Values, idempotencyKey string) (int, []byte, error) {
	header := http.Header{"Authorization": {"Bearer " + c.APIKey}, "Content-Type": {"application/x-www-form-urlencoded"},
		"Idempotency-Key": {idempotencyKey}}
	return c.Caller.Post(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, []byte(form.Encode()))
}
