package routing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/settings"
)

// named is a provider under another name, answering as its inner provider does, or with err.
type named struct {
	providertest.Memory
	name string
	err  error
}

func (n named) Name() string { return n.name }

func (n named) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	if n.err != nil {
		return provider.ChargeResult{}, n.err
	}
	return n.Memory.Charge(ctx, req)
}

func TestRouterFailsOverOnlyWhenNothingHappened(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	down := fmt.Errorf("%w (%w): answered 503", provider.ErrUnavailable, provider.ErrOutage)
	lost := errors.New("outcome unknown: timeout")
	for _, tc := range []struct {
		errs     [3]error
		attempts string
		charger  string
		err      error
	}{
		{[3]error{nil, nil, nil}, "[{stripe approved 0}]", "stripe", nil},
		{[3]error{down, nil, nil}, "[{stripe unavailable 0} {adyen approved 0}]", "adyen", nil},
		{[3]error{down, down, down}, "[{stripe unavailable 0} {adyen unavailable 0} {checkout unavailable 0}]", "checkout", down},
		{[3]error{lost, nil, nil}, "[{stripe unknown 0}]", "stripe", lost},
		{[3]error{down, lost, nil}, "[{stripe unavailable 0} {adyen unknown 0}]", "adyen", lost},
	} {
		r := NewRouter([]provider.Provider{named{name: "stripe", err: tc.errs[0]}, named{name: "adyen", err: tc.errs[1]},
			named{name: "checkout", err: tc.errs[2]}}, func() settings.Document { return settings.Default(providers, preferred) }, now)
		req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
		var switched []string
		plan := r.Plan(Payment{Amount: req.Amount})
		decision, charger, _, err := r.Charge(context.Background(), plan, req, func(name string) error {
			switched = append(switched, name)
			return nil
		})
		if fmt.Sprint(decision.Attempts) != tc.attempts || charger != tc.charger || !errors.Is(err, tc.err) || decision.Rule != nil {
			t.Errorf("%v: %+v via %s, %v", tc.errs, decision, charger, err)
		}
		if len(switched) != len(decision.Attempts)-1 {
			t.Errorf("%v: switched to %v for %d attempts", tc.errs, switched, len(decision.Attempts))
		}
	}
}

// TestRouterStopsWhenTheSwitchCannotBeRecorded: a payment whose move to the next provider cannot
// be written is not charged there.
func TestRouterStopsWhenTheSwitchCannotBeRecorded(t *testing.T) {
	down := fmt.Errorf("%w (%w): answered 503", provider.ErrUnavailable, provider.ErrOutage)
	r := NewRouter([]provider.Provider{named{name: "stripe", err: down}, named{name: "adyen"}, named{name: "checkout"}},
		func() settings.Document { return settings.Default(providers, preferred) }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	decision, _, result, err := r.Charge(context.Background(), r.Plan(Payment{Amount: req.Amount}), req, func(string) error {
		return errors.New("database gone")
	})
	if len(decision.Attempts) != 1 || result.Approved || !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("%+v, %+v, %v", decision, result, err)
	}
}

func TestRouterWithNoProviderLeft(t *testing.T) {
	c := settings.Default(providers, preferred)
	for name, s := range c.Providers {
		s.Enabled = false
		c.Providers[name] = s
	}
	r := NewRouter([]provider.Provider{named{name: "stripe"}, named{name: "adyen"}, named{name: "checkout"}}, func() settings.Document { return c }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "EUR"}}
	decision, charger, _, err := r.Charge(context.Background(), r.Plan(Payment{Amount: req.Amount}), req, nil)
	if len(decision.Attempts) != 0 || charger != "" || !errors.Is(err, ErrNoProvider) || *decision.Rule != "eur" {
		t.Errorf("%+v via %q, %v", decision, charger, err)
	}
}

