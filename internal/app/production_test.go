package app

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/config"
)

// TestProductionRefusesProvidersNotReady: a production start is refused for each provider left
// on its built-in sandbox and each real one without its webhook secret, named with what is wrong
// and the item that allows it, and with the value of PAYGATE_PRODUCTION_ALLOWS that allows them
// all; what the variable names is allowed, and development is never refused.
func TestProductionRefusesProvidersNotReady(t *testing.T) {
	// A real provider's API on this machine; nothing is asked of it at start.
	stripeAPI := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(stripeAPI.Close)
	production := []string{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com"}
	realStripe := []string{"PAYGATE_STRIPE_BASE_URL=" + stripeAPI.URL, "PAYGATE_STRIPE_API_KEY=sk_live_test"}
	signedStripe := slices.Concat(realStripe, []string{"PAYGATE_STRIPE_WEBHOOK_SECRET=whsec_test"})
	for _, tt := range []struct {
		name    string
		environ []string
		// wants are what the refusal says; none: the start is allowed.
		wants []string
	}{
		{"every provider on its sandbox", production, []string{
			"stripe is served by its built-in sandbox, where no real money moves: set PAYGATE_STRIPE_BASE_URL and its credentials, or allow it with sandbox:stripe in PAYGATE_PRODUCTION_ALLOWS",
			"adyen is served by its built-in sandbox", "checkout is served by its built-in sandbox",
			"\nto start with them as they are: PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe,sandbox:adyen,sandbox:checkout",
		}},
		{"a real provider without its webhook secret", slices.Concat(production, realStripe, []string{"PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:checkout"}), []string{
			"every webhook from stripe would be refused, since the provider's webhook secret is not set: set PAYGATE_STRIPE_WEBHOOK_SECRET, or allow it with no-webhooks:stripe in PAYGATE_PRODUCTION_ALLOWS",
			"\nto start with them as they are: PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:checkout,no-webhooks:stripe",
		}},
		{"one sandbox allowed, the others not", slices.Concat(production, []string{"PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen"}), []string{
			"stripe is served by its built-in sandbox", "checkout is served by its built-in sandbox",
			"PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:stripe,sandbox:checkout",
		}},
		{"an allowance for the wrong thing", slices.Concat(production, realStripe, []string{"PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe,sandbox:adyen,sandbox:checkout"}), []string{
			"every webhook from stripe would be refused",
		}},
		{"everything allowed", slices.Concat(production, realStripe, []string{"PAYGATE_PRODUCTION_ALLOWS=no-webhooks:stripe,sandbox:adyen,sandbox:checkout"}), nil},
		{"a real provider with its webhook secret", slices.Concat(production, signedStripe, []string{"PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:checkout"}), nil},
		{"development", nil, nil},
		{"development with a real provider without its webhook secret", realStripe, nil},
	} {
		cfg, err := config.Load(tt.environ, Providers)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		err = CheckProduction(cfg)
		if tt.wants == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: allowed", tt.name)
			continue
		}
		for _, want := range tt.wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal says no %q:\n%v", tt.name, want, err)
			}
		}
	}
}
