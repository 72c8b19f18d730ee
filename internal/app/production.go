package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/provider"
)

// productionAllowsVariable is the variable that lets a production start run with providers not
// ready for real payments.
const productionAllowsVariable = "PAYGATE_PRODUCTION_ALLOWS"

// CheckProduction says, without touching anything, which providers a production start would run
// unready, unless PAYGATE_PRODUCTION_ALLOWS allows them: one served by its built-in sandbox, where
// no real money moves, and a real one without its webhook secret, whose webhooks are all refused.
// Each is named with what is wrong and the item that allows it, and the error ends with the value
// of the variable that allows them all. A development start runs with either.
func CheckProduction(cfg config.Config) error {
	if !cfg.Production() {
		return nil
	}
	var problems, missing []string
	for _, p := range Providers {
		kind, problem := unready(p, cfg.Providers[p.Name])
		if kind == "" || cfg.Allows(kind, p.Name) {
			continue
		}
		item := config.Allowance(kind, p.Name)
		problems = append(problems, fmt.Sprintf("%s, or allow it with %s in %s", problem, item, productionAllowsVariable))
		missing = append(missing, item)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("production will not start with providers not ready for real payments:\n  %s\nto start with them as they are: %s=%s",
		strings.Join(problems, "\n  "), productionAllowsVariable, strings.Join(slices.Concat(cfg.ProductionAllows, missing), ","))
}

// unready says what keeps a provider configured with settings from real payments, as the
// allowance that would let it run so (config.AllowSandbox or config.AllowNoWebhooks) and what to
// set instead; "" when nothing does.
func unready(p provider.Registration, settings provider.Settings) (kind, problem string) {
	if settings.BaseURL() == "" {
		return config.AllowSandbox, fmt.Sprintf("%s is served by its built-in sandbox, where no real money moves: set %s and its credentials",
			p.Name, provider.VariableName(p.Name, provider.BaseURLKey))
	}
	// Any other error of the verifier's stops the start when the providers are built.
	if _, err := p.NewVerifier(settings, time.Now); errors.Is(err, provider.ErrWebhooksNotConfigured) {
		return config.AllowNoWebhooks, fmt.Sprintf("every webhook from %s would be refused, since %v", p.Name, err)
	}
	return "", ""
}
