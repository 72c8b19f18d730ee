package providertest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Memory is a provider that answers from memory by the test cards, at once or after Latency, for
// tests of what calls providers; every other valid card is approved.
type Memory struct {
	// Latency is how long each call takes, as a real provider's round trip would: load and
	// concurrency tests use it to keep requests in flight together.
	Latency time.Duration
}

func (s Memory) wait(ctx context.Context) error {
	if s.Latency > 0 {
		select {
		case <-time.After(s.Latency):
		case <-ctx.Done():
		}
	}
	// A call cut off by its deadline may have gone through at a real provider: its outcome is
	// unknown, which is not provider.ErrUnavailable ("nothing happened").
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("call cut off, outcome unknown: %w", err)
	}
	return nil
}

// memoryOutcomes maps the test card numbers to their outcome: a decline code, or "error" for a
// provider failure.
var memoryOutcomes = map[string]string{
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

// Name identifies the provider on payments.
func (Memory) Name() string { return "memory" }

// Charge decides the outcome from the card number, as the providers' test modes do.
func (s Memory) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	if err := s.wait(ctx); err != nil {
		return provider.ChargeResult{}, err
	}
	if provider.AsksAuthentication(req.Card.Number()) && req.ReturnURL == "" {
		return provider.ChargeResult{ProviderPaymentID: prefixid.New("sbx_ch"), DeclineCode: "card_declined",
			RawDeclineCode: "authentication_required", DeclineMessage: "The card needs authentication, and the shopper has no page to come back to."}, nil
	}
	if provider.AsksAuthentication(req.Card.Number()) {
		// The charge's id says what the shopper will have done: Memory keeps no state.
		id := memoryAuthenticates + prefixid.New("ch")
		if req.Card.Number() == provider.AuthenticateThenDecline {
			id = memoryAuthenticationDeclines + prefixid.New("ch")
		}
		return provider.ChargeResult{ProviderPaymentID: id, RedirectURL: "https://memory.invalid/challenge/" + id}, nil
	}
	outcome := memoryOutcomes[req.Card.Number()]
	switch outcome {
	case "":
		return provider.ChargeResult{ProviderPaymentID: prefixid.New("sbx_ch"), Approved: true}, nil
	case "error":
		return provider.ChargeResult{}, fmt.Errorf("%w: processing error", provider.ErrUnavailable)
	default:
		return provider.ChargeResult{
			ProviderPaymentID: prefixid.New("sbx_ch"),
			DeclineCode:       outcome,
			DeclineMessage:    declineMessages[outcome],
		}, nil
	}
}

// The prefixes of the ids of charges that wait for the shopper: approved, or declined, once the
// shopper is back.
const (
	memoryAuthenticates          = "sbx_3ds_"
	memoryAuthenticationDeclines = "sbx_3ds_declined_"
)

// Authenticated answers a charge that waited for the shopper as if the shopper had completed the
// authentication: approved, or declined for the card declined after it.
func (s Memory) Authenticated(ctx context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	if err := s.wait(ctx); err != nil {
		return provider.ChargeResult{}, err
	}
	switch {
	case strings.HasPrefix(req.ProviderPaymentID, memoryAuthenticationDeclines):
		return provider.ChargeResult{ProviderPaymentID: req.ProviderPaymentID, DeclineCode: "card_declined", DeclineMessage: declineMessages["card_declined"]}, nil
	case strings.HasPrefix(req.ProviderPaymentID, memoryAuthenticates):
		return provider.ChargeResult{ProviderPaymentID: req.ProviderPaymentID, Approved: true}, nil
	}
	return provider.ChargeResult{}, fmt.Errorf("no charge %q waits for the shopper", req.ProviderPaymentID)
}

// Refund accepts every refund of a sandbox charge, as test modes do.
func (s Memory) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	if err := s.wait(ctx); err != nil {
		return provider.RefundResult{}, err
	}
	return provider.RefundResult{ProviderRefundID: prefixid.New("sbx_re")}, nil
}

// Capture captures every authorisation at once, as test modes do.
func (s Memory) Capture(ctx context.Context, req provider.CaptureRequest) (provider.CaptureResult, error) {
	return provider.CaptureResult{}, s.wait(ctx)
}

// Cancel voids every authorisation at once, as test modes do.
func (s Memory) Cancel(ctx context.Context, req provider.CancelRequest) (provider.CancelResult, error) {
	return provider.CancelResult{}, s.wait(ctx)
}
