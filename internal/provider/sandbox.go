package provider

import (
	"context"
	"fmt"

	"github.com/paygate/paygate/internal/prefixid"
)

// Sandbox is the built-in test-mode provider. It honours the big providers' test cards; every
// other valid card is approved.
type Sandbox struct{}

// sandboxOutcomes maps the test card numbers to their outcome: a decline code, or "error" for a
// provider failure.
var sandboxOutcomes = map[string]string{
	"4000000000000002": "card_declined",
	"4000000000009995": "insufficient_funds",
	"4000000000000069": "expired_card",
	"4000000000000119": "error",
}

var declineMessages = map[string]string{
	"card_declined":      "The card was declined.",
	"insufficient_funds": "The card has insufficient funds to complete the purchase.",
	"expired_card":       "The card has expired.",
}

// Name identifies the sandbox on payments.
func (Sandbox) Name() string { return "sandbox" }

// Charge decides the outcome from the card number, as the providers' test modes do.
func (Sandbox) Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error) {
	if err := ctx.Err(); err != nil {
		return ChargeResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	outcome := sandboxOutcomes[req.Card.Number()]
	switch outcome {
	case "":
		return ChargeResult{ProviderPaymentID: prefixid.New("sbx_ch"), Approved: true}, nil
	case "error":
		return ChargeResult{}, fmt.Errorf("%w: sandbox processing error", ErrUnavailable)
	default:
		return ChargeResult{
			ProviderPaymentID: prefixid.New("sbx_ch"),
			DeclineCode:       outcome,
			DeclineMessage:    declineMessages[outcome],
		}, nil
	}
}

// Refund accepts every refund of a sandbox charge, as test modes do.
func (Sandbox) Refund(ctx context.Context, req RefundRequest) (RefundResult, error) {
	if err := ctx.Err(); err != nil {
		return RefundResult{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return RefundResult{ProviderRefundID: prefixid.New("sbx_re")}, nil
}
