// Package routing decides which provider each payment goes to: the first rule of the routing
// document (its routing section) that matches the payment (currency, card brand, amount range) picks the first attempt
// by weight; failover then tries that rule's other providers, then the fallback list, each
// provider once, skipping those disabled and those whose circuit is open.
package routing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
)

// Router sends each payment to a provider by the routing document in force, failing over to the
// next provider of its plan only when a provider said it did nothing, and keeps each provider's
// circuit; it tells Observe of every call, whose figures the metrics keep.
type Router struct {
	providers map[string]provider.Provider
	names     []string
	config    func() settings.Document
	breaker   *Breaker
	now       func() time.Time
	pick      func(n int) int
	// Observe, when set, is told of every call to a provider: a charge, with its outcome
	// (OutcomeApproved, OutcomeDeclined ...), or a refund or capture, with none ("").
	Observe func(provider, outcome string, err error, took time.Duration)
}

// NewRouter returns a router over providers that reads the document in force from config on
// every payment.
func NewRouter(providers []provider.Provider, config func() settings.Document, now func() time.Time) *Router {
	r := &Router{providers: map[string]provider.Provider{}, config: config, breaker: NewBreaker(now),
		now: now, pick: rand.IntN}
	for _, p := range providers {
		r.providers[p.Name()] = p
		r.names = append(r.names, p.Name())
	}
	return r
}

// Names lists the providers, in the order given.
func (r *Router) Names() []string { return slices.Clone(r.names) }

// Provider returns the provider called name, to refund a charge it made.
func (r *Router) Provider(name string) (provider.Provider, bool) {
	p, ok := r.providers[name]
	return p, ok
}

// Plan orders the providers for p by the document in force, leaving out those whose circuit is
// open and those that cannot be sent its amount (Adyen counts escudos whole: 10.50 CVE is not
// for it), which are not asked at all, so that their figures and circuits count only their calls.
func (r *Router) Plan(p Payment) Plan {
	c := r.config()
	var unsendable []string
	circuitOpen := false
	plan := PlanFor(c, p, r.pick, func(name string) bool {
		known, ok := r.providers[name]
		if !ok {
			return true
		}
		if r.breaker.IsOpen(name, c.CircuitBreaker) {
			circuitOpen = true
			return true
		}
		if err := provider.CheckAmount(known, p.Amount); err != nil {
			if !slices.Contains(unsendable, err.Error()) {
				unsendable = append(unsendable, err.Error())
			}
			return true
		}
		return false
	})
	if !circuitOpen { // a provider out for now might have taken the amount
		plan.Unsendable = unsendable
	}
	return plan
}

// ErrNoProvider means no provider of the plan could be asked: all are disabled, their circuits
// are open or they cannot be sent the amount. Nothing was charged.
var ErrNoProvider = fmt.Errorf("%w: no payment provider can take the payment now", provider.ErrUnavailable)

// minAttempt is the least time worth giving the first provider asked.
const minAttempt = time.Second

// timeFor reports whether enough of the payment's time is left to ask the provider: a second for
// the first asked, its whole timeout_ms for any after, so that a failover is not cut off
// mid-call with its outcome unknown. Not asked, it did nothing, and the payment may fail cleanly.
func (r *Router) timeFor(ctx context.Context, c settings.Document, name string, first bool) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		return true
	}
	need := time.Duration(c.Providers[name].TimeoutMS) * time.Millisecond
	if first {
		need = minAttempt
	}
	return time.Until(deadline) >= need
}

// switchTo records on the payment that its charge now goes to name, giving back the probe the
// call holds if that cannot be done, by error or panic.
func (r *Router) switchTo(name string, pass Pass, switching func(name string) error) (err error) {
	switched := false
	defer func() {
		if !switched {
			r.breaker.Release(name, pass)
		}
	}()
	if err := switching(name); err != nil {
		return err
	}
	switched = true
	return nil
}

