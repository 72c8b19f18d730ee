package stripe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	sandbox := NewSandbox()
	server := httptest.NewServer(sandbox)
	defer server.Close()
	c := &Client{BaseURL: server.URL, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}}
	unauthenticated := *c
	unauthenticated.APIKey = ""
	providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
		RawDeclines: map[string]string{providertest.Declined: "generic_decline", providertest.InsufficientFunds: "insufficient_funds",
			providertest.ExpiredCard: "expired_card"}})
	if result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); err != nil || !strings.HasPrefix(result.ProviderPaymentID, "pi_") {
		t.Errorf("charge = %+v, %v; want a PaymentIntent id", result, err)
	}
}

// TestNetworkRetriesReuseTheKey: a request whose answer is lost in the network is sent again with
// its key, and Stripe charges once; an answer, even a 500, is never sent again.
func TestNetworkRetriesReuseTheKey(t *testing.T) {
	sandbox := NewSandbox()
	var requests atomic.Int32
	keys := make(chan string, 4)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		sandbox.ServeHTTP(w, r)
		if requests.Add(1) == 1 { // the first answer is lost after Stripe acted on it
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}
	}))
	defer flaky.Close()
	c := &Client{BaseURL: flaky.URL, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: flaky.Client(), RetryWaits: []time.Duration{time.Millisecond, time.Millisecond}}}
	result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if err != nil || !result.Approved {
		t.Fatalf("charge through a lost answer = %+v, %v", result, err)
	}
	if len(keys) != 2 {
		t.Fatalf("%d requests reached Stripe, want the first and its retry", len(keys))
	}
	if first, second := <-keys, <-keys; first == "" || first != second {
		t.Errorf("keys %q then %q; a retry must send the attempt's key", first, second)
	}
	if n := len(sandbox.intents); n != 1 {
		t.Errorf("%d payment intents, want 1", n)
	}

	sandbox.Outage.Store(true)
	before := requests.Load()
	c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if n := requests.Load() - before; n != 1 {
		t.Errorf("a 500 was sent %d times; an answer is not retried", n)
	}
}
