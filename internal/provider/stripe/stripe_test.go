package stripe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// countingSandbox is the sandbox behind a real HTTP server, counting the requests that reach it.
type countingSandbox struct {
	*Sandbox
	server   *httptest.Server
	requests atomic.Int32
}

func newSandboxServer(t *testing.T) *countingSandbox {
	t.Helper()
	s := &countingSandbox{Sandbox: NewSandbox()}
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.Sandbox.ServeHTTP(w, r)
	}))
	t.Cleanup(s.server.Close)
	return s
}

func (s *countingSandbox) client() *Client {
	return &Client{BaseURL: s.server.URL, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: s.server.Client(), RetryWaits: []time.Duration{time.Millisecond, time.Millisecond}}}
}

func chargeOf(t *testing.T, number string, minor int64) provider.ChargeRequest {
	t.Helper()
	c, err := card.Validate(card.Input{Number: number, ExpMonth: 12, ExpYear: time.Now().Year() + 4, CVC: "123"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return provider.ChargeRequest{PaymentID: prefixid.New("pay"), Amount: money.Amount{Minor: minor, Currency: "USD"}, Card: c}
}

func TestChargeOutcomes(t *testing.T) {
	sandbox := newSandboxServer(t)
	c := sandbox.client()
	for _, tc := range []struct {
		number, decline, raw string
	}{
		{"4242424242424242", "", ""},
		{"4000000000000002", "card_declined", "generic_decline"},
		{"4000000000009995", "insufficient_funds", "insufficient_funds"},
		{"4000000000000069", "expired_card", "expired_card"},
	} {
		result, err := c.Charge(context.Background(), chargeOf(t, tc.number, 4999))
		if err != nil {
			t.Errorf("%s: %v", tc.number, err)
			continue
		}
		if result.Approved != (tc.decline == "") || result.DeclineCode != tc.decline || result.RawDeclineCode != tc.raw ||
			!strings.HasPrefix(result.ProviderPaymentID, "pi_") {
			t.Errorf("%s: %+v", tc.number, result)
		}
	}
	if _, err := c.Charge(context.Background(), chargeOf(t, "4000000000000119", 4999)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("processing_error = %v, want an outage", err)
	}
}

func TestChargeIsIdempotentPerPayment(t *testing.T) {
	sandbox := newSandboxServer(t)
	c := sandbox.client()
	req := chargeOf(t, "4242424242424242", 1000)
	first, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Charge(context.Background(), req)
	if err != nil || again.ProviderPaymentID != first.ProviderPaymentID {
		t.Errorf("the same payment charged twice: %+v then %+v, %v", first, again, err)
	}
	if n := len(sandbox.intents); n != 1 {
		t.Errorf("%d payment intents, want 1", n)
	}
	// The same key with other parameters is refused at Stripe, and nothing is charged.
	req.Amount.Minor = 2000
	if _, err := c.Charge(context.Background(), req); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a key reused with another amount = %v", err)
	}
}

func TestRefunds(t *testing.T) {
	sandbox := newSandboxServer(t)
	c := sandbox.client()
	charged, err := c.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000))
	if err != nil {
		t.Fatal(err)
	}
	refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 600, Currency: "USD"}}
	first, err := c.Refund(context.Background(), refund)
	if err != nil || !strings.HasPrefix(first.ProviderRefundID, "re_") {
		t.Fatalf("refund = %+v, %v", first, err)
	}
	if again, err := c.Refund(context.Background(), refund); err != nil || again != first {
		t.Errorf("a retried refund = %+v, %v; want the first", again, err)
	}
	// 600 of 1000 refunded: 500 more is refused, and nothing is refunded.
	over := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 500, Currency: "USD"}}
	if _, err := c.Refund(context.Background(), over); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("refund over what is left = %v", err)
	}
	if sandbox.charged[charged.ProviderPaymentID] != 600 {
		t.Errorf("refunded %d, want 600", sandbox.charged[charged.ProviderPaymentID])
	}
}

// TestFailures: what cannot have charged is an outage (failover may try another provider);
// what may have is an unknown outcome, never an outage.
func TestFailures(t *testing.T) {
	sandbox := newSandboxServer(t)
	c := sandbox.client()

	sandbox.Outage.Store(true)
	before := sandbox.requests.Load()
	if _, err := c.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a 500 = %v", err)
	}
	if n := sandbox.requests.Load() - before; n != 1 {
		t.Errorf("a 500 was sent %d times; an answer is not retried", n)
	}
	sandbox.Outage.Store(false)

	wrongKey := sandbox.client()
	wrongKey.APIKey = ""
	wrongKey.HTTP = &http.Client{Transport: headerless{sandbox.server.Client().Transport}}
	if _, err := wrongKey.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("no API key = %v", err)
	}

	sandbox.Latency.Store(int64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := c.Charge(ctx, chargeOf(t, "4242424242424242", 1000))
	cancel()
	if err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a timeout = %v, want an unknown outcome", err)
	}
	sandbox.Latency.Store(0)

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + listener.Addr().String()
	listener.Close()
	refused := &Client{BaseURL: closed, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: http.DefaultClient, RetryWaits: []time.Duration{time.Millisecond}}}
	if _, err := refused.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a refused connection = %v", err)
	}
}

// TestNetworkRetriesReuseTheKey: a request cut in the network is sent again with its key, and
// Stripe charges once.
func TestNetworkRetriesReuseTheKey(t *testing.T) {
	sandbox := newSandboxServer(t)
	var drops atomic.Int32
	keys := make(chan string, 4)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		sandbox.ServeHTTP(w, r)
		if drops.Add(1) == 1 { // the first answer is lost after Stripe acted on it
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}
	}))
	defer flaky.Close()
	c := &Client{BaseURL: flaky.URL, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: flaky.Client(), RetryWaits: []time.Duration{time.Millisecond}}}
	result, err := c.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000))
	if err != nil || !result.Approved {
		t.Fatalf("charge through a dropped answer = %+v, %v", result, err)
	}
	if len(keys) != 2 {
		t.Fatalf("%d requests reached the server, want the first and its retry", len(keys))
	}
	first, second := <-keys, <-keys
	if first == "" || first != second {
		t.Errorf("keys %q then %q; a retry must send the attempt's key", first, second)
	}
	if n := len(sandbox.intents); n != 1 {
		t.Errorf("%d payment intents, want 1", n)
	}
}

// headerless drops the Authorization header, as a misconfigured client would send.
type headerless struct{ http.RoundTripper }

func (h headerless) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("Authorization")
	return h.RoundTripper.RoundTrip(r)
}
