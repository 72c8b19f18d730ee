// Package settings is Paygate's runtime configuration: one versioned document (routing rules,
// providers, circuit breaker, webhook retries, rate limits, alert thresholds) that operators change
// while Paygate runs, with its validation and its store. Each part of Paygate reads its own
// section of the document in force.
package settings

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/money"
)

// Document is the routing document, as an operator reads and writes it.
type Document struct {
	Version        int                 `json:"version"`
	Routing        Routing             `json:"routing"`
	Providers      map[string]Provider `json:"providers"`
	CircuitBreaker CircuitBreaker      `json:"circuit_breaker"`
	WebhookRetry   WebhookRetry        `json:"webhook_retry"`
	RateLimits     RateLimits          `json:"rate_limits"`
	Alerts         AlertThresholds     `json:"alerts"`
	Capture        Capture             `json:"capture"`
	// UpdatedAt and UpdatedBy say who wrote this version and when; they are read, never written.
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	UpdatedBy string     `json:"updated_by,omitempty"`
}

// WebhookRetry space out the retries of an inbound webhook event that failed: BaseS seconds,
// then Factor times longer each time, until MaxAttempts, when the event is dead.
type WebhookRetry struct {
	BaseS       int     `json:"base_s"`
	Factor      float64 `json:"factor"`
	MaxAttempts int     `json:"max_attempts"`
}

// RateLimits are the request budgets: PerSecond with Burst per principal or address, and
// LoginPerMinute sign-in attempts per account and address.
type RateLimits struct {
	PerSecond      int `json:"per_second"`
	Burst          int `json:"burst"`
	LoginPerMinute int `json:"login_per_minute"`
}

// AlertThresholds are the thresholds of the alert rules: a provider failing more than
// ProviderErrorRate of its calls in the circuit breaker's window (with at least its minimum of
// calls), and refunds over an hour above RefundShare of the volume captured by the payments made
// or refunded in that hour, per currency.
type AlertThresholds struct {
	ProviderErrorRate float64 `json:"provider_error_rate"`
	RefundShare       float64 `json:"refund_share"`
}

// Capture says how long an authorisation (a payment captured manually) waits for its capture:
// WindowH hours after it is authorised, it is canceled as expired.
type Capture struct {
	WindowH int `json:"window_h"`
}

// DefaultCapture holds authorisations 7 days, as long as the card networks hold most online
// authorisations; MaxCaptureWindowH is 30 days, the longest any of them holds one.
var DefaultCapture = Capture{WindowH: 7 * 24}

const MaxCaptureWindowH = 30 * 24

// Window is how long an authorisation waits for its capture.
func (c Capture) Window() time.Duration { return time.Duration(c.WindowH) * time.Hour }

func (c Capture) validate() error {
	if c.WindowH < 1 || c.WindowH > MaxCaptureWindowH {
		return apierror.ForParam(apierror.InvalidRequest, "capture.window_h", fmt.Sprintf("window_h must be from 1 to %d hours", MaxCaptureWindowH))
	}
	return nil
}

// DefaultAlerts warn before the circuit breaker acts (at half its error rate by default), and of
// refunds above half the volume paid.
var DefaultAlerts = AlertThresholds{ProviderErrorRate: 0.2, RefundShare: 0.5}

// Routing holds the rules, tried in order, and the fallback order.
type Routing struct {
	Rules    []Rule   `json:"rules"`
	Fallback []string `json:"fallback"`
}

// Rule routes the payments that match all of its conditions; a condition left out matches any.
type Rule struct {
	Name     string   `json:"name"`
	Currency []string `json:"currency,omitempty"`
	Brand    []string `json:"brand,omitempty"`
	// Merchants are the merchants whose payments the rule routes (mer_...).
	Merchants []string `json:"merchants,omitempty"`
	// AmountGTE and AmountLTE bound the amount, in major units of the payment's currency.
	AmountGTE *money.Decimal `json:"amount_gte,omitempty"`
	AmountLTE *money.Decimal `json:"amount_lte,omitempty"`
	Providers []Weighted     `json:"providers"`
}

