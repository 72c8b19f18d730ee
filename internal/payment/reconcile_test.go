package payment_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"

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
