package payment_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// countingCapturer captures and cancels as the memory provider does, a little slowly so that
// requests sent together are in flight together, and counts what it was asked.
type countingCapturer struct {
	providertest.Memory
	captures, cancels atomic.Int32
	// pending makes it take captures and cancellations to confirm them later, as Adyen does.
	pending bool
}

func (c *countingCapturer) Capture(ctx context.Context, req provider.CaptureRequest) (provider.CaptureResult, error) {
	c.captures.Add(1)
	_, err := c.Memory.Capture(ctx, req)
	return provider.CaptureResult{Pending: c.pending}, err
}

func (c *countingCapturer) Cancel(ctx context.Context, req provider.CancelRequest) (provider.CancelResult, error) {
	c.cancels.Add(1)
	_, err := c.Memory.Cancel(ctx, req)
	return provider.CancelResult{Pending: c.pending}, err
}

// clock is a test clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newClockedService is the payment service over db, paying through p, on clock c.
func newClockedService(db *database.DB, p provider.Provider, c *clock) *payment.Service {
	keys := idempotency.NewStore(db.Ent, fingerprintKey, c.Now)
	svc := payment.NewService(db, keys, only(p, c.Now), fingerprintKey, 99999999, c.Now)
	svc.Logger = slog.New(slog.DiscardHandler)
	return svc
}

func manualInput() payment.CreateInput {
	in := validInput()
	in.Amount, in.CaptureMethod = "50.00", state.CaptureManual
	return in
}

func decimal(text string) *money.Decimal { d := money.Decimal(text); return &d }

// TestAuthorizeThenCapture: a manual payment is authorised and held; it is refunded only once
// captured, captured once, in part, up to what it holds; refunds give back at most what was
// captured.
func TestAuthorizeThenCapture(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		p := &countingCapturer{}
		svc := newClockedService(db, p, c)
		held, err := svc.Create(ctx, manualInput())
		if err != nil || held.Status != state.PaymentRequiresCapture || held.AmountCapturable != 5000 || held.AmountCaptured != 0 ||
			held.CaptureBefore == nil || !held.CaptureBefore.Equal(c.Now().Add(payment.DefaultCaptureWindow)) {
			t.Fatalf("manual payment = %+v, %v; want requires_capture holding 50.00 for 7 days", held, err)
		}
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("refund before capture = %v, want invalid_state", err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID, Amount: decimal("50.01")}); !hasCode(err, apierror.CaptureExceedsAuthorization) {
			t.Errorf("capture above the authorisation = %v, want capture_exceeds_authorization", err)
		}
		for _, bad := range []string{"0", "-1", "1.001"} {
			if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID, Amount: decimal(bad)}); !hasCode(err, apierror.InvalidAmount) {
				t.Errorf("capture of %s = %v, want invalid_amount", bad, err)
			}
		}
		key := "capture-once"
		captured, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID, Amount: decimal("30.00"), IdempotencyKey: &key})
		if err != nil || captured.Status != state.PaymentSucceeded || captured.AmountCaptured != 3000 || captured.AmountCapturable != 0 || captured.PendingAction != nil {
			t.Fatalf("capture of 30.00 = %+v, %v", captured, err)
		}
		if again, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID, Amount: decimal("30.00"), IdempotencyKey: &key}); err != nil || again.AmountCaptured != 3000 {
			t.Errorf("the capture's retry = %+v, %v", again, err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("a second capture = %v, want invalid_state", err)
		}
		if _, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("cancel after capture = %v, want invalid_state", err)
		}
		if n := p.captures.Load(); n != 1 {
			t.Errorf("%d captures sent to the provider, want 1", n)
		}
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: held.ID, Amount: decimal("30.01")}); !hasCode(err, apierror.RefundExceedsPayment) {
			t.Errorf("refund above what was captured = %v, want refund_exceeds_payment", err)
		}
		if r, err := svc.Refund(ctx, payment.RefundInput{PaymentID: held.ID}); err != nil || r.Amount != 3000 {
			t.Errorf("refund of the rest = %+v, %v; want 30.00", r, err)
		}
		if after, _ := svc.Get(ctx, held.ID); after.Status != state.PaymentRefunded || after.AmountRefunded != 3000 {
			t.Errorf("after refunding all that was captured: %s with %d refunded", after.Status, after.AmountRefunded)
		}
		history, err := db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(held.ID)).
			Order(ent.Asc(paymentstatuschange.FieldID)).All(ctx) // ids sort by creation; the test clock stands still
		if err != nil {
			t.Fatal(err)
		}
		var moves []state.PaymentStatus
		for _, change := range history {
			moves = append(moves, change.To)
		}
		want := []state.PaymentStatus{state.PaymentPending, state.PaymentProcessing, state.PaymentRequiresCapture, state.PaymentProcessing, state.PaymentSucceeded, state.PaymentRefunded}
		if len(moves) != len(want) {
			t.Fatalf("history %v, want %v", moves, want)
		}
		for i := range want {
			if moves[i] != want[i] {
				t.Errorf("history %v, want %v", moves, want)
				break
			}
		}
		// A payment captured at once is no authorisation.
		auto, err := svc.Create(ctx, validInput())
		if err != nil || auto.Status != state.PaymentSucceeded || auto.AmountCaptured != auto.Amount || auto.CaptureMethod != state.CaptureAutomatic {
			t.Fatalf("automatic payment = %+v, %v", auto, err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: auto.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("capture of a payment captured at once = %v, want invalid_state", err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: "pay_missing"}); !hasCode(err, apierror.NotFound) {
			t.Errorf("capture of no payment = %v, want not_found", err)
		}
		bad := manualInput()
		bad.CaptureMethod = "later"
		if _, err := svc.Create(ctx, bad); !hasCode(err, apierror.InvalidRequest) {
			t.Errorf("capture method later = %v, want invalid_request", err)
		}
	})
}

