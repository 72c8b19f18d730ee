package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/prefixid"
)

// Sandbox is the built-in test-mode provider. It honours the big providers' test cards; every
// other valid card is approved.
type Sandbox struct {
	// Latency is how long each call takes, as a real provider's round trip would: load and
	// concurrency tests use it to keep requests in flight together.
	Latency time.Duration
}

func (s Sandbox) wait(ctx context.Context) error {
	if s.Latency > 0 {
		select {
		case <-time.After(s.Latency):
		case <-ctx.Done():
		}
	}
	// A call cut off by its deadline may have gone through at a real provider: its outcome is
	// unknown, which is not ErrUnavailable ("nothing happened").
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sandbox call cut off, outcome unknown: %w", err)
	}
	return nil
}

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
func (s Sandbox) Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error) {
	if err := s.wait(ctx); err != nil {
		return ChargeResult{}, err
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
func (s Sandbox) Refund(ctx context.Context, req RefundRequest) (RefundResult, error) {
	if err := s.wait(ctx); err != nil {
		return RefundResult{}, err
	}
	return RefundResult{ProviderRefundID: prefixid.New("sbx_re")}, nil
}
