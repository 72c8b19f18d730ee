package routing

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/money"
)

var providers = []string{"stripe", "adyen", "checkout"}

func never(string) bool { return false }

func first(int) int { return 0 }

func TestDefaultPlans(t *testing.T) {
	c := Default(providers)
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
		plan := c.Plan(Payment{Amount: money.Amount{Minor: 1000, Currency: tc.currency}, Brand: "visa"}, first, never)
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
	c := Default(providers)
	c.Routing.Rules = []Rule{
		{Name: "big-eu-visa", Currency: []string{"EUR"}, Brand: []string{"visa"}, AmountGTE: decimal("100.00"), AmountLTE: decimal("5000"),
			Providers: []Weighted{{Provider: "checkout", Weight: 1}}},
		{Name: "yen", Currency: []string{"JPY"}, AmountLTE: decimal("1000"), Providers: []Weighted{{Provider: "adyen", Weight: 1}}},
	}
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amount money.Amount
		brand  string
		rule   string
	}{
		{money.Amount{Minor: 10000, Currency: "EUR"}, "visa", "big-eu-visa"},  // 100.00: the lower bound holds
		{money.Amount{Minor: 500000, Currency: "EUR"}, "VISA", "big-eu-visa"}, // 5000.00: the upper bound holds
		{money.Amount{Minor: 9999, Currency: "EUR"}, "visa", ""},
		{money.Amount{Minor: 500001, Currency: "EUR"}, "visa", ""},
		{money.Amount{Minor: 10000, Currency: "EUR"}, "mastercard", ""},
		{money.Amount{Minor: 1000, Currency: "JPY"}, "visa", "yen"}, // 1000 yen, no minor unit
		{money.Amount{Minor: 1001, Currency: "JPY"}, "visa", ""},
	} {
		if plan := c.Plan(Payment{Amount: tc.amount, Brand: tc.brand}, first, never); plan.Rule != tc.rule {
			t.Errorf("%v %s: rule %q, want %q", tc.amount, tc.brand, plan.Rule, tc.rule)
		}
	}
}