// TestCancelAndExpiry: an authorisation is voided once, on request or when capture_before passes,
// and a pending capture is confirmed or refused by the provider's events.
func TestCancelAndExpiry(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		p := &countingCapturer{}
		svc := newClockedService(db, p, c)
		held, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		reason := state.CanceledAsDuplicate
		canceled, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID, Reason: &reason})
		if err != nil || canceled.Status != state.PaymentCanceled || *canceled.CancellationReason != reason || canceled.CanceledAt == nil || canceled.AmountCapturable != 0 {
			t.Fatalf("cancel = %+v, %v", canceled, err)
		}
		if _, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("a second cancel = %v, want invalid_state", err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("capture after cancel = %v, want invalid_state", err)
		}
		expired := state.CanceledExpired
		if _, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID, Reason: &expired}); !hasCode(err, apierror.InvalidRequest) {
			t.Errorf("cancel giving Paygate's own reason = %v, want invalid_request", err)
		}

		lapsing, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		kept, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		if n, err := svc.ExpireAuthorizations(ctx); err != nil || n != 0 {
			t.Errorf("expiry before capture_before = %d, %v; want none", n, err)
		}
		c.Advance(payment.DefaultCaptureWindow - time.Minute)
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: kept.ID}); err != nil {
			t.Fatal(err)
		}
		c.Advance(2 * time.Minute)
		if n, err := svc.ExpireAuthorizations(ctx); err != nil || n != 1 {
			t.Errorf("expiry after capture_before = %d, %v; want 1", n, err)
		}
		if got, _ := svc.Get(ctx, lapsing.ID); got.Status != state.PaymentCanceled || *got.CancellationReason != state.CanceledExpired {
			t.Errorf("lapsed authorisation: %s (%v), want canceled as expired", got.Status, got.CancellationReason)
		}
		if got, _ := svc.Get(ctx, kept.ID); got.Status != state.PaymentSucceeded {
			t.Errorf("captured in time: %s, want succeeded", got.Status)
		}
		if n, err := svc.ExpireAuthorizations(ctx); err != nil || n != 0 {
			t.Errorf("expiry again = %d, %v; want none", n, err)
		}
		if n := p.cancels.Load(); n != 2 {
			t.Errorf("%d cancellations sent, want 2", n)
		}
	})
}