// Weighted is a provider of a rule and its share of the rule's first attempts.
type Weighted struct {
	Provider string `json:"provider"`
	Weight   int    `json:"weight"`
}

// Provider turn a provider on or off and bound its calls.
type Provider struct {
	Enabled   bool `json:"enabled"`
	TimeoutMS int  `json:"timeout_ms"`
}

// CircuitBreaker say when a provider's circuit opens: when at least MinRequests calls in the
// last WindowS seconds failed at ErrorRate or more; it stays open OpenS seconds, then lets one
// call through to probe.
type CircuitBreaker struct {
	WindowS     int     `json:"window_s"`
	MinRequests int     `json:"min_requests"`
	ErrorRate   float64 `json:"error_rate"`
	OpenS       int     `json:"open_s"`
}

// Default is the document Paygate starts with: each currency a provider prefers (preferred, by
// provider) to that provider, by a rule named after the currency; the rest to the providers in
// their order.
func Default(providers []string, preferred map[string][]string) Document {
	c := Document{
		Version: 1,
		Routing: Routing{
			Rules:    []Rule{},
			Fallback: slices.Clone(providers),
		},
		Providers:      map[string]Provider{},
		CircuitBreaker: CircuitBreaker{WindowS: 60, MinRequests: 10, ErrorRate: 0.5, OpenS: 30},
		WebhookRetry:   WebhookRetry{BaseS: 30, Factor: 2, MaxAttempts: 8},
		RateLimits:     RateLimits{PerSecond: 100, Burst: 200, LoginPerMinute: 5},
		Alerts:         DefaultAlerts,
		Capture:        DefaultCapture,
	}
	for _, name := range providers {
		c.Providers[name] = Provider{Enabled: true, TimeoutMS: 10000}
		for _, currency := range preferred[name] {
			c.Routing.Rules = append(c.Routing.Rules, Rule{Name: strings.ToLower(currency), Currency: []string{currency},
				Providers: []Weighted{{Provider: name, Weight: 1}}})
		}
	}
	return c
}

// Bounds of a routing document, which every payment reads: far above any real routing, low
// enough that planning a payment stays cheap. Names and brands are counted in characters; a
// rule's currencies, brands and merchants each count MaxConditionValues at most.
const (
	MaxRules           = 100
	MaxRuleName        = 100
	MaxConditionValues = 200
	MaxBrand           = 20
	MaxWeight          = 1_000_000
	MaxMerchantID      = 40
)

// Bounds of the other sections: far above any setting that makes sense, and within what a
// duration or a rate computed from them can hold.
const (
	// MaxVersion is the last version a document may have: versions count every change, one at
	// a time, from 1.
	MaxVersion = math.MaxInt32
	// MaxWindowS bounds the seconds of the circuit breaker's window, the seconds it stays open
	// and the first retry's wait: a day.
	MaxWindowS = 24 * 60 * 60
	// MaxCount bounds the requests the circuit breaker waits for, and the rate limits.
	MaxCount = 1_000_000
	// MaxLoginsPerMinute bounds the logins of an account and an address in a minute.
	MaxLoginsPerMinute = 10_000
	// MinTimeoutMS and MaxTimeoutMS bound a provider's calls: a payment gets 20 seconds in all,
	// for every provider it is offered to.
	MinTimeoutMS, MaxTimeoutMS = 100, 20_000
	// MaxRetryFactor bounds how much longer each retry of a webhook event waits than the last,
	// and MaxRetryAttempts how many tries it gets.
	MaxRetryFactor, MaxRetryAttempts = 10, 50
)