// TestWeightsShareTheFirstAttempts: over every draw, each provider of a rule comes first in
// proportion to its weight; the others follow by weight, then the fallback.
func TestWeightsShareTheFirstAttempts(t *testing.T) {
	c := Default(providers)
	c.Routing.Rules = []Rule{{Name: "eu", Currency: []string{"EUR"},
		Providers: []Weighted{{Provider: "adyen", Weight: 80}, {Provider: "stripe", Weight: 20}}}}
	firsts := map[string]int{}
	for n := range 100 {
		plan := c.Plan(Payment{Amount: money.Amount{Minor: 100, Currency: "EUR"}}, func(total int) int { return n % total }, never)
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
	c := Default(providers)
	c.Providers["adyen"] = ProviderSettings{Enabled: false, TimeoutMS: 1000}
	plan := c.Plan(Payment{Amount: money.Amount{Minor: 100, Currency: "EUR"}}, first, func(p string) bool { return p == "stripe" })
	if plan.Rule != "eur" || !slices.Equal(plan.Providers, []string{"checkout"}) {
		t.Errorf("plan = %+v, want the eur rule with only checkout left", plan)
	}
	delete(c.Providers, "checkout") // a provider the document does not configure is never tried
	if plan := c.Plan(Payment{Amount: money.Amount{Minor: 100, Currency: "USD"}}, first, never); !slices.Equal(plan.Providers, []string{"stripe"}) {
		t.Errorf("plan = %+v", plan)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		param  string
	}{
		{func(c *Config) { c.Routing.Rules[0].Providers[0].Provider = "paypal" }, "routing.rules[0].providers[0].provider"},
		{func(c *Config) { c.Routing.Rules[1].Providers[0].Weight = 0 }, "routing.rules[1].providers[0].weight"},
		{func(c *Config) { c.Routing.Rules[0].Currency = []string{"XXX"} }, "routing.rules[0].currency[0]"},
		{func(c *Config) {
			c.Routing.Rules[0].AmountGTE = decimal("10")
			c.Routing.Rules[0].AmountLTE = decimal("5")
		}, "routing.rules[0].amount_gte"},
		{func(c *Config) { c.Routing.Rules[0].AmountLTE = decimal("1e3") }, "routing.rules[0].amount_lte"},
		{func(c *Config) { c.Routing.Rules[0].Name = "" }, "routing.rules[0].name"},
		{func(c *Config) { c.Routing.Rules[0].Providers[0].Weight = 1 << 40 }, "routing.rules[0].providers[0].weight"},
		{func(c *Config) { c.Routing.Rules = make([]Rule, 101) }, "routing.rules"},
		{func(c *Config) { c.Routing.Rules[0].Currency = make([]string, 201) }, "routing.rules[0]"},
		{func(c *Config) { delete(c.Providers, "adyen") }, "providers.adyen"},
		{func(c *Config) { c.Routing.Rules[0].Providers = nil }, "routing.rules[0].providers"},
		{func(c *Config) { c.Routing.Fallback = nil }, "routing.fallback"},
		{func(c *Config) { c.Routing.Fallback = []string{"stripe", "bank"} }, "routing.fallback[1]"},
		{func(c *Config) { c.Providers["bank"] = ProviderSettings{Enabled: true, TimeoutMS: 1000} }, "providers.bank"},
		{func(c *Config) { c.Providers["stripe"] = ProviderSettings{Enabled: true, TimeoutMS: 5} }, "providers.stripe.timeout_ms"},
		{func(c *Config) { c.Providers["stripe"] = ProviderSettings{Enabled: true, TimeoutMS: 20001} }, "providers.stripe.timeout_ms"},
		{func(c *Config) { c.CircuitBreaker.ErrorRate = 1.5 }, "circuit_breaker.error_rate"},
		{func(c *Config) { c.CircuitBreaker.MinRequests = 0 }, "circuit_breaker.min_requests"},
		{func(c *Config) { c.CircuitBreaker.WindowS = 0 }, "circuit_breaker.window_s"},
		{func(c *Config) { c.CircuitBreaker.OpenS = 0 }, "circuit_breaker.open_s"},
		{func(c *Config) { c.WebhookRetry = RetrySettings{} }, "webhook_retry.base_s"},
		{func(c *Config) { c.WebhookRetry.Factor = 0.5 }, "webhook_retry.factor"},
		{func(c *Config) { c.WebhookRetry.MaxAttempts = 0 }, "webhook_retry.max_attempts"},
		{func(c *Config) { c.RateLimits = RateLimits{} }, "rate_limits.per_second"},
		{func(c *Config) { c.RateLimits.Burst = 10 }, "rate_limits.burst"},
		{func(c *Config) { c.RateLimits.LoginPerMinute = 0 }, "rate_limits.login_per_minute"},
		{func(c *Config) { c.Alerts.ProviderErrorRate = 0 }, "alerts.provider_error_rate"},
		{func(c *Config) { c.Alerts.RefundShare = 1.5 }, "alerts.refund_share"},
	} {
		c := Default(providers)
		tc.change(&c)
		apiErr, ok := errors.AsType[*apierror.Error](c.Validate(providers))
		if !ok || apiErr.Param != tc.param {
			t.Errorf("%s: %v", tc.param, c.Validate(providers))
		}
	}
}

// TestDocumentRoundTrips: the document reads back as written, in the shape operators send.
func TestDocumentRoundTrips(t *testing.T) {
	text := `{"version":4,"routing":{"rules":[{"name":"eu","currency":["EUR"],"brand":["visa","mastercard"],"amount_gte":"0.00","amount_lte":"5000.00",
		"providers":[{"provider":"adyen","weight":80},{"provider":"stripe","weight":20}]}],"fallback":["stripe","adyen","checkout"]},
		"providers":{"stripe":{"enabled":true,"timeout_ms":10000},"adyen":{"enabled":true,"timeout_ms":10000},"checkout":{"enabled":true,"timeout_ms":10000}},
		"circuit_breaker":{"window_s":60,"min_requests":10,"error_rate":0.5,"open_s":30},
		"webhook_retry":{"base_s":30,"factor":2,"max_attempts":8},"rate_limits":{"per_second":100,"burst":200,"login_per_minute":5},
		"alerts":{"provider_error_rate":0.2,"refund_share":0.5}}`
	var c Config
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
	if c.Version != 4 || *c.Routing.Rules[0].AmountLTE != "5000.00" || c.Routing.Rules[0].Providers[1].Weight != 20 ||
		c.WebhookRetry.MaxAttempts != 8 || c.RateLimits.LoginPerMinute != 5 || c.Alerts.RefundShare != 0.5 {
		t.Errorf("read %+v", c)
	}
}

// allowed is whether b lets a call to provider through now.
func allowed(b *Breaker, provider string, s BreakerSettings) bool {
	_, ok := b.Allow(provider, s)
	return ok
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	b := NewBreaker(func() time.Time { return clock })
	s := BreakerSettings{WindowS: 60, MinRequests: 4, ErrorRate: 0.5, OpenS: 30}

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
	s := BreakerSettings{WindowS: 10, MinRequests: 4, ErrorRate: 0.5, OpenS: 30}
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
