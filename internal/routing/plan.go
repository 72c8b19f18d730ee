package routing

import (
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/settings"
)

// Payment is what the rules look at.
type Payment struct {
	Amount   money.Amount
	Brand    string
	Merchant string
}

// Plan is the order in which the providers are tried for a payment, and the rule that gave it
// ("" when none matched and the fallback order stands).
type Plan struct {
	Rule      string
	Providers []string
	// Unsendable says why each provider left out for the payment's amount cannot be sent it
	// (Adyen counts escudos whole); empty when a provider was left out for its open circuit, as
	// it might have taken the amount.
	Unsendable []string
}

// Plan orders the providers for p: the first attempt picked by weight among the matching rule's
// providers, then the rule's others by weight, then the fallback list, each once. It leaves out
// the providers that are disabled or whose circuit isOpen says is open. pick returns a number
// from 0 to n-1 (a random one, so that the weights share the traffic).
func PlanFor(c settings.Document, p Payment, pick func(n int) int, isOpen func(provider string) bool) Plan {
	usable := func(name string) bool {
		provider, configured := c.Providers[name]
		return configured && provider.Enabled && !isOpen(name)
	}
	var plan Plan
	add := func(name string) {
		if usable(name) && !slices.Contains(plan.Providers, name) {
			plan.Providers = append(plan.Providers, name)
		}
	}
	for _, rule := range c.Routing.Rules {
		if !ruleMatches(rule, p) {
			continue
		}
		plan.Rule = rule.Name
		candidates := slices.DeleteFunc(slices.Clone(rule.Providers), func(w settings.Weighted) bool { return !usable(w.Provider) })
		total := 0
		for _, w := range candidates {
			total += w.Weight
		}
		if total > 0 {
			n := pick(total)
			for _, w := range candidates {
				if n < w.Weight {
					add(w.Provider)
					break
				}
				n -= w.Weight
			}
		}
		slices.SortStableFunc(candidates, func(a, b settings.Weighted) int { return b.Weight - a.Weight })
		for _, w := range candidates {
			add(w.Provider)
		}
		break
	}
	for _, name := range c.Routing.Fallback {
		add(name)
	}
	return plan
}

// ruleMatches reports whether every condition of the rule holds for p.
func ruleMatches(r settings.Rule, p Payment) bool {
	if len(r.Currency) > 0 && !slices.ContainsFunc(r.Currency, func(c string) bool { return strings.EqualFold(c, p.Amount.Currency) }) {
		return false
	}
	if len(r.Brand) > 0 && !slices.ContainsFunc(r.Brand, func(b string) bool { return strings.EqualFold(b, p.Brand) }) {
		return false
	}
	if len(r.Merchants) > 0 && !slices.Contains(r.Merchants, p.Merchant) {
		return false
	}
	amount := thousandths(p.Amount)
	if r.AmountGTE != nil {
		if bound, _ := settings.BoundThousandths(*r.AmountGTE); amount < bound {
			return false
		}
	}
	if r.AmountLTE != nil {
		if bound, _ := settings.BoundThousandths(*r.AmountLTE); amount > bound {
			return false
		}
	}
	return true
}

// thousandths is an amount in thousandths of its currency's major unit, so that bounds written in
// major units compare with amounts of any currency (no currency in use has more than three
// decimals).
func thousandths(a money.Amount) int64 {
	minor := a.Minor
	for range 3 - money.Scale(a.Currency) {
		minor *= 10
	}
	return minor
}
