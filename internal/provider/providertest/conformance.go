// Package providertest holds the conformance checks every provider adapter passes against its
// sandbox over real HTTP: the test cards' outcomes, one charge and one refund per idempotency key,
// failures told apart as outages (nothing charged, another provider may be tried) or unknown
// outcomes (never failed over), look-ups that give the answers a charge or refund got, and
// refunds taken for later settled once, and as their amount says, by several servers at once.
package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
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
	// NoLookup says the provider answers no look-ups: the adapter is no provider.Reconciler.
	NoLookup bool
	// Clock is the sandboxes' clock, which the suite moves on to make pending refunds due.
	Clock *Clock
	// Settle settles what is due in Client's sandbox, TwinSettle in Twin's; set when
	// RefundsPending.
	Settle, TwinSettle func(ctx context.Context) (int, error)
	// Settlements hears of the refunds both sandboxes settle.
	Settlements *Settlements
	// CapturesPending says the provider takes captures and cancellations to confirm them later
	// by webhook.
	CapturesPending bool
}

// The test cards every sandbox knows.
const (
	Approved          = provider.ApprovedCard
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
	t.Run("capture", func(t *testing.T) { capture(t, a) })
	t.Run("cancel", func(t *testing.T) { cancel(t, a) })
	t.Run("capture_once", func(t *testing.T) { captureOnce(t, a) })
	t.Run("authentication", func(t *testing.T) { authentication(t, a) })
	// Every adapter looks charges up, Adyen's to say it cannot; only the providers that refund
	// later settle refunds.
	t.Run("lookups", func(t *testing.T) { lookups(t, a) })
	if a.RefundsPending {
		t.Run("settlement", func(t *testing.T) { settlement(t, a) })
		t.Run("settle_once", func(t *testing.T) { settleOnce(t, a) })
	}
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

// Authorize authorises minor units of EUR on the card, to be captured later, and returns the
// request and the provider's answer.
func Authorize(t *testing.T, c provider.Provider, number string, minor int64) (provider.ChargeRequest, provider.ChargeResult) {
	t.Helper()
	req := Charge(t, number, minor)
	req.CaptureManually = true
	result, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatalf("authorising %s: %v", number, err)
	}
	return req, result
}

// capturer is the adapter as a provider.Capturer.
func capturer(t *testing.T, c provider.Provider) provider.Capturer {
	t.Helper()
	capturer, ok := c.(provider.Capturer)
	if !ok {
		t.Fatalf("%T is no provider.Capturer", c)
	}
	return capturer
}

