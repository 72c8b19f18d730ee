package routing

import (
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/settings"
)

var providers = []string{"stripe", "adyen", "checkout"}

// preferred are the currencies Paygate's providers take first: euros Adyen, pounds Checkout.com.
var preferred = map[string][]string{"adyen": {"EUR"}, "checkout": {"GBP"}}

func never(string) bool { return false }

func first(int) int { return 0 }

func TestDefaultPlans(t *testing.T) {
	c := settings.Default(providers, preferred)
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		currency, rule string
		want           []string
	}{
		{"EUR", "eur", []string{"adyen", "stripe", "checkout"}},
		{"gbp", "gbp", []string{"checkout", "stripe", "adyen"}},
		{"USD", "", []string{"stripe", "adyen", "checkout"}},
	} {
		plan := PlanFor(c, Payment{Amount: money.Amount{Minor: 1000, Currency: tc.currency}, Brand: "visa"}, first, never)
		if plan.Rule != tc.rule || !slices.Equal(plan.Providers, tc.want) {
			t.Errorf("%s: %+v, want rule %q %v", tc.currency, plan, tc.rule, tc.want)
		}
	}
}

func decimal(text string) *money.Decimal {
	d := money.Decimal(text)
	return &d
}

func TestRulesMatchEveryCondition(t *testing.T) {
	c := settings.Default(providers, preferred)
	c.Routing.Rules = []settings.Rule{
		{Name: "big-eu-visa", Currency: []string{"EUR"}, Brand: []string{"visa"}, AmountGTE: decimal("100.00"), AmountLTE: decimal("5000"),
			Providers: []settings.Weighted{{Provider: "checkout", Weight: 1}}},
		{Name: "yen", Currency: []string{"JPY"}, AmountLTE: decimal("1000"), Providers: []settings.Weighted{{Provider: "adyen", Weight: 1}}},
		{Name: "one-shop", Merchants: []string{"mer_shop"}, Providers: []settings.Weighted{{Provider: "stripe", Weight: 1}}},
	}
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amount   money.Amount
		brand    string
		rule     string
		merchant string
	}{
		{money.Amount{Minor: 100, Currency: "USD"}, "visa", "one-shop", "mer_shop"},
		{money.Amount{Minor: 100, Currency: "USD"}, "visa", "", "mer_other"},
		{money.Amount{Minor: 10000, Currency: "EUR"}, "visa", "big-eu-visa", "mer_shop"}, // the first rule that matches
		{money.Amount{Minor: 10000, Currency: "EUR"}, "visa", "big-eu-visa", ""},         // 100.00: the lower bound holds
		{money.Amount{Minor: 500000, Currency: "EUR"}, "VISA", "big-eu-visa", ""},        // 5000.00: the upper bound holds
		{money.Amount{Minor: 9999, Currency: "EUR"}, "visa", "", ""},
		{money.Amount{Minor: 500001, Currency: "EUR"}, "visa", "", ""},
		{money.Amount{Minor: 10000, Currency: "EUR"}, "mastercard", "", ""},
		{money.Amount{Minor: 1000, Currency: "JPY"}, "visa", "yen", ""}, // 1000 yen, no minor unit
		{money.Amount{Minor: 1001, Currency: "JPY"}, "visa", "", ""},
	} {
		if plan := PlanFor(c, Payment{Amount: tc.amount, Brand: tc.brand, Merchant: tc.merchant}, first, never); plan.Rule != tc.rule {
			t.Errorf("%v %s of %q: rule %q, want %q", tc.amount, tc.brand, tc.merchant, plan.Rule, tc.rule)
		}
	}
	c.Routing.Rules[2].Merchants = []string{"shop"}
	if err := c.Validate(providers); err == nil {
		t.Error("a rule naming a merchant by no merchant's id was taken")
	}
}

// TestWeightsShareTheFirstAttempts: over every draw, each provider of a rule comes first in
// proportion to its weight; the others follow by weight, then the fallback.
func TestWeightsShareTheFirstAttempts(t *testing.T) {
	c := settings.Default(providers, preferred)
	c.Routing.Rules = []settings.Rule{{Name: "eu", Currency: []string{"EUR"},
		Providers: []settings.Weighted{{Provider: "adyen", Weight: 80}, {Provider: "stripe", Weight: 20}}}}
	firsts := map[string]int{}
	for n := range 100 {
		plan := PlanFor(c, Payment{Amount: money.Amount{Minor: 100, Currency: "EUR"}}, func(total int) int { return n % total }, never)
		firsts[plan.Providers[0]]++
		if len(plan.Providers) != 3 || plan.Providers[2] != "checkout" {
			t.Fatalf("draw %d: %v", n, plan.Providers)
		}
	}
	if firsts["adyen"] != 80 || firsts["stripe"] != 20 {
		t.Errorf("first attempts %v, want adyen 80 and stripe 20", firsts)
	}
}