// TestRouterRecordsEveryProviderButThePlannedFirst: a payment recorded under the plan's first
// provider is moved before any other is charged, even when the first is passed over unasked
// (its circuit opened, or it was switched off, since the plan was made).
func TestRouterRecordsEveryProviderButThePlannedFirst(t *testing.T) {
	c := settings.Default(providers, preferred)
	r := NewRouter([]provider.Provider{named{name: "stripe"}, named{name: "adyen"}, named{name: "checkout"}}, func() settings.Document { return c }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	for _, passOver := range map[string]func(){
		"circuit opened": func() {
			for range c.CircuitBreaker.MinRequests {
				r.breaker.Record("stripe", Pass{}, true, c.CircuitBreaker)
			}
		},
		"switched off": func() { c.Providers["stripe"] = settings.Provider{Enabled: false, TimeoutMS: 1000} },
	} {
		c = settings.Default(providers, preferred)
		r.breaker = NewBreaker(time.Now)
		plan := r.Plan(Payment{Amount: req.Amount})
		passOver()
		var switched []string
		decision, charger, _, err := r.Charge(context.Background(), plan, req, func(name string) error {
			switched = append(switched, name)
			return nil
		})
		if err != nil || charger != "adyen" || fmt.Sprint(switched) != "[adyen]" || fmt.Sprint(decision.Attempts) != "[{adyen approved 0}]" {
			t.Errorf("plan %v, first passed over: %+v via %s, switched %v, %v", plan.Providers, decision, charger, switched, err)
		}
	}
}

// TestRefusalsLeaveTheCircuitClosed: requests a provider refuses (a 4xx, a card it could not
// process) fail over but say nothing of its health; outages and unknown outcomes do.
func TestRefusalsLeaveTheCircuitClosed(t *testing.T) {
	refused := fmt.Errorf("%w: answered 402", provider.ErrUnavailable)
	stripe := &named{name: "stripe", err: refused}
	c := settings.Default(providers, preferred)
	r := NewRouter([]provider.Provider{stripe, named{name: "adyen"}, named{name: "checkout"}}, func() settings.Document { return c }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	for range 2 * c.CircuitBreaker.MinRequests {
		r.Charge(context.Background(), r.Plan(Payment{Amount: req.Amount}), req, func(string) error { return nil })
	}
	if state := r.breaker.State("stripe", c.CircuitBreaker); state != Closed {
		t.Errorf("after refusals the circuit is %s", state)
	}
	stripe.err = errors.New("outcome unknown: timeout")
	for range 2 * c.CircuitBreaker.MinRequests { // half the calls in the window now failed
		r.Charge(context.Background(), r.Plan(Payment{Amount: req.Amount}), req, func(string) error { return nil })
	}
	if state := r.breaker.State("stripe", c.CircuitBreaker); state != Open {
		t.Errorf("after unknown outcomes the circuit is %s", state)
	}
}

// TestRouterAsksNoOneWithoutTime: with under a second of the payment's time left, the next
// provider is not asked, so its outcome cannot be cut off unknown.
func TestRouterAsksNoOneWithoutTime(t *testing.T) {
	r := NewRouter([]provider.Provider{named{name: "stripe"}, named{name: "adyen"}, named{name: "checkout"}},
		func() settings.Document { return settings.Default(providers, preferred) }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	decision, _, _, err := r.Charge(ctx, r.Plan(Payment{Amount: req.Amount}), req, func(string) error { return nil })
	if len(decision.Attempts) != 0 || !errors.Is(err, ErrNoProvider) {
		t.Errorf("%+v, %v", decision, err)
	}
}

// TestFailoverNeedsTheProvidersTime: a provider after the first is asked only with its whole
// timeout_ms left, so it is never cut off mid-call with the outcome unknown.
func TestFailoverNeedsTheProvidersTime(t *testing.T) {
	down := fmt.Errorf("%w (%w): answered 503", provider.ErrUnavailable, provider.ErrOutage)
	c := settings.Default(providers, preferred)
	c.Providers["adyen"] = settings.Provider{Enabled: true, TimeoutMS: 5000}
	c.Providers["checkout"] = settings.Provider{Enabled: true, TimeoutMS: 1000}
	r := NewRouter([]provider.Provider{named{name: "stripe", err: down}, named{name: "adyen"}, named{name: "checkout"}},
		func() settings.Document { return c }, time.Now)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	decision, charger, _, err := r.Charge(ctx, r.Plan(Payment{Amount: req.Amount}), req, func(string) error { return nil })
	if err != nil || charger != "checkout" || fmt.Sprint(decision.Attempts) != "[{stripe unavailable 0} {checkout approved 0}]" {
		t.Errorf("with 3 s left, Adyen needing 5: %+v via %s, %v", decision, charger, err)
	}
}

// TestSwitchThatPanicsGivesTheProbeBack: a half-open probe taken for a provider whose switch
// panicked is given back, or the provider would never be tried again.
func TestSwitchThatPanicsGivesTheProbeBack(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	c := settings.Default(providers, preferred)
	r := NewRouter([]provider.Provider{named{name: "stripe"}, named{name: "adyen"}, named{name: "checkout"}}, func() settings.Document { return c },
		func() time.Time { return clock })
	for range c.CircuitBreaker.MinRequests {
		r.breaker.Record("adyen", Pass{}, true, c.CircuitBreaker)
	}
	clock = clock.Add(time.Duration(c.CircuitBreaker.OpenS) * time.Second) // half open
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	plan := Plan{Providers: []string{"stripe", "adyen"}}
	c.Providers["stripe"] = settings.Provider{Enabled: false, TimeoutMS: 1000} // passed over: adyen is switched to
	func() {
		defer func() { recover() }()
		r.Charge(context.Background(), plan, req, func(string) error { panic("database gone") })
	}()
	if _, ok := r.breaker.Allow("adyen", c.CircuitBreaker); !ok {
		t.Error("the probe taken before the switch panicked was kept")
	}
}
