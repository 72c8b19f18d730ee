package stripe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		sandbox := NewSandbox(pools[0].Ent, time.Now)
		url, caller := providertest.Serve(t, sandbox)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		unauthenticated := *c
		unauthenticated.APIKey = ""
		twinURL, twinCaller := providertest.Serve(t, NewSandbox(pools[1].Ent, time.Now))
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
			Twin: &Client{BaseURL: twinURL, APIKey: "sk_test_x", Caller: twinCaller},
			RawDeclines: map[string]string{providertest.Declined: "generic_decline", providertest.InsufficientFunds: "insufficient_funds",
				providertest.ExpiredCard: "expired_card"}})
		if result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); err != nil || !strings.HasPrefix(result.ProviderPaymentID, "pi_") {
			t.Errorf("charge = %+v, %v; want a PaymentIntent id", result, err)
		}
	})
}

// TestNetworkRetriesReuseTheKey: a request whose answer is lost in the network, or answered 500,
// is sent again with its key, and Stripe charges once; any other answer is final.
func TestNetworkRetriesReuseTheKey(t *testing.T) {
	db := databasetest.SQLite(t)
	sandbox := NewSandbox(db.Ent, time.Now)
	var requests atomic.Int32
	keys := make(chan string, 8)
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
	if n := db.Ent.SandboxObject.Query().CountX(context.Background()); n != 1 {
		t.Errorf("%d payment intents, want 1", n)
	}

	sandbox.Fault.Store(true)
	before := requests.Load()
	c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if n := requests.Load() - before; n != 3 {
		t.Errorf("a request answered 500 was sent %d times, want 3 (two retries)", n)
	}
	sandbox.Fault.Store(false)
	sandbox.Outage.Store(true)
	before = requests.Load()
	c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if n := requests.Load() - before; n != 1 {
		t.Errorf("a request answered 503 was sent %d times; that answer is final", n)
	}
}

// TestAnswersInFlight: a payment still processing is no decline, and a refund still pending
// settles later.
func TestAnswersInFlight(t *testing.T) {
	url, caller := providertest.Canned(t, http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"processing"}`)
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); !providertest.Unknown(err) {
		t.Errorf("a processing payment intent = %v, want an unknown outcome", err)
	}
	url, caller = providertest.Canned(t, http.StatusOK, `{"id":"re_1","object":"refund","status":"pending"}`)
	c = &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if r, err := c.Refund(context.Background(), provider.RefundRequest{RefundID: "re_x", ProviderPaymentID: "pi_1"}); err != nil || !r.Pending {
		t.Errorf("a pending refund = %+v, %v", r, err)
	}
	url, caller = providertest.Canned(t, http.StatusConflict, `{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}`)
	c = &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); !providertest.Unknown(err) {
		t.Errorf("a key still in use = %v, want an unknown outcome", err)
	}
}