// capture checks an authorisation held, captured in part once (a repeat of its key answered
// alike, another capture refused), the rest released, and refunds bounded by what was captured;
// a capture above the authorisation refused; a declined card declined as ever; and a capture
// whose answer was lost left unknown, its retry answered without capturing twice.
func capture(t *testing.T, a Adapter) {
	ctx := context.Background()
	capturer := capturer(t, a.Client)
	req, held := Authorize(t, a.Client, Approved, 5000)
	if !held.Approved || held.Captured != 0 || held.Canceled || held.ProviderPaymentID == "" {
		t.Fatalf("authorisation = %+v, want approved and held", held)
	}
	reconciler, lookups := a.Client.(provider.Reconciler)
	if lookups {
		if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || found != held {
			t.Errorf("look-up of an authorisation = %+v, %v, %v; want %+v", found, ok, err, held)
		}
	}
	eur := func(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "EUR"} }
	captureOf := func(minor int64) provider.CaptureRequest {
		return provider.CaptureRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID, Amount: eur(minor), IdempotencyKey: prefixid.New("cap")}
	}
	if _, err := capturer.Capture(ctx, captureOf(5001)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a capture above the authorisation = %v, want refused", err)
	}
	if _, err := a.Client.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: held.ProviderPaymentID, Amount: eur(100)}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a refund of an authorisation not captured = %v, want refused", err)
	}
	part := captureOf(3000)
	captured, err := capturer.Capture(ctx, part)
	if err != nil || captured.Pending != a.CapturesPending {
		t.Fatalf("capture of 30.00 of 50.00 = %+v, %v; want pending %v", captured, err, a.CapturesPending)
	}
	if again, err := capturer.Capture(ctx, part); err != nil || again != captured {
		t.Errorf("the same capture again = %+v, %v; want %+v", again, err, captured)
	}
	if _, err := capturer.Capture(ctx, captureOf(1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a second capture = %v, want refused", err)
	}
	if _, err := capturer.Cancel(ctx, provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
		Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a cancellation of a captured payment = %v, want refused", err)
	}
	if lookups && !a.CapturesPending {
		if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || !found.Approved || found.Captured != 3000 {
			t.Errorf("look-up of a capture of 30.00 = %+v, %v, %v", found, ok, err)
		}
	}
	// What was not captured was released: refunds take no more than the 30.00 captured.
	if _, err := a.Client.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: held.ProviderPaymentID, Amount: eur(2000)}); err != nil {
		t.Errorf("a refund of 20.00 of the 30.00 captured = %v", err)
	}
	if _, err := a.Client.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: held.ProviderPaymentID, Amount: eur(1001)}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a refund beyond what was captured = %v, want refused", err)
	}

	declinedReq := Charge(t, Declined, 5000)
	declinedReq.CaptureManually = true
	if declined, err := a.Client.Charge(ctx, declinedReq); err != nil || declined.Approved || declined.DeclineCode != "card_declined" {
		t.Errorf("a declined card, captured manually = %+v, %v", declined, err)
	}

	// A capture whose answer is lost may have gone through: unknown, and its retry answers it.
	_, lostHeld := Authorize(t, a.Client, Approved, 2500)
	lost := provider.CaptureRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: lostHeld.ProviderPaymentID, Amount: eur(2500), IdempotencyKey: prefixid.New("cap")}
	a.Switches.LoseAnswers.Store(true)
	_, err = capturer.Capture(ctx, lost)
	a.Switches.LoseAnswers.Store(false)
	if !Unknown(err) {
		t.Errorf("a capture whose answer was lost = %v, want an unknown outcome", err)
	}
	if again, err := capturer.Capture(ctx, lost); err != nil || again.Pending != a.CapturesPending {
		t.Errorf("the retry of a capture whose answer was lost = %+v, %v", again, err)
	}
	a.Switches.Outage.Store(true)
	_, outageHeld := Authorize(t, a.Twin, Approved, 2500)
	if _, err := capturer.Capture(ctx, provider.CaptureRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: outageHeld.ProviderPaymentID,
		Amount: eur(2500), IdempotencyKey: prefixid.New("cap")}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a capture during an outage = %v, want refused", err)
	}
	a.Switches.Outage.Store(false)
}