// TestCaptureConfirmedLater: at a provider that confirms captures by webhook, the capture leaves
// the payment processing until the event settles it; a refused capture gives the authorisation
// back; events that come late or twice change nothing.
func TestCaptureConfirmedLater(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		svc := newClockedService(db, &countingCapturer{pending: true}, c)
		n := &notified{t: t, db: db, svc: svc, now: c.Now()}
		held, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		sent, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID, Amount: decimal("20.00")})
		if err != nil || sent.Status != state.PaymentProcessing || sent.PendingAction == nil {
			t.Fatalf("capture taken to confirm later = %+v, %v; want processing", sent, err)
		}
		if _, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("cancel while a capture is under way = %v, want invalid_state", err)
		}
		// The authorisation's own event, late, is not the capture's.
		if applied := n.apply("memory", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: held.ID}); applied.Ignored == "" {
			t.Errorf("a late authorisation event during the capture was applied: %+v", applied)
		}
		refused := n.apply("memory", provider.Notification{Kind: provider.CaptureFailed, PaymentID: held.ID, Reason: "insufficient balance"})
		if got := n.get(held.ID); refused.Ignored != "" || got.Status != state.PaymentRequiresCapture || got.PendingAction != nil || got.AmountCapturable != 5000 {
			t.Errorf("capture refused: %+v; payment %s pending %v capturable %d", refused, got.Status, got.PendingAction, got.AmountCapturable)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID}); err != nil {
			t.Fatal(err)
		}
		confirmed := n.apply("memory", provider.Notification{Kind: provider.Captured, PaymentID: held.ID, Amount: 5000, Currency: "USD"})
		if got := n.get(held.ID); confirmed.Ignored != "" || got.Status != state.PaymentSucceeded || got.AmountCaptured != 5000 {
			t.Errorf("capture confirmed: %+v; payment %s captured %d", confirmed, got.Status, got.AmountCaptured)
		}
		if again := n.apply("memory", provider.Notification{Kind: provider.Captured, PaymentID: held.ID, Amount: 5000, Currency: "USD"}); again.Ignored != "" || again.NeedsAttention {
			t.Errorf("the same capture again: %+v", again)
		}
		if other := n.apply("memory", provider.Notification{Kind: provider.Captured, PaymentID: held.ID, Amount: 4000, Currency: "USD"}); !other.NeedsAttention {
			t.Errorf("a capture of another amount: %+v, want attention", other)
		}
		if voided := n.apply("memory", provider.Notification{Kind: provider.Canceled, PaymentID: held.ID}); !voided.NeedsAttention {
			t.Errorf("a captured payment reported canceled: %+v, want attention", voided)
		}

		// Voided at the provider: an authorisation held is canceled, and stays so.
		other, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		if applied := n.apply("memory", provider.Notification{Kind: provider.Canceled, PaymentID: other.ID}); applied.Ignored != "" {
			t.Errorf("voided at the provider: %+v", applied)
		}
		if late := n.apply("memory", provider.Notification{Kind: provider.Captured, PaymentID: other.ID, Amount: 5000, Currency: "USD"}); !late.NeedsAttention {
			t.Errorf("a canceled payment reported captured: %+v, want attention", late)
		}
		if got := n.get(other.ID); got.Status != state.PaymentCanceled {
			t.Errorf("voided at the provider: %s", got.Status)
		}
	})
}