// Validate checks the document against the providers Paygate has, naming the field at fault.
// Each section is checked by its own rules; the first fault, in the document's order, is told.
func (c Document) Validate(providers []string) error {
	if c.Version < 1 || c.Version > MaxVersion {
		return apierror.ForParam(apierror.InvalidRequest, "version", fmt.Sprintf("version must be from 1 to %d", MaxVersion))
	}
	for _, err := range []error{
		c.Routing.validate(providers),
		validateProviders(c.Providers, providers),
		c.CircuitBreaker.validate(),
		c.WebhookRetry.validate(),
		c.RateLimits.validate(),
		c.Alerts.validate(),
		c.Capture.validate(),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// unknownProvider refuses a name that is not one of providers, at param.
func unknownProvider(providers []string, name, param string) error {
	if !slices.Contains(providers, name) {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("unknown provider %q; known: %s", name, strings.Join(providers, ", ")))
	}
	return nil
}

func (r Routing) validate(providers []string) error {
	if len(r.Rules) > MaxRules {
		return apierror.ForParam(apierror.InvalidRequest, "routing.rules", fmt.Sprintf("at most %d rules", MaxRules))
	}
	for i, rule := range r.Rules {
		if err := rule.validate(providers, fmt.Sprintf("routing.rules[%d]", i)); err != nil {
			return err
		}
	}
	if len(r.Fallback) == 0 {
		return apierror.ForParam(apierror.InvalidRequest, "routing.fallback", "the fallback list needs at least one provider")
	}
	if len(r.Fallback) > len(providers) {
		return apierror.ForParam(apierror.InvalidRequest, "routing.fallback", fmt.Sprintf("the fallback list names each of the %d providers at most once", len(providers)))
	}
	for i, name := range r.Fallback {
		if err := unknownProvider(providers, name, fmt.Sprintf("routing.fallback[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (rule Rule) validate(providers []string, param string) error {
	if rule.Name == "" || utf8.RuneCountInString(rule.Name) > MaxRuleName {
		return apierror.ForParam(apierror.InvalidRequest, param+".name", fmt.Sprintf("every rule needs a name of at most %d characters", MaxRuleName))
	}
	if len(rule.Providers) > len(providers) {
		return apierror.ForParam(apierror.InvalidRequest, param+".providers", fmt.Sprintf("a rule names each of the %d providers at most once", len(providers)))
	}
	for _, condition := range []struct {
		name   string
		values []string
	}{{"currency", rule.Currency}, {"brand", rule.Brand}, {"merchants", rule.Merchants}} {
		if len(condition.values) > MaxConditionValues {
			return apierror.ForParam(apierror.InvalidRequest, param+"."+condition.name, fmt.Sprintf("a rule names at most %d currencies, brands or merchants", MaxConditionValues))
		}
	}
	for j, brand := range rule.Brand {
		if utf8.RuneCountInString(brand) > MaxBrand {
			return apierror.ForParam(apierror.InvalidRequest, fmt.Sprintf("%s.brand[%d]", param, j), fmt.Sprintf("a card brand has at most %d characters", MaxBrand))
		}
	}
	for j, merchant := range rule.Merchants {
		if !strings.HasPrefix(merchant, "mer_") || len(merchant) > MaxMerchantID {
			return apierror.ForParam(apierror.InvalidRequest, fmt.Sprintf("%s.merchants[%d]", param, j), "a merchant's id is mer_ followed by its characters")
		}
	}
	if len(rule.Providers) == 0 {
		return apierror.ForParam(apierror.InvalidRequest, param+".providers", "a rule needs at least one provider")
	}
	for j, w := range rule.Providers {
		if err := unknownProvider(providers, w.Provider, fmt.Sprintf("%s.providers[%d].provider", param, j)); err != nil {
			return err
		}
		if w.Weight <= 0 || w.Weight > MaxWeight {
			return apierror.ForParam(apierror.InvalidRequest, fmt.Sprintf("%s.providers[%d].weight", param, j), fmt.Sprintf("weights must be from 1 to %d", MaxWeight))
		}
	}
	for j, code := range rule.Currency {
		if _, err := money.ParseCurrency(code); err != nil {
			return apierror.ForParam(apierror.InvalidCurrency, fmt.Sprintf("%s.currency[%d]", param, j), err.Error())
		}
	}
	return validRange(rule, param)
}

func validateProviders(settings map[string]Provider, providers []string) error {
	for _, name := range providers {
		if _, listed := settings[name]; !listed {
			// Left out, a provider would never be tried: say so rather than switch it off unasked.
			return apierror.ForParam(apierror.MissingField, "providers."+name, "every provider needs its settings; set enabled false to switch one off")
		}
	}
	for name, provider := range settings {
		if err := unknownProvider(providers, name, "providers."+name); err != nil {
			return err
		}
		if provider.TimeoutMS < MinTimeoutMS || provider.TimeoutMS > MaxTimeoutMS {
			return apierror.ForParam(apierror.InvalidRequest, "providers."+name+".timeout_ms", fmt.Sprintf("timeout_ms must be from %d to %d", MinTimeoutMS, MaxTimeoutMS))
		}
	}
	return nil
}

func (b CircuitBreaker) validate() error {
	switch {
	case b.WindowS < 1 || b.WindowS > MaxWindowS:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.window_s", fmt.Sprintf("window_s must be from 1 to %d", MaxWindowS))
	case b.MinRequests < 1 || b.MinRequests > MaxCount:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.min_requests", fmt.Sprintf("min_requests must be from 1 to %d", MaxCount))
	case b.ErrorRate <= 0 || b.ErrorRate > 1:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.error_rate", "error_rate must be above 0 and at most 1")
	case b.OpenS < 1 || b.OpenS > MaxWindowS:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.open_s", fmt.Sprintf("open_s must be from 1 to %d", MaxWindowS))
	}
	return nil
}

func (r WebhookRetry) validate() error {
	switch {
	case r.BaseS < 1 || r.BaseS > MaxWindowS:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.base_s", fmt.Sprintf("base_s must be from 1 to %d", MaxWindowS))
	case r.Factor < 1 || r.Factor > MaxRetryFactor:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.factor", fmt.Sprintf("factor must be from 1 to %d", MaxRetryFactor))
	case r.MaxAttempts < 1 || r.MaxAttempts > MaxRetryAttempts:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.max_attempts", fmt.Sprintf("max_attempts must be from 1 to %d", MaxRetryAttempts))
	}
	return nil
}

func (l RateLimits) validate() error {
	switch {
	case l.PerSecond < 1 || l.PerSecond > MaxCount:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.per_second", fmt.Sprintf("per_second must be from 1 to %d", MaxCount))
	case l.Burst < 1 || l.Burst > MaxCount:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.burst", fmt.Sprintf("burst must be from 1 to %d", MaxCount))
	case l.Burst < l.PerSecond:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.burst", "burst must be at least per_second")
	case l.LoginPerMinute < 1 || l.LoginPerMinute > MaxLoginsPerMinute:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.login_per_minute", fmt.Sprintf("login_per_minute must be from 1 to %d", MaxLoginsPerMinute))
	}
	return nil
}

func (a AlertThresholds) validate() error {
	switch {
	case a.ProviderErrorRate <= 0 || a.ProviderErrorRate > 1:
		return apierror.ForParam(apierror.InvalidRequest, "alerts.provider_error_rate", "provider_error_rate must be above 0 and at most 1")
	case a.RefundShare <= 0 || a.RefundShare > 1:
		return apierror.ForParam(apierror.InvalidRequest, "alerts.refund_share", "refund_share must be above 0 and at most 1")
	}
	return nil
}

// validRange checks a rule's amount bounds: plain decimals, the lower not above the upper.
func validRange(rule Rule, param string) error {
	var bounds [2]int64
	for i, bound := range []*money.Decimal{rule.AmountGTE, rule.AmountLTE} {
		if bound == nil {
			continue
		}
		var err error
		if bounds[i], err = BoundThousandths(*bound); err != nil || bounds[i] < 0 {
			return apierror.ForParam(apierror.InvalidAmount, param+[]string{".amount_gte", ".amount_lte"}[i], "amount bounds are plain decimals such as 5000.00")
		}
	}
	if rule.AmountGTE != nil && rule.AmountLTE != nil && bounds[0] > bounds[1] {
		return apierror.ForParam(apierror.InvalidAmount, param+".amount_gte", "amount_gte is above amount_lte")
	}
	return nil
}

// BoundThousandths reads a bound, in major units, in thousandths of a major unit: the scale of
// KWD, the widest in use.
func BoundThousandths(bound money.Decimal) (int64, error) {
	amount, err := money.Parse(string(bound), "KWD")
	return amount.Minor, err
}
