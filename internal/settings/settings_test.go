package settings

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/money"
)

var providers = []string{"stripe", "adyen", "checkout"}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		change func(*Document)
		param  string
	}{
		{func(c *Document) { c.Routing.Rules[0].Providers[0].Provider = "paypal" }, "routing.rules[0].providers[0].provider"},
		{func(c *Document) { c.Routing.Rules[1].Providers[0].Weight = 0 }, "routing.rules[1].providers[0].weight"},
		{func(c *Document) { c.Routing.Rules[0].Currency = []string{"XXX"} }, "routing.rules[0].currency[0]"},
		{func(c *Document) {
			c.Routing.Rules[0].AmountGTE = decimal("10")
			c.Routing.Rules[0].AmountLTE = decimal("5")
		}, "routing.rules[0].amount_gte"},
		{func(c *Document) { c.Routing.Rules[0].AmountLTE = decimal("1e3") }, "routing.rules[0].amount_lte"},
		{func(c *Document) { c.Routing.Rules[0].Name = "" }, "routing.rules[0].name"},
		{func(c *Document) { c.Routing.Rules[0].Providers[0].Weight = 1 << 40 }, "routing.rules[0].providers[0].weight"},
		{func(c *Document) { c.Routing.Rules = make([]Rule, 101) }, "routing.rules"},
		{func(c *Document) { c.Routing.Rules[0].Currency = make([]string, 201) }, "routing.rules[0].currency"},
		{func(c *Document) { c.Routing.Rules[0].Brand = make([]string, 201) }, "routing.rules[0].brand"},
		{func(c *Document) { c.Routing.Rules[0].Merchants = make([]string, 201) }, "routing.rules[0].merchants"},
		{func(c *Document) { c.Routing.Rules[0].Brand = []string{"visa", strings.Repeat("b", MaxBrand+1)} }, "routing.rules[0].brand[1]"},
		{func(c *Document) { c.Routing.Rules[0].Name = strings.Repeat("n", MaxRuleName+1) }, "routing.rules[0].name"},
		{func(c *Document) {
			c.Routing.Rules[0].Providers = append(c.Routing.Rules[0].Providers, c.Routing.Rules[0].Providers[0], c.Routing.Rules[0].Providers[0], c.Routing.Rules[0].Providers[0])
		}, "routing.rules[0].providers"},
		{func(c *Document) { c.Routing.Fallback = append(c.Routing.Fallback, "stripe") }, "routing.fallback"},
		{func(c *Document) { c.Version = 0 }, "version"},
		{func(c *Document) { c.Version = MaxVersion + 1 }, "version"},
		{func(c *Document) { delete(c.Providers, "adyen") }, "providers.adyen"},
		{func(c *Document) { c.Routing.Rules[0].Providers = nil }, "routing.rules[0].providers"},
		{func(c *Document) { c.Routing.Fallback = nil }, "routing.fallback"},
		{func(c *Document) { c.Routing.Fallback = []string{"stripe", "bank"} }, "routing.fallback[1]"},
		{func(c *Document) { c.Providers["bank"] = Provider{Enabled: true, TimeoutMS: 1000} }, "providers.bank"},
		{func(c *Document) { c.Providers["stripe"] = Provider{Enabled: true, TimeoutMS: 5} }, "providers.stripe.timeout_ms"},
		{func(c *Document) { c.Providers["stripe"] = Provider{Enabled: true, TimeoutMS: 20001} }, "providers.stripe.timeout_ms"},
		{func(c *Document) { c.CircuitBreaker.ErrorRate = 1.5 }, "circuit_breaker.error_rate"},
		{func(c *Document) { c.CircuitBreaker.MinRequests = 0 }, "circuit_breaker.min_requests"},
		{func(c *Document) { c.CircuitBreaker.WindowS = 0 }, "circuit_breaker.window_s"},
		{func(c *Document) { c.CircuitBreaker.OpenS = 0 }, "circuit_breaker.open_s"},
		{func(c *Document) { c.CircuitBreaker.MinRequests = MaxCount + 1 }, "circuit_breaker.min_requests"},
		{func(c *Document) { c.CircuitBreaker.WindowS = MaxWindowS + 1 }, "circuit_breaker.window_s"},
		{func(c *Document) { c.CircuitBreaker.OpenS = MaxWindowS + 1 }, "circuit_breaker.open_s"},
		{func(c *Document) { c.WebhookRetry = WebhookRetry{} }, "webhook_retry.base_s"},
		{func(c *Document) { c.WebhookRetry.Factor = 0.5 }, "webhook_retry.factor"},
		{func(c *Document) { c.WebhookRetry.MaxAttempts = 0 }, "webhook_retry.max_attempts"},
		{func(c *Document) { c.RateLimits = RateLimits{} }, "rate_limits.per_second"},
		{func(c *Document) { c.RateLimits.Burst = 10 }, "rate_limits.burst"},
		{func(c *Document) { c.RateLimits.LoginPerMinute = 0 }, "rate_limits.login_per_minute"},
		{func(c *Document) { c.RateLimits.PerSecond = MaxCount + 1 }, "rate_limits.per_second"},
		{func(c *Document) { c.RateLimits.Burst = MaxCount + 1 }, "rate_limits.burst"},
		{func(c *Document) { c.RateLimits.LoginPerMinute = MaxLoginsPerMinute + 1 }, "rate_limits.login_per_minute"},
		{func(c *Document) { c.Alerts.ProviderErrorRate = 0 }, "alerts.provider_error_rate"},
		{func(c *Document) { c.Alerts.RefundShare = 1.5 }, "alerts.refund_share"},
	} {
		c := Default(providers, map[string][]string{"adyen": {"EUR"}, "checkout": {"GBP"}})
		tc.change(&c)
		apiErr, ok := errors.AsType[*apierror.Error](c.Validate(providers))
		if !ok || apiErr.Param != tc.param {
			t.Errorf("%s: %v", tc.param, c.Validate(providers))
		}
	}
}