// cancel checks an authorisation voided (a repeat of its key answered alike), then neither
// captured nor refunded, and found canceled by a look-up.
func cancel(t *testing.T, a Adapter) {
	ctx := context.Background()
	capturer := capturer(t, a.Client)
	req, held := Authorize(t, a.Client, Approved, 4000)
	void := provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID, Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}
	canceled, err := capturer.Cancel(ctx, void)
	if err != nil || canceled.Pending != a.CapturesPending {
		t.Fatalf("cancellation = %+v, %v; want pending %v", canceled, err, a.CapturesPending)
	}
	if again, err := capturer.Cancel(ctx, void); err != nil || again != canceled {
		t.Errorf("the same cancellation again = %+v, %v; want %+v", again, err, canceled)
	}
	if _, err := capturer.Capture(ctx, provider.CaptureRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
		Amount: money.Amount{Minor: 4000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a capture of a voided authorisation = %v, want refused", err)
	}
	if reconciler, ok := a.Client.(provider.Reconciler); ok && !a.CapturesPending {
		if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || !found.Canceled || found.Captured != 0 {
			t.Errorf("look-up of a voided authorisation = %+v, %v, %v; want canceled", found, ok, err)
		}
	}
	// A charge captured at once cannot be voided: it is refunded instead.
	charged, err := a.Client.Charge(ctx, Charge(t, Approved, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capturer.Cancel(ctx, provider.CancelRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: charged.ProviderPaymentID,
		Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a cancellation of a charge captured at once = %v, want refused", err)
	}
}

// captureOnce sends captures of one authorisation, each under its own key, and a cancellation
// through both servers at once: exactly one of them is taken.
func captureOnce(t *testing.T, a Adapter) {
	ctx := context.Background()
	servers := []provider.Provider{a.Client, a.Twin}
	if a.Twin == nil {
		servers = servers[:1]
	}
	req, held := Authorize(t, a.Client, Approved, 3000)
	capturers := make([]provider.Capturer, len(servers))
	for i, server := range servers {
		capturers[i] = capturer(t, server)
	}
	const n = 8
	taken := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := capturers[i%len(servers)]
			if i == 0 {
				_, errs[i] = c.Cancel(ctx, provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
					Reason: "duplicate", IdempotencyKey: prefixid.New("can")})
			} else {
				_, errs[i] = c.Capture(ctx, provider.CaptureRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
					Amount: money.Amount{Minor: int64(1000 + i), Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")})
			}
			taken[i] = errs[i] == nil
		})
	}
	wg.Wait()
	count := 0
	for i := range n {
		if taken[i] {
			count++
		} else if !errors.Is(errs[i], provider.ErrUnavailable) {
			t.Errorf("request %d = %v, want taken or refused", i, errs[i])
		}
	}
	if count != 1 {
		t.Errorf("%d of one capture and seven captures of one authorisation at once were taken, want 1", count)
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
	if _, err := a.Client.Charge(ctx, Charge(t, ProviderError, 4999)); !errors.Is(err, provider.ErrUnavailable) || !errors.Is(err, provider.ErrOutage) {
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
	// An answer lost after the provider charged leaves the outcome unknown; the charge is found by
	// a look-up, and a retry with the payment's key answers it without charging again.
	a.Switches.LoseAnswers.Store(true)
	lost := Charge(t, Approved, 1000)
	_, err := a.Client.Charge(ctx, lost)
	a.Switches.LoseAnswers.Store(false)
	if !Unknown(err) {
		t.Errorf("an answer lost after the charge = %v, want an unknown outcome", err)
	}
	if lookup, ok := a.Client.(provider.Reconciler); ok {
		found, ok, err := lookup.LookupCharge(ctx, lost.PaymentID)
		if err != nil || !ok || !found.Approved {
			t.Errorf("look-up of a charge whose answer was lost = %+v, %v, %v", found, ok, err)
		}
	}
	if again, err := a.Client.Charge(ctx, lost); err != nil || !again.Approved {
		t.Errorf("the retry of a charge whose answer was lost = %+v, %v", again, err)
	}
	a.Switches.Outage.Store(true)
	if _, err := a.Client.Charge(ctx, Charge(t, Approved, 1000)); !errors.Is(err, provider.ErrUnavailable) || !errors.Is(err, provider.ErrOutage) {
		t.Errorf("an outage (503) = %v", err)
	}
	a.Switches.Outage.Store(false)
	// A 500 may come after the work was done: never an outage.
	a.Switches.Fault.Store(true)
	if _, err := a.Client.Charge(ctx, Charge(t, Approved, 1000)); err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a fault (500) = %v, want an unknown outcome", err)
	}
	a.Switches.Fault.Store(false)
	// Credentials refused make the provider unusable: an outage, counted against its circuit.
	if _, err := a.Unauthenticated.Charge(ctx, Charge(t, Approved, 1000)); !errors.Is(err, provider.ErrUnavailable) || !errors.Is(err, provider.ErrOutage) {
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

// lookups checks that a look-up gives the answer the charge got, finds nothing for a payment never
// charged, tells a refund's state, and never reads a provider that cannot answer as "not found".
func lookups(t *testing.T, a Adapter) {
	reconciler, ok := a.Client.(provider.Reconciler)
	if ok == a.NoLookup {
		t.Fatalf("the adapter is a provider.Reconciler: %v; the provider has look-ups: %v", ok, !a.NoLookup)
	}
	if a.NoLookup {
		return
	}
	ctx := context.Background()
	for _, number := range []string{Approved, Declined, InsufficientFunds, ExpiredCard} {
		req := Charge(t, number, 4999)
		answered, err := a.Client.Charge(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", number, err)
		}
		if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || found != answered {
			t.Errorf("%s: look-up = %+v, found %v, %v; want %+v, the charge's answer", number, found, ok, err, answered)
		}
	}
	refused := Charge(t, ProviderError, 4999)
	a.Client.Charge(ctx, refused)
	if found, _, err := reconciler.LookupCharge(ctx, refused.PaymentID); err == nil && found.Approved {
		t.Errorf("a charge the provider could not process was found approved: %+v", found)
	}
	if found, ok, err := reconciler.LookupCharge(ctx, prefixid.New("pay")); err != nil || ok {
		t.Errorf("a payment never charged = %+v, found %v, %v; want not found", found, ok, err)
	}

	req := Charge(t, Approved, 5000)
	charged, err := a.Client.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 1000, Currency: "EUR"}}
	taken, err := a.Client.Refund(ctx, refund)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.RefundSucceeded
	if a.RefundsPending {
		want = provider.RefundPending
	}
	if status, err := reconciler.LookupRefund(ctx, refund.ProviderPaymentID, refund.RefundID, taken.ProviderRefundID); err != nil || status != want {
		t.Errorf("refund look-up = %q, %v; want %q", status, err, want)
	}
	if !a.RefundsPending {
		if status, err := reconciler.LookupRefund(ctx, refund.ProviderPaymentID, refund.RefundID, ""); err != nil || status != want {
			t.Errorf("refund look-up by Paygate's id = %q, %v; want %q", status, err, want)
		}
	}
	if status, err := reconciler.LookupRefund(ctx, refund.ProviderPaymentID, prefixid.New("re"), ""); err != nil || status != provider.RefundNotFound {
		t.Errorf("a refund never asked for = %q, %v; want not found", status, err)
	}

	// A provider that cannot answer never says "not found", which would settle what is not known.
	for name, on := range map[string]*atomic.Bool{"outage": &a.Switches.Outage, "fault": &a.Switches.Fault} {
		on.Store(true)
		if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err == nil {
			t.Errorf("%s: charge look-up = %+v, found %v; want an error", name, found, ok)
		}
		if status, err := reconciler.LookupRefund(ctx, refund.ProviderPaymentID, refund.RefundID, taken.ProviderRefundID); err == nil {
			t.Errorf("%s: refund look-up = %q; want an error", name, status)
		}
		on.Store(false)
	}
	if unauthenticated, ok := a.Unauthenticated.(provider.Reconciler); ok {
		if found, ok, err := unauthenticated.LookupCharge(ctx, req.PaymentID); err == nil {
			t.Errorf("no credentials: charge look-up = %+v, found %v; want an error", found, ok)
		}
	}
}

// settlement checks that refunds taken for later settle once they are due, not before: as
// succeeded, but a refund of provider.FailingRefundMinor as failed, whose amount can then be
// refunded again; each is reported once.
func settlement(t *testing.T, a Adapter) {
	ctx := context.Background()
	reconciler, _ := a.Client.(provider.Reconciler)
	charged, err := a.Client.Charge(ctx, Charge(t, Approved, 5000))
	if err != nil {
		t.Fatal(err)
	}
	refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 1000, Currency: "EUR"}}
	failing := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID,
		Amount: money.Amount{Minor: provider.FailingRefundMinor, Currency: "EUR"}}
	taken := map[string]provider.RefundResult{}
	for _, r := range []provider.RefundRequest{refund, failing} {
		if taken[r.RefundID], err = a.Client.Refund(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, r provider.RefundRequest, want provider.RefundStatus) {
		t.Helper()
		if reconciler == nil {
			return
		}
		for _, providerRefundID := range []string{taken[r.RefundID].ProviderRefundID, ""} {
			if want == provider.RefundPending && providerRefundID == "" {
				continue // a refund asked for by Paygate's id alone may not be listed until it settles
			}
			if status, err := reconciler.LookupRefund(ctx, r.ProviderPaymentID, r.RefundID, providerRefundID); err != nil || status != want {
				t.Errorf("%s: refund of %d (provider's id %q) = %q, %v; want %q", when, r.Amount.Minor, providerRefundID, status, err, want)
			}
		}
	}

	if _, err := a.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	check("before it is due", refund, provider.RefundPending)
	check("before it is due", failing, provider.RefundPending)
	if reports := a.Settlements.Of(taken[refund.RefundID].ProviderRefundID); len(reports) != 0 {
		t.Errorf("settled before it was due: %+v", reports)
	}

	a.Clock.Advance(provider.DefaultSettleAfter + time.Second)
	if n, err := a.Settle(ctx); err != nil || n < 2 {
		t.Fatalf("settled %d, %v; want both refunds", n, err)
	}
	check("settled", refund, provider.RefundSucceeded)
	check("settled", failing, provider.RefundFailed)
	for _, r := range []provider.RefundRequest{refund, failing} {
		reports := a.Settlements.Of(taken[r.RefundID].ProviderRefundID)
		if len(reports) != 1 || reports[0].Succeeded != (r.Amount.Minor != provider.FailingRefundMinor) || reports[0].RefundID != r.RefundID ||
			reports[0].ProviderPaymentID != r.ProviderPaymentID || reports[0].Amount != r.Amount {
			t.Errorf("refund of %d reported %+v, want once, as settled", r.Amount.Minor, reports)
		}
	}
	// 1000 of 5000 refunded; the failed refund gave its 13.13 back.
	rest := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 4000, Currency: "EUR"}}
	if _, err := a.Client.Refund(ctx, rest); err != nil {
		t.Errorf("a refund of the rest after a failed refund = %v", err)
	}
}

