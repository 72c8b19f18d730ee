package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/stripe"
)

// TestStripeStandInApprovesWhatPaygateCharges: Paygate's own Stripe client reads the stand-in's
// answer as an approved charge, for an automatic and a manual capture, each with an intent of its
// own; an unknown call is a 404.
func TestStripeStandInApprovesWhatPaygateCharges(t *testing.T) {
	standIn := httptest.NewServer(StripeStandIn())
	defer standIn.Close()
	client := &stripe.Client{BaseURL: standIn.URL, APIKey: "sk_test_load", Caller: provider.Caller{HTTP: standIn.Client()}}
	seen := map[string]bool{}
	for _, manual := range []bool{false, true} {
		request := providertest.Charge(t, providertest.Approved, 4999)
		request.CaptureManually = manual
		result, err := client.Charge(context.Background(), request)
		if err != nil || !result.Approved || !strings.HasPrefix(result.ProviderPaymentID, "pi_") || seen[result.ProviderPaymentID] {
			t.Fatalf("manual capture %v: charge = %+v, %v; want approved with an intent of its own", manual, result, err)
		}
		seen[result.ProviderPaymentID] = true
	}
	resp, err := http.Get(standIn.URL + "/v1/refunds")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/refunds answered %d; want 404", resp.StatusCode)
	}
}
