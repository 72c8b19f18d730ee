// Package settings is Paygate's runtime configuration: one versioned document (routing rules,
// providers, circuit breaker, webhook retries, rate limits, alert thresholds) that operators change
// while Paygate runs, with its validation and its store. Each part of Paygate reads its own
// section of the document in force.
package settings

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
// authorisations; maxCaptureWindowH is 30 days, the longest any of them holds one.
var DefaultCapture = Capture{WindowH: 7 * 24}

const maxCaptureWindowH = 30 * 24

// Window is how long an authorisation waits for its capture.
func (c Capture) Window() time.Duration { return time.Duration(c.WindowH) * time.Hour }

func (c Capture) validate() error {
	if c.WindowH < 1 || c.WindowH > maxCaptureWindowH {
		return apierror.ForParam(apierror.InvalidRequest, "capture.window_h", fmt.Sprintf("window_h must be from 1 to %d hours", maxCaptureWindowH))
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
// enough that planning a payment stays cheap.
const (
	maxRules           = 100
	maxRuleName        = 100
	maxConditionValues = 200
	maxWeight          = 1_000_000
	maxMerchantID      = 40
)

// Validate checks the document against the providers Paygate has, naming the field at fault.
// Each section is checked by its own rules; the first fault, in the document's order, is told.
func (c Document) Validate(providers []string) error {
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
	if len(r.Rules) > maxRules {
		return apierror.ForParam(apierror.InvalidRequest, "routing.rules", fmt.Sprintf("at most %d rules", maxRules))
	}
	for i, rule := range r.Rules {
		if err := rule.validate(providers, fmt.Sprintf("routing.rules[%d]", i)); err != nil {
			return err
		}
	}
	if len(r.Fallback) == 0 {
		return apierror.ForParam(apierror.InvalidRequest, "routing.fallback", "the fallback list needs at least one provider")
	}
	for i, name := range r.Fallback {
		if err := unknownProvider(providers, name, fmt.Sprintf("routing.fallback[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (rule Rule) validate(providers []string, param string) error {
	if rule.Name == "" || len(rule.Name) > maxRuleName {
		return apierror.ForParam(apierror.InvalidRequest, param+".name", fmt.Sprintf("every rule needs a name of at most %d characters", maxRuleName))
	}
	if len(rule.Providers) > len(providers) || len(rule.Currency) > maxConditionValues || len(rule.Brand) > maxConditionValues || len(rule.Merchants) > maxConditionValues {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("a rule names each provider once, and at most %d currencies, brands or merchants", maxConditionValues))
	}
	for j, merchant := range rule.Merchants {
		if !strings.HasPrefix(merchant, "mer_") || len(merchant) > maxMerchantID {
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
		if w.Weight <= 0 || w.Weight > maxWeight {
			return apierror.ForParam(apierror.InvalidRequest, fmt.Sprintf("%s.providers[%d].weight", param, j), fmt.Sprintf("weights must be from 1 to %d", maxWeight))
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
		// A payment gets 20 seconds in all, for every provider it is offered to.
		if provider.TimeoutMS < 100 || provider.TimeoutMS > 20000 {
			return apierror.ForParam(apierror.InvalidRequest, "providers."+name+".timeout_ms", "timeout_ms must be from 100 to 20000")
		}
	}
	return nil
}

func (b CircuitBreaker) validate() error {
	switch {
	case b.WindowS < 1:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.window_s", "window_s must be at least 1")
	case b.MinRequests < 1:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.min_requests", "min_requests must be at least 1")
	case b.ErrorRate <= 0 || b.ErrorRate > 1:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.error_rate", "error_rate must be above 0 and at most 1")
	case b.OpenS < 1:
		return apierror.ForParam(apierror.InvalidRequest, "circuit_breaker.open_s", "open_s must be at least 1")
	}
	return nil
}

func (r WebhookRetry) validate() error {
	switch {
	case r.BaseS < 1 || r.BaseS > 86400:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.base_s", "base_s must be from 1 to 86400")
	case r.Factor < 1 || r.Factor > 10:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.factor", "factor must be from 1 to 10")
	case r.MaxAttempts < 1 || r.MaxAttempts > 50:
		return apierror.ForParam(apierror.InvalidRequest, "webhook_retry.max_attempts", "max_attempts must be from 1 to 50")
	}
	return nil
}

func (l RateLimits) validate() error {
	switch {
	case l.PerSecond < 1:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.per_second", "per_second must be at least 1")
	case l.Burst < l.PerSecond:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.burst", "burst must be at least per_second")
	case l.LoginPerMinute < 1:
		return apierror.ForParam(apierror.InvalidRequest, "rate_limits.login_per_minute", "login_per_minute must be at least 1")
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