// settleOnce settles refunds through both servers at once, twice each: every refund is settled,
// and reported, once.
func settleOnce(t *testing.T, a Adapter) {
	if a.TwinSettle == nil {
		t.Fatal("an adapter whose refunds settle later needs TwinSettle")
	}
	ctx := context.Background()
	charged, err := a.Client.Charge(ctx, Charge(t, Approved, 100000))
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	refunds := make([]provider.RefundRequest, n)
	ids := make([]string, n)
	for i := range n {
		refunds[i] = provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 1000, Currency: "EUR"}}
		if i%4 == 0 {
			refunds[i].Amount.Minor = provider.FailingRefundMinor
		}
		taken, err := []provider.Provider{a.Client, a.Twin}[i%2].Refund(ctx, refunds[i])
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = taken.ProviderRefundID
	}
	a.Clock.Advance(provider.DefaultSettleAfter + time.Second)
	before := a.Settlements.Count()
	settlers := []func(context.Context) (int, error){a.Settle, a.TwinSettle, a.Settle, a.TwinSettle}
	settled := make([]int, len(settlers))
	errs := make([]error, len(settlers))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, settle := range settlers {
		wg.Go(func() {
			<-start
			settled[i], errs[i] = settle(ctx)
		})
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range settlers {
		if errs[i] != nil {
			t.Errorf("settlement %d: %v", i, errs[i])
		}
		total += settled[i]
	}
	if reported := a.Settlements.Count() - before; total != reported || total < n {
		t.Errorf("settled %d, reported %d; want the same, and all %d refunds", total, reported, n)
	}
	for i, id := range ids {
		reports := a.Settlements.Of(id)
		if len(reports) != 1 || reports[0].Succeeded != (refunds[i].Amount.Minor != provider.FailingRefundMinor) {
			t.Errorf("refund %d of %d reported %d times (%+v), want once, as its amount says", i, refunds[i].Amount.Minor, len(reports), reports[:min(len(reports), 1)])
		}
	}
	if repeated := a.Settlements.Repeated(); len(repeated) != 0 {
		t.Errorf("refunds settled more than once: %v", repeated)
	}
	// Nine refunds of 10.00 went through; the three that failed gave their amounts back.
	rest := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 91000, Currency: "EUR"}}
	if _, err := a.Client.Refund(ctx, rest); err != nil {
		t.Errorf("a refund of the rest = %v", err)
	}
}

// Clock is a sandbox's clock that stands still until the test moves it on, so that the test
// decides what is due.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at the present.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Settlements records the refunds sandboxes report settled, by the provider's refund id.
type Settlements struct {
	mu      sync.Mutex
	reports map[string][]provider.SettledRefund
	count   int
}

// Record is a sandbox's Settled hook.
func (s *Settlements) Record(_ context.Context, refund provider.SettledRefund) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reports == nil {
		s.reports = map[string][]provider.SettledRefund{}
	}
	s.reports[refund.ProviderRefundID] = append(s.reports[refund.ProviderRefundID], refund)
	s.count++
}

// Of returns the reports of one refund.
func (s *Settlements) Of(providerRefundID string) []provider.SettledRefund {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.SettledRefund(nil), s.reports[providerRefundID]...)
}

// Count is how many reports were recorded.
func (s *Settlements) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Repeated returns the refunds reported more than once.
func (s *Settlements) Repeated() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var repeated []string
	for id, reports := range s.reports {
		if len(reports) > 1 {
			repeated = append(repeated, id)
		}
	}
	return repeated
}
