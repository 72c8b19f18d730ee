// Package providertest holds the conformance checks every provider adapter passes against its
// sandbox over real HTTP: the test cards' outcomes, one charge and one refund per idempotency key,
// and failures told apart as outages (nothing charged, another provider may be tried) or
// unknown outcomes (never failed over).
package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Adapter is an adapter under test, speaking to its sandbox.
type Adapter struct {
	Client provider.Provider
	// Unauthenticated is the same adapter without credentials.
	Unauthenticated provider.Provider
	Switches        *provider.SandboxSwitches
	// RawDeclines are the provider's own codes for the declining test cards, by card number.
	RawDeclines map[string]string
	// RefundsPending says the provider takes refunds to settle them later.
	RefundsPending bool
	// Twin is the same adapter speaking to another server of the same sandbox (over the same
	// database), as a second Paygate server would.
	Twin provider.Provider
}

// The test cards every sandbox knows.
const (
	Approved          = "4242424242424242"
	Declined          = "4000000000000002"
	InsufficientFunds = "4000000000009995"
	ExpiredCard       = "4000000000000069"
	ProviderError     = "4000000000000119"
)

// Charge is a charge of the card for minor units of EUR under a new payment id.
func Charge(t *testing.T, number string, minor int64) provider.ChargeRequest {
	t.Helper()
	c, err := card.Validate(card.Input{Number: number, ExpMonth: 3, ExpYear: time.Now().Year() + 4, CVC: "737"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return provider.ChargeRequest{PaymentID: prefixid.New("pay"), Amount: money.Amount{Minor: minor, Currency: "EUR"}, Card: c}
}

// Run checks a.
func Run(t *testing.T, a Adapter) {
	t.Run("outcomes", func(t *testing.T) { outcomes(t, a) })
	t.Run("idempotent", func(t *testing.T) { idempotent(t, a) })
	t.Run("failures", func(t *testing.T) { failures(t, a) })
	t.Run("concurrent", func(t *testing.T) { concurrent(t, a) })
}

// concurrent sends one payment through both servers at once, then refunds that together ask back
// more than it was: the sandbox charges once and refunds no more than it charged.
func concurrent(t *testing.T, a Adapter) {
	ctx := context.Background()
	servers := []provider.Provider{a.Client, a.Twin}
	if a.Twin == nil {
		servers = servers[:1]
	}
	const n = 8
	req := Charge(t, Approved, 1000)
	charges := make([]provider.ChargeResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { charges[i], errs[i] = servers[i%len(servers)].Charge(ctx, req) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !charges[i].Approved || charges[i].ProviderPaymentID != charges[0].ProviderPaymentID {
			t.Fatalf("charge %d of one payment sent at once = %+v, %v; want %+v", i, charges[i], errs[i], charges[0])
		}
	}
	taken := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			_, err := servers[i%len(servers)].Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"),
				ProviderPaymentID: charges[0].ProviderPaymentID, Amount: money.Amount{Minor: 300, Currency: "EUR"}})
			taken[i], errs[i] = err == nil, err
		})
	}
	wg.Wait()
	refunds := 0
	for i := range n {
		if taken[i] {
			refunds++
		} else if !errors.Is(errs[i], provider.ErrUnavailable) {
			t.Errorf("refund %d = %v, want taken or refused", i, errs[i])
		}
	}
	if refunds != 3 {
		t.Errorf("%d refunds of 3.00 taken from a charge of 10.00, want 3", refunds)
	}
}

func outcomes(t *testing.T, a Adapter) {
	ctx := context.Background()
	for _, tc := range []struct{ number, decline string }{
		{Approved, ""}, {Declined, "card_declined"}, {InsufficientFunds, "insufficient_funds"}, {ExpiredCard, "expired_card"},
	} {
		result, err := a.Client.Charge(ctx, Charge(t, tc.number, 4999))
		if err != nil || result.Approved != (tc.decline == "") || result.DeclineCode != tc.decline ||
			result.RawDeclineCode != a.RawDeclines[tc.number] || result.ProviderPaymentID == "" {
			t.Errorf("%s: %+v, %v", tc.number, result, err)
		}
	}
	if _, err := a.Client.Charge(ctx, Charge(t, ProviderError, 4999)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("the provider-error card = %v, want an outage", err)
	}
}

func idempotent(t *testing.T, a Adapter) {
	ctx := context.Background()
	req := Charge(t, Approved, 1000)
	first, err := a.Client.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.Client.Charge(ctx, req); err != nil || again != first {
		t.Errorf("the same payment charged again = %+v, %v; want %+v", again, err, first)
	}
	other := req
	other.Amount.Minor = 2000
	// The key has charged: another provider must not be tried, so this is no outage.
	if _, err := a.Client.Charge(ctx, other); err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a payment's key sent with another amount = %v, want an unknown outcome", err)
	}

	refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: first.ProviderPaymentID, Amount: money.Amount{Minor: 600, Currency: "EUR"}}
	taken, err := a.Client.Refund(ctx, refund)
	if err != nil || taken.ProviderRefundID == "" || taken.Pending != a.RefundsPending {
		t.Fatalf("refund = %+v, %v; want pending %v", taken, err, a.RefundsPending)
	}
	if again, err := a.Client.Refund(ctx, refund); err != nil || again != taken {
		t.Errorf("the same refund again = %+v, %v; want %+v", again, err, taken)
	}
	// 600 of 1000 asked back: 500 more is refused.
	over := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: first.ProviderPaymentID, Amount: money.Amount{Minor: 500, Currency: "EUR"}}
	if _, err := a.Client.Refund(ctx, over); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a refund over what is left = %v, want refused", err)
	}
	rest := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: first.ProviderPaymentID, Amount: money.Amount{Minor: 400, Currency: "EUR"}}
	if _, err := a.Client.Refund(ctx, rest); err != nil {
		t.Errorf("a refund of the rest = %v", err)
	}
}

func failures(t *testing.T, a Adapter) {
	ctx := context.Background()
	a.Switches.Outage.Store(true)
	if _, err := a.Client.Charge(ctx, Charge(t, Approved, 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("an outage (503) = %v", err)
	}
	a.Switches.Outage.Store(false)
	// A 500 may come after the work was done: never an outage.
	a.Switches.Fault.Store(true)
	if _, err := a.Client.Charge(ctx, Charge(t, Approved, 1000)); err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a fault (500) = %v, want an unknown outcome", err)
	}
	a.Switches.Fault.Store(false)
	if _, err := a.Unauthenticated.Charge(ctx, Charge(t, Approved, 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("no credentials = %v", err)
	}
	// A request cut off may have been processed: its outcome is unknown, never an outage.
	a.Switches.Latency.Store(int64(time.Second))
	defer a.Switches.Latency.Store(0)
	cut, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := a.Client.Charge(cut, Charge(t, Approved, 1000)); err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a timeout = %v, want an unknown outcome", err)
	}
}

// Serve serves h (a sandbox) over HTTP for the test, and returns its address and a caller for it
// that retries once.
func Serve(t *testing.T, h http.Handler) (string, provider.Caller) {
	t.Helper()
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	return server.URL, provider.Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}
}

// Canned is a server that answers every request with status and body, as a provider would in a
// state its sandbox does not reach; it returns the server's address and a caller for it.
func Canned(t *testing.T, status int, body string) (string, provider.Caller) {
	t.Helper()
	return Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
}

// Unknown reports whether err leaves the outcome unknown: an error that is not an outage.
func Unknown(err error) bool {
	return err != nil && !errors.Is(err, provider.ErrUnavailable)
}