// TestValidateTakesTheBounds: a document at every bound, not past it, is valid; names and brands
// are counted in characters.
func TestValidateTakesTheBounds(t *testing.T) {
	c := Default(providers, map[string][]string{"adyen": {"EUR"}})
	c.Version = MaxVersion
	rule := &c.Routing.Rules[0]
	rule.Name = strings.Repeat("é", MaxRuleName)
	rule.Currency = slices.Repeat([]string{"EUR"}, MaxConditionValues)
	rule.Brand = slices.Repeat([]string{strings.Repeat("é", MaxBrand)}, MaxConditionValues)
	rule.Merchants = slices.Repeat([]string{"mer_" + strings.Repeat("0", MaxMerchantID-4)}, MaxConditionValues)
	rule.Providers = []Weighted{{"stripe", MaxWeight}, {"adyen", 1}, {"checkout", 1}}
	c.Routing.Rules = slices.Repeat(c.Routing.Rules[:1], MaxRules)
	c.Providers["stripe"] = Provider{Enabled: true, TimeoutMS: MaxTimeoutMS}
	c.Providers["adyen"] = Provider{Enabled: true, TimeoutMS: MinTimeoutMS}
	c.CircuitBreaker = CircuitBreaker{WindowS: MaxWindowS, MinRequests: MaxCount, ErrorRate: 1, OpenS: MaxWindowS}
	c.WebhookRetry = WebhookRetry{BaseS: MaxWindowS, Factor: MaxRetryFactor, MaxAttempts: MaxRetryAttempts}
	c.RateLimits = RateLimits{PerSecond: MaxCount, Burst: MaxCount, LoginPerMinute: MaxLoginsPerMinute}
	c.Capture = Capture{WindowH: MaxCaptureWindowH}
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentRoundTrips: the document reads back as written, in the shape operators send.
func TestDocumentRoundTrips(t *testing.T) {
	text := `{"version":4,"routing":{"rules":[{"name":"eu","currency":["EUR"],"brand":["visa","mastercard"],"amount_gte":"0.00","amount_lte":"5000.00",
		"providers":[{"provider":"adyen","weight":80},{"provider":"stripe","weight":20}]}],"fallback":["stripe","adyen","checkout"]},
		"providers":{"stripe":{"enabled":true,"timeout_ms":10000},"adyen":{"enabled":true,"timeout_ms":10000},"checkout":{"enabled":true,"timeout_ms":10000}},
		"circuit_breaker":{"window_s":60,"min_requests":10,"error_rate":0.5,"open_s":30},
		"webhook_retry":{"base_s":30,"factor":2,"max_attempts":8},"rate_limits":{"per_second":100,"burst":200,"login_per_minute":5},
		"alerts":{"provider_error_rate":0.2,"refund_share":0.5},"capture":{"window_h":168}}`
	var c Document
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(providers); err != nil {
		t.Fatal(err)
	}
	if c.Version != 4 || *c.Routing.Rules[0].AmountLTE != "5000.00" || c.Routing.Rules[0].Providers[1].Weight != 20 ||
		c.WebhookRetry.MaxAttempts != 8 || c.RateLimits.LoginPerMinute != 5 || c.Alerts.RefundShare != 0.5 || c.Capture.Window() != 7*24*time.Hour {
		t.Errorf("read %+v", c)
	}
}

func decimal(text string) *money.Decimal {
	d := money.Decimal(text)
	return &d
}

// TestDefaultRoutesPreferredCurrencies: each currency a provider prefers is a rule to it, in the
// providers' order, and the rest goes to the providers in their order.
func TestDefaultRoutesPreferredCurrencies(t *testing.T) {
	c := Default(providers, map[string][]string{"checkout": {"GBP"}, "adyen": {"EUR", "DKK"}})
	var rules []string
	for _, rule := range c.Routing.Rules {
		rules = append(rules, rule.Name+":"+rule.Currency[0]+">"+rule.Providers[0].Provider)
	}
	if want := []string{"eur:EUR>adyen", "dkk:DKK>adyen", "gbp:GBP>checkout"}; !slices.Equal(rules, want) {
		t.Errorf("rules %v, want %v", rules, want)
	}
	if !slices.Equal(c.Routing.Fallback, providers) || len(c.Providers) != 3 {
		t.Errorf("fallback %v, providers %v", c.Routing.Fallback, c.Providers)
	}
	if err := c.Validate(providers); err != nil {
		t.Error(err)
	}
}