// Charge asks the providers of plan in turn to charge req, moving on only while they answer that
// they did nothing (provider.ErrUnavailable). Before calling any provider but the plan's first it
// calls switching with that provider's name, so the payment records where its charge now goes;
// if switching fails the charge goes no further. Providers switched off or with an open circuit
// since the plan was made are passed over, as are those ctx has too little time left for. It
// returns the decision, the last provider asked and its answer; when none could be asked the
// error is ErrNoProvider.
func (r *Router) Charge(ctx context.Context, plan Plan, req provider.ChargeRequest, switching func(name string) error) (state.RoutingDecision, string, provider.ChargeResult, error) {
	decision := state.RoutingDecision{Attempts: []state.RoutingAttempt{}}
	if plan.Rule != "" {
		decision.Rule = &plan.Rule
	}
	c := r.config()
	lastErr := ErrNoProvider
	recorded := ""
	if len(plan.Providers) > 0 {
		recorded = plan.Providers[0]
	}
	last := ""
	for _, name := range plan.Providers {
		if !c.Providers[name].Enabled || !r.timeFor(ctx, c, name, len(decision.Attempts) == 0) {
			continue
		}
		pass, allowed := r.breaker.Allow(name, c.CircuitBreaker)
		if !allowed {
			continue
		}
		if name != recorded {
			if err := r.switchTo(name, pass, switching); err != nil {
				return decision, last, provider.ChargeResult{}, errors.Join(lastErr, err)
			}
			recorded = name
		}
		result, err, latency := r.call(ctx, name, c, pass, req)
		last = name
		outcome := outcomeOf(result, err)
		decision.Attempts = append(decision.Attempts, state.RoutingAttempt{Provider: name, Outcome: outcome, LatencyMS: latency.Milliseconds()})
		if outcome != OutcomeUnavailable {
			return decision, name, result, err
		}
		lastErr = err
	}
	return decision, last, provider.ChargeResult{}, lastErr
}

// call asks one provider within its time limit, and counts the answer: an outage or an unknown
// outcome against its circuit.
func (r *Router) call(ctx context.Context, name string, c settings.Document, pass Pass, req provider.ChargeRequest) (provider.ChargeResult, error, time.Duration) {
	counted := false
	defer func() {
		if !counted {
			r.breaker.Release(name, pass) // the call panicked: its probe must not be held for ever
		}
	}()
	timeout := time.Duration(c.Providers[name].TimeoutMS) * time.Millisecond
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := r.now()
	result, err := r.providers[name].Charge(callCtx, req)
	latency := r.now().Sub(start)
	failed := errors.Is(err, provider.ErrOutage) || err != nil && !errors.Is(err, provider.ErrUnavailable)
	r.breaker.Record(name, pass, failed, c.CircuitBreaker)
	counted = true
	r.observe(name, outcomeOf(result, err), err, latency)
	return result, err, latency
}

func (r *Router) observe(name, outcome string, err error, latency time.Duration) {
	if r.Observe != nil {
		r.Observe(name, outcome, err, latency)
	}
}

// ErrorRate is the share of this server's calls to the provider that failed within the circuit
// breaker's window, and whether there were enough calls (the breaker's minimum) to tell.
func (r *Router) ErrorRate(name string) (rate float64, enough bool) {
	breaker := r.config().CircuitBreaker
	calls, failing := r.breaker.Window(name, breaker)
	if calls == 0 || calls < breaker.MinRequests {
		return 0, false
	}
	return float64(failing) / float64(calls), true
}

// Enabled reports whether the document in force lets the provider be tried.
func (r *Router) Enabled(name string) bool { return r.config().Providers[name].Enabled }

// Circuit is this server's circuit to the provider: Closed, Open or HalfOpen.
func (r *Router) Circuit(name string) string { return r.breaker.State(name, r.config().CircuitBreaker) }

// CircuitOpen reports whether this server's circuit to the provider is open (or half open, a
// probe deciding whether to close it).
func (r *Router) CircuitOpen(name string) bool {
	return r.Circuit(name) != Closed
}

// ObserveRefund counts a refund sent to a provider in its figures. It leaves the circuit alone:
// a refund refused for its amount says nothing of the provider's health.
func (r *Router) ObserveRefund(name string, err error, latency time.Duration) {
	r.observe(name, "", err, latency)
}

func outcomeOf(result provider.ChargeResult, err error) string {
	switch {
	case errors.Is(err, provider.ErrUnavailable):
		return OutcomeUnavailable
	case err != nil:
		return OutcomeUnknown
	case result.Approved:
		return OutcomeApproved
	case result.AwaitsShopper():
		return OutcomeAuthentication
	}
	return OutcomeDeclined
}