// TestCaptureOnce: captures of one authorisation sent at once through two servers capture it
// once; a capture racing a cancellation leaves exactly one of them.
func TestCaptureOnce(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		p := &countingCapturer{Memory: providertest.Memory{Latency: 20 * time.Millisecond}}
		c := &clock{now: time.Now().UTC()}
		servers := []*payment.Service{newClockedService(db, p, c), newClockedService(db, p, c)}
		for round := range 3 {
			held, err := servers[0].Create(ctx, manualInput())
			if err != nil {
				t.Fatal(err)
			}
			const n = 6
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					svc := servers[i%2]
					if round > 0 && i == 0 {
						_, errs[i] = svc.Cancel(ctx, payment.CancelInput{PaymentID: held.ID})
					} else {
						_, errs[i] = svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID})
					}
				})
			}
			wg.Wait()
			taken := 0
			for i, err := range errs {
				switch {
				case err == nil:
					taken++
				case !hasCode(err, apierror.InvalidState) && !hasCode(err, apierror.IdempotencyKeyInUse):
					t.Errorf("round %d, request %d: %v", round, i, err)
				}
			}
			got, _ := servers[1].Get(ctx, held.ID)
			if taken != 1 || (got.Status != state.PaymentSucceeded && got.Status != state.PaymentCanceled) {
				t.Errorf("round %d: %d of %d requests taken, payment %s; want exactly one", round, taken, n, got.Status)
			}
		}
		if sent := p.captures.Load() + p.cancels.Load(); sent != 3 {
			t.Errorf("%d captures and cancellations sent to the provider for 3 authorisations, want 3", sent)
		}
	})
}

// lateCharger is the memory provider, taking captures to confirm later, whose answer to a charge
// waits until release is closed: the answer to a create that the provider's event overtook.
type lateCharger struct {
	countingCapturer
	asked, release chan struct{}
	askedOnce      sync.Once
	charged        provider.ChargeRequest
	answer         provider.ChargeResult
}

func (l *lateCharger) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	answer, err := l.Memory.Charge(ctx, req)
	l.charged, l.answer = req, answer
	l.askedOnce.Do(func() { close(l.asked) })
	<-l.release
	return answer, err
}

// TestLateChargeAnswerLeavesACaptureAlone: a manual payment's charge is answered late, after the
// provider's event authorised it (once the create's grace had passed) and the merchant sent its
// capture. The create's answer is about the authorisation: the capture stays under way, and the
// create answers the payment as it is.
func TestLateChargeAnswerLeavesACaptureAlone(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		charger := &lateCharger{countingCapturer: countingCapturer{pending: true}, asked: make(chan struct{}), release: make(chan struct{})}
		svc := newClockedService(db, charger, c)
		// Released once the capture is sent, or when the test ends early, so that the create
		// never waits on a test that gave up.
		release := sync.OnceFunc(func() { close(charger.release) })
		t.Cleanup(release)
		type created struct {
			payment *ent.Payment
			err     error
		}
		done := make(chan created, 1)
		go func() {
			p, err := svc.Create(allowed(), manualInput())
			done <- created{p, err}
		}()
		<-charger.asked
		id := charger.charged.PaymentID
		// Past the grace by a minute: the payment's created_at is the wall clock's, which runs on
		// from the test clock's start however slowly a loaded machine creates the payment.
		c.Advance(payment.InFlightGrace + time.Minute)
		if err := applyNotification(db, svc, provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: id, ProviderPaymentID: charger.answer.ProviderPaymentID}); err != nil {
			t.Fatal(err)
		}
		if sent, err := svc.Capture(allowed(), payment.CaptureInput{PaymentID: id}); err != nil || sent.Status != state.PaymentProcessing {
			t.Fatalf("capture = %+v, %v; want processing", sent, err)
		}
		release()
		if r := <-done; r.err != nil || r.payment.ID != id || r.payment.Status != state.PaymentProcessing {
			t.Errorf("create = %+v, %v; want the payment being captured", r.payment, r.err)
		}
		got := db.Ent.Payment.GetX(databasetest.AsMerchant(), id)
		if got.Status != state.PaymentProcessing || got.PendingAction == nil || *got.PendingAction != "capture" {
			t.Errorf("after the late answer the payment is %s (pending %v); want its capture under way", got.Status, got.PendingAction)
		}
	})
}
