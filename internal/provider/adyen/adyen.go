// Package adyen is the Adyen adapter: it charges cards through Checkout API v71's /payments and
// refunds them (JSON requests and answers), and holds a sandbox that answers as Adyen's test
// environment does.
package adyen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/provider"
)

// Name is the provider's name on payments and in routing.
const Name = "adyen"

// Result codes and refusal reason codes of Adyen's that Paygate tells apart.
const (
	resultAuthorised       = "Authorised"
	resultRefused          = "Refused"
	resultError            = "Error"
	errorInProgress        = "704" // the key's first request is in progress or done
	reasonExpiredCard      = "6"
	reasonNotEnoughBalance = "12"
)

// Client speaks to Adyen's Checkout API at BaseURL for one merchant account.
type Client struct {
	BaseURL         string
	APIKey          string
	MerchantAccount string
	provider.Caller
}

var _ provider.Provider = (*Client)(nil)

// Name identifies Adyen on payments.
func (*Client) Name() string { return Name }

// counting is how Adyen counts amounts: in ISO 4217's minor units but for four currencies, which
// its currency table marks as differing from the standard.
var counting = provider.Counting{Provider: "adyen", Scales: map[string]int{"CLP": 2, "CVE": 0, "IDR": 0, "ISK": 2}}

// Counting says how the provider counts amounts.
func (*Client) Counting() provider.Counting { return counting }

// adyenError is Adyen's answer to a request it refuses.
type adyenError struct {
	Status    int    `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	ErrorType string `json:"errorType"`
}

type amount struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}

type paymentMethod struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth string `json:"expiryMonth"`
	ExpiryYear  string `json:"expiryYear"`
	CVC         string `json:"cvc"`
	HolderName  string `json:"holderName,omitempty"`
}

type paymentRequest struct {
	Amount          amount        `json:"amount"`
	Reference       string        `json:"reference"`
	MerchantAccount string        `json:"merchantAccount"`
	PaymentMethod   paymentMethod `json:"paymentMethod"`
}

type paymentAnswer struct {
	PSPReference      string `json:"pspReference"`
	ResultCode        string `json:"resultCode"`
	RefusalReason     string `json:"refusalReason,omitempty"`
	RefusalReasonCode string `json:"refusalReasonCode,omitempty"`
	MerchantReference string `json:"merchantReference"`
	Amount            amount `json:"amount"`
}

type refundRequest struct {
	Amount          amount `json:"amount"`
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

type refundAnswer struct {
	MerchantAccount     string `json:"merchantAccount"`
	PaymentPSPReference string `json:"paymentPspReference"`
	PSPReference        string `json:"pspReference"`
	Reference           string `json:"reference"`
	Status              string `json:"status"`
	Amount              amount `json:"amount"`
}

// Charge makes a card payment. A refusal is a result. An answer by which Adyen did nothing
// (resultCode Error, a 4xx, a 503) or a refused connection is provider.ErrUnavailable; a payment
// Adyen will settle later (Pending, Received), a request still in progress, another 5xx, a
// timeout or an answer that cannot be read leaves the outcome unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	value, err := counting.Units(req.Amount)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	answer, err := c.post(ctx, "/v71/payments", req.PaymentID, paymentRequest{
		Amount: amount{Value: value, Currency: req.Amount.Currency}, Reference: req.PaymentID, MerchantAccount: c.MerchantAccount,
		PaymentMethod: paymentMethod{Type: "scheme", Number: req.Card.Number(), ExpiryMonth: fmt.Sprintf("%02d", req.Card.ExpMonth),
			ExpiryYear: strconv.Itoa(req.Card.ExpYear), CVC: req.Card.CVC(), HolderName: req.HolderName},
	})
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, unsuccessful(answer)
	}
	var payment paymentAnswer
	if err := json.Unmarshal(answer.Body, &payment); err != nil || payment.PSPReference == "" {
		return provider.ChargeResult{}, fmt.Errorf("adyen: unreadable payment (%d bytes)", len(answer.Body))
	}
	switch payment.ResultCode {
	case resultAuthorised:
		return provider.ChargeResult{ProviderPaymentID: payment.PSPReference, Approved: true}, nil
	case resultRefused:
		result := provider.ChargeResult{ProviderPaymentID: payment.PSPReference, DeclineCode: "card_declined",
			RawDeclineCode: payment.RefusalReasonCode, DeclineMessage: payment.RefusalReason}
		switch payment.RefusalReasonCode {
		case reasonNotEnoughBalance:
			result.DeclineCode = "insufficient_funds"
		case reasonExpiredCard:
			result.DeclineCode = "expired_card"
		}
		return result, nil
	case resultError:
		return provider.ChargeResult{}, answer.Failed("adyen (resultCode Error: " + payment.RefusalReason + ")")
	default: // Pending, Received: settled later by notification; anything else Paygate cannot complete
		return provider.ChargeResult{}, fmt.Errorf("adyen: payment %s is %s, outcome unknown", payment.PSPReference, payment.ResultCode)
	}
}

// unsuccessful is the error an answer other than the one expected means: the outcome in doubt
// for a request still in progress (422 with errorCode 704) or a 5xx but 503; else a refusal by
// which Adyen did nothing.
func unsuccessful(answer provider.Answer) error {
	var refusal adyenError
	json.Unmarshal(answer.Body, &refusal)
	if answer.Indeterminate() || refusal.ErrorCode == errorInProgress {
		return fmt.Errorf("adyen: outcome unknown: answered %d %s", answer.Status, refusal.ErrorCode)
	}
	return answer.Refused("adyen (" + refusal.ErrorCode + ")")
}

// Refund asks for part or all of a payment back. Adyen takes it ("received") and says later, by
// a REFUND or REFUND_FAILED notification, whether it went through.
func (c *Client) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	value, err := counting.Units(req.Amount)
	if err != nil {
		return provider.RefundResult{}, err
	}
	answer, err := c.post(ctx, "/v71/payments/"+req.ProviderPaymentID+"/refunds", req.RefundID, refundRequest{
		Amount: amount{Value: value, Currency: req.Amount.Currency}, MerchantAccount: c.MerchantAccount, Reference: req.RefundID,
	})
	if err != nil {
		return provider.RefundResult{}, err
	}
	if answer.Status != http.StatusCreated {
		return provider.RefundResult{}, unsuccessful(answer)
	}
	var refund refundAnswer
	if err := json.Unmarshal(answer.Body, &refund); err != nil || refund.PSPReference == "" || refund.Status != "received" {
		return provider.RefundResult{}, fmt.Errorf("adyen: unreadable refund (%d bytes)", len(answer.Body))
	}
	return provider.RefundResult{ProviderRefundID: refund.PSPReference, Pending: true}, nil
}

// post sends body as JSON to path with the idempotency key.
func (c *Client) post(ctx context.Context, path, idempotencyKey string, body any) (provider.Answer, error) {
	header := http.Header{"X-Api-Key": {c.APIKey}, "Idempotency-Key": {idempotencyKey}}
	return c.Caller.PostJSON(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, body)
}