func TestDisabledAndOpenProvidersAreSkipped(t *testing.T) {
	c := settings.Default(providers, preferred)
	c.Providers["adyen"] = settings.Provider{Enabled: false, TimeoutMS: 1000}
	plan := PlanFor(c, Payment{Amount: money.Amount{Minor: 100, Currency: "EUR"}}, first, func(p string) bool { return p == "stripe" })
	if plan.Rule != "eur" || !slices.Equal(plan.Providers, []string{"checkout"}) {
		t.Errorf("plan = %+v, want the eur rule with only checkout left", plan)
	}
	delete(c.Providers, "checkout") // a provider the document does not configure is never tried
	if plan := PlanFor(c, Payment{Amount: money.Amount{Minor: 100, Currency: "USD"}}, first, never); !slices.Equal(plan.Providers, []string{"stripe"}) {
		t.Errorf("plan = %+v", plan)
	}
}

// allowed is whether b lets a call to provider through now.
func allowed(b *Breaker, provider string, s settings.CircuitBreaker) bool {
	_, ok := b.Allow(provider, s)
	return ok
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	b := NewBreaker(func() time.Time { return clock })
	s := settings.CircuitBreaker{WindowS: 60, MinRequests: 4, ErrorRate: 0.5, OpenS: 30}

	// Below the minimum of calls nothing opens, however they fail.
	for range 3 {
		b.Record("adyen", Pass{}, true, s)
	}
	if b.State("adyen", s) != Closed {
		t.Fatal("opened below min_requests")
	}
	b.Record("adyen", Pass{}, false, s) // 3 of 4 failed: at or above half
	if b.State("adyen", s) != Open || !b.IsOpen("adyen", s) || allowed(b, "adyen", s) {
		t.Fatalf("state %s after 3 of 4 failed", b.State("adyen", s))
	}
	if b.State("stripe", s) != Closed {
		t.Error("one provider's failures opened another's circuit")
	}

	clock = clock.Add(30 * time.Second)
	if b.State("adyen", s) != HalfOpen || b.IsOpen("adyen", s) {
		t.Fatalf("state %s after open_s", b.State("adyen", s))
	}
	probe, ok := b.Allow("adyen", s)
	if !ok || allowed(b, "adyen", s) || !b.IsOpen("adyen", s) {
		t.Fatal("half open lets exactly one probe through")
	}
	// A call let through before the circuit opened ends now: it is not the probe.
	b.Record("adyen", Pass{}, false, s)
	b.Release("adyen", Pass{})
	if b.State("adyen", s) != HalfOpen || allowed(b, "adyen", s) {
		t.Fatalf("a call that was not the probe ended it: state %s", b.State("adyen", s))
	}
	b.Record("adyen", probe, true, s) // the probe failed: open for another open_s
	if b.State("adyen", s) != Open {
		t.Fatalf("state %s after a failed probe", b.State("adyen", s))
	}
	clock = clock.Add(30 * time.Second)
	probe, ok = b.Allow("adyen", s)
	if !ok {
		t.Fatal("no probe after the second open_s")
	}
	b.Release("adyen", probe) // not sent: another call may probe
	if probe, ok = b.Allow("adyen", s); !ok {
		t.Fatal("a released probe was not given back")
	}
	b.Record("adyen", probe, false, s)
	if b.State("adyen", s) != Closed || !allowed(b, "adyen", s) {
		t.Fatalf("state %s after a good probe", b.State("adyen", s))
	}
	// Closed afresh: the failures before it opened are forgotten.
	b.Record("adyen", Pass{}, true, s)
	if b.State("adyen", s) != Closed {
		t.Error("an old window counted after closing")
	}
}

func TestBreakerWindowForgetsOldCalls(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	b := NewBreaker(func() time.Time { return clock })
	s := settings.CircuitBreaker{WindowS: 10, MinRequests: 4, ErrorRate: 0.5, OpenS: 30}
	for range 3 {
		b.Record("stripe", Pass{}, true, s)
	}
	clock = clock.Add(11 * time.Second) // those three fell out of the window
	for range 3 {
		b.Record("stripe", Pass{}, false, s)
	}
	b.Record("stripe", Pass{}, true, s) // 1 of 4 in the window
	if b.State("stripe", s) != Closed {
		t.Errorf("state %s: calls older than the window counted", b.State("stripe", s))
	}
}
