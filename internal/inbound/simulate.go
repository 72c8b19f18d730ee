package inbound

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Simulator makes a provider's sandbox bring about an event for a payment, as happens at a
// provider outside Paygate (a refund in its dashboard, a dispute, a late failure); the sandbox's
// signed webhook then comes through /webhooks/{provider} and is processed like any other.
type Simulator struct {
	Client *ent.Client
	// Providers are the providers' names, for the message that lists them.
	Providers []string
	// Simulations are the providers' own names for the events their sandboxes can send, by
	// provider.
	Simulations map[string]map[string]provider.Simulation
	// Sandboxes are the providers served by their built-in sandboxes; only they can simulate.
	Sandboxes map[string]provider.Sandbox
}

// SimulateInput names the payment and the event: a provider's own event type (Stripe's
// charge.refunded, Adyen's REFUND, Checkout.com's payment_refunded, ...) or refund, dispute,
// late_failure. Provider defaults to the payment's.
type SimulateInput struct {
	Provider, PaymentID, Type string
}

// MaxSimulationType bounds the type of an event to simulate, in characters: the providers' own
// types are at most about 30.
const MaxSimulationType = 64

// Simulated is the event a sandbox was made to send.
type Simulated struct {
	Provider, PaymentID, Type string
}

// Simulate makes the payment's provider's sandbox send the event in.
func (s *Simulator) Simulate(ctx context.Context, in SimulateInput) (Simulated, error) {
	if err := auth.Authorize(ctx, auth.SimulateEvent); err != nil {
		return Simulated{}, err
	}
	if in.Provider != "" && !slices.Contains(s.Providers, in.Provider) {
		return Simulated{}, apierror.ForParam(apierror.InvalidRequest, "provider", "provider must be one of "+strings.Join(s.Providers, ", "))
	}
	if in.PaymentID == "" {
		return Simulated{}, apierror.ForParam(apierror.MissingField, "payment_id", "payment_id is required")
	}
	if utf8.RuneCountInString(in.PaymentID) > prefixid.MaxLength {
		return Simulated{}, apierror.ForParam(apierror.InvalidRequest, "payment_id", fmt.Sprintf("payment_id is longer than any id (%d characters)", prefixid.MaxLength))
	}
	if utf8.RuneCountInString(in.Type) > MaxSimulationType {
		return Simulated{}, apierror.ForParam(apierror.InvalidRequest, "type", fmt.Sprintf("type is longer than any event's (%d characters)", MaxSimulationType))
	}
	notFound := apierror.ForParam(apierror.NotFound, "payment_id", "no payment has the id "+in.PaymentID)
	if !storableText(in.PaymentID, prefixid.MaxLength) {
		return Simulated{}, notFound // no payment has it, and PostgreSQL would refuse to look
	}
	p, err := s.Client.Payment.Get(ctx, in.PaymentID)
	if ent.IsNotFound(err) {
		return Simulated{}, notFound
	}
	if err != nil {
		return Simulated{}, err
	}
	if in.Provider == "" {
		in.Provider = p.Provider
	}
	if in.Provider != p.Provider {
		return Simulated{}, apierror.ForParam(apierror.InvalidRequest, "provider",
			fmt.Sprintf("payment %s was charged through %q, so only %q can send events about it", p.ID, p.Provider, p.Provider))
	}
	kind, known := s.Simulations[in.Provider][in.Type]
	if generic := provider.Simulation(in.Type); !known && slices.Contains([]provider.Simulation{provider.SimulateRefund, provider.SimulateDispute, provider.SimulateLateFailure}, generic) {
		kind, known = generic, true
	}
	if !known {
		types := []string{string(provider.SimulateRefund), string(provider.SimulateDispute), string(provider.SimulateLateFailure)}
		for name := range s.Simulations[in.Provider] {
			types = append(types, name)
		}
		slices.Sort(types)
		return Simulated{}, apierror.ForParam(apierror.InvalidRequest, "type",
			fmt.Sprintf("type must be one of %s for %s", strings.Join(types, ", "), in.Provider))
	}
	sandbox, ok := s.Sandboxes[in.Provider]
	if !ok {
		return Simulated{}, apierror.New(apierror.InvalidState,
			in.Provider+" is reached at its real API: events can be simulated only through its built-in sandbox")
	}
	if err := sandbox.Simulate(ctx, kind, p.ID); errors.Is(err, provider.ErrCannotSimulate) {
		return Simulated{}, apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s is %s: the %s sandbox cannot send %s for it", p.ID, p.Status, in.Provider, in.Type))
	} else if err != nil {
		return Simulated{}, err
	}
	return Simulated{Provider: in.Provider, PaymentID: p.ID, Type: in.Type}, nil
}
