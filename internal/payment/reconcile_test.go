package payment_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// stuckLookups looks charges up, but cannot tell for the payments in stuck.
type stuckLookups struct {
	providertest.Memory
	stuck map[string]bool
}

func (l stuckLookups) LookupCharge(_ context.Context, paymentID string) (provider.ChargeResult, bool, error) {
	if l.stuck[paymentID] {
		return provider.ChargeResult{}, false, errors.New("cannot tell now")
	}
	return provider.ChargeResult{ProviderPaymentID: "ch_" + paymentID, Approved: true}, true, nil
}

func (stuckLookups) LookupRefund(context.Context, string, string, string) (provider.RefundStatus, error) {
	return provider.RefundPending, nil
}

// TestReconciliationPagesPastWhatItCannotSettle: payments the provider cannot tell about yet, the
// oldest, never hide the ones it can: not those past a page, and not those past what one pass
// asks about, which the next pass goes on to.
func TestReconciliationPagesPastWhatItCannotSettle(t *testing.T) {
	db := databasetest.SQLite(t)
	lookups := stuckLookups{stuck: map[string]bool{}}
	svc := newService(db, lookups, 99999999)
	ctx := databasetest.AsMerchant()
	start := time.Now().Add(-time.Hour)
	const stuck, settleable = 1000, 10
	creates := make([]*ent.PaymentCreate, 0, stuck+settleable)
	for i := range stuck + settleable {
		id := fmt.Sprintf("pay_%04d", i)
		if i < stuck {
			lookups.stuck[id] = true
		}
		creates = append(creates, db.Ent.Payment.Create().SetID(id).SetAmount(100).SetCurrency("USD").SetStatus(state.PaymentProcessing).
			SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
			SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("memory").
			SetCreatedAt(start.Add(time.Duration(i)*time.Millisecond)))
	}
	for batch := range slices.Chunk(creates, 100) {
		db.Ent.Payment.CreateBulk(batch...).ExecX(ctx)
	}
	first, err := svc.Reconcile(ctx, payment.Window{})
	if first.Payments != 0 || first.Left != stuck || err == nil {
		t.Errorf("first pass %+v, %v; want the %d stuck asked about, with their errors", first, err, stuck)
	}
	second, _ := svc.Reconcile(ctx, payment.Window{})
	if second.Payments != settleable {
		t.Errorf("second pass %+v; want the %d behind the stuck settled", second, settleable)
	}
	third, _ := svc.Reconcile(ctx, payment.Window{})
	if third.Payments != 0 || third.Left != stuck {
		t.Errorf("third pass %+v; want it to start over from the oldest", third)
	}
}

// slowLookup is the memory provider, taking captures to confirm later, whose look-up of a charge
// waits until release is closed and then finds it authorised, nothing captured: an answer given
// before the payment moved on, arriving late.
type slowLookup struct {
	countingCapturer
	asked, release chan struct{}
	askedOnce      sync.Once
}

func (l *slowLookup) LookupCharge(_ context.Context, id string) (provider.ChargeResult, bool, error) {
	l.askedOnce.Do(func() { close(l.asked) })
	<-l.release
	return provider.ChargeResult{ProviderPaymentID: "ch_" + id, Approved: true}, true, nil
}

func (*slowLookup) LookupRefund(context.Context, string, string, string) (provider.RefundStatus, error) {
	return provider.RefundPending, nil
}

// TestReconciliationLeavesACaptureAlone: reconciliation asks the provider about a charge in
// doubt; meanwhile the webhook authorises it and the merchant sends its capture. The late answer
// (authorised, nothing captured) is about the authorisation: the capture stays under way, and
// the payment is not counted settled.
func TestReconciliationLeavesACaptureAlone(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		lookup := &slowLookup{countingCapturer: countingCapturer{pending: true}, asked: make(chan struct{}), release: make(chan struct{})}
		svc := newClockedService(db, lookup, c)
		// Released once the capture is sent, or when the test ends early, so that the
		// reconciliation never waits on a test that gave up.
		release := sync.OnceFunc(func() { close(lookup.release) })
		t.Cleanup(release)
		created := c.Now().Add(-time.Hour)
		const id = "pay_inDoubtThenCaptured"
		db.Ent.Payment.Create().SetID(id).SetAmount(5000).SetCurrency("USD").SetStatus(state.PaymentProcessing).
			SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
			SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("memory").SetCaptureMethod(state.CaptureManual).
			SetCreatedAt(created).SetUpdatedAt(created).ExecX(databasetest.AsMerchant())
		type reconciled struct {
			settled int
			err     error
		}
		done := make(chan reconciled, 1)
		go func() {
			settled, err := svc.Reconcile(databasetest.AsMerchant(), payment.Window{InDoubtAfter: time.Minute, NotFoundAfter: time.Hour})
			done <- reconciled{settled.Payments, err}
		}()
		<-lookup.asked
		if err := applyNotification(db, svc, provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: id, ProviderPaymentID: "ch_" + id}); err != nil {
			t.Fatal(err)
		}
		sent, err := svc.Capture(allowed(), payment.CaptureInput{PaymentID: id})
		if err != nil || sent.Status != state.PaymentProcessing {
			t.Fatalf("capture = %+v, %v; want processing", sent, err)
		}
		release()
		if r := <-done; r.err != nil || r.settled != 0 {
			t.Errorf("reconciliation settled %d payments, %v; want none settled, no error", r.settled, r.err)
		}
		got := db.Ent.Payment.GetX(databasetest.AsMerchant(), id)
		if got.Status != state.PaymentProcessing || got.PendingAction == nil || *got.PendingAction != "capture" || got.AmountCapturable != 5000 {
			t.Errorf("after the late look-up the payment is %s (pending %v, capturable %d); want its capture under way",
				got.Status, got.PendingAction, got.AmountCapturable)
		}
	})
}
