// Package checkout is the Checkout.com adapter: it charges cards through the Payments API and
// refunds them (JSON requests and answers), and holds a sandbox that answers as Checkout.com's
// sandbox does.
package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

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

// statusCaptured is the status of a payment approved and captured at once.
const statusCaptured = "Captured"

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
}

type paymentRequest struct {
	Source      source `json:"source"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Reference   string `json:"reference"`
	Capture     bool   `json:"capture"`
	Description string `json:"description,omitempty"`
}

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
}

type refundRequest struct {
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

type refundAnswer struct {
	ActionID  string `json:"action_id"`
	Reference string `json:"reference"`
}

// Charge requests and captures a card payment. A decline is a result (Checkout.com answers it
// 201 with approved false). An answer by which Checkout.com did nothing (a 4xx, a 503) or a
// refused connection is provider.ErrUnavailable; a payment still pending, an idempotency
// conflict, another 5xx, a timeout or an answer that cannot be read leaves the outcome unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	answer, err := c.post(ctx, "/payments", req.PaymentID, paymentRequest{
		Source: source{Type: "card", Number: req.Card.Number(), ExpiryMonth: req.Card.ExpMonth, ExpiryYear: req.Card.ExpYear, CVV: req.Card.CVC()},
		Amount: req.Amount.Minor, Currency: req.Amount.Currency, Reference: req.PaymentID, Capture: true, Description: req.Description,
	})
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusCreated {
		return provider.ChargeResult{}, unsuccessful(answer)
	}
	var payment paymentAnswer
	if err := json.Unmarshal(answer.Body, &payment); err != nil || payment.ID == "" {
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: unreadable payment (%d bytes)", len(answer.Body))
	}
	switch {
	case payment.Approved:
		return provider.ChargeResult{ProviderPaymentID: payment.ID, Approved: true}, nil
	case payment.Status != "Declined":
		return provider.ChargeResult{}, fmt.Errorf("checkout.com: payment %s is %s, outcome unknown", payment.ID, payment.Status)
	}
	result := provider.ChargeResult{ProviderPaymentID: payment.ID, DeclineCode: "card_declined", RawDeclineCode: payment.ResponseCode,
		DeclineMessage: payment.ResponseSummary}
	switch payment.ResponseCode {
	case codeInsufficientFunds:
		result.DeclineCode = "insufficient_funds"
	case codeExpiredCard:
		result.DeclineCode = "expired_card"
	}
	return result, nil
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
	answer, err := c.post(ctx, "/payments/"+req.ProviderPaymentID+"/refunds", req.RefundID,
		refundRequest{Amount: req.Amount.Minor, Reference: req.RefundID})
	if err != nil {
		return provider.RefundResult{}, err
	}
	if answer.Status != http.StatusAccepted {
		return provider.RefundResult{}, unsuccessful(answer)
	}
	var refund refundAnswer
	if err := json.Unmarshal(answer.Body, &refund); err != nil || refund.ActionID == "" {
		return provider.RefundResult{}, fmt.Errorf("checkout.com: unreadable refund (%d bytes)", len(answer.Body))
	}
	return provider.RefundResult{ProviderRefundID: refund.ActionID, Pending: true}, nil
}

// post sends body as JSON to path with the idempotency key.
func (c *Client) post(ctx context.Context, path, idempotencyKey string, body any) (provider.Answer, error) {
	header := http.Header{"Authorization": {"Bearer " + c.SecretKey}, "Cko-Idempotency-Key": {idempotencyKey}}
	return c.Caller.PostJSON(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, body)
}
