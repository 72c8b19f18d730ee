package payment_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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

// TestReconciliationPagesPastWhatItCannotSettle: more payments than a page that the provider
// cannot tell about yet, the oldest, never hide the ones it can.
func TestReconciliationPagesPastWhatItCannotSettle(t *testing.T) {
	db := databasetest.SQLite(t)
	lookups := stuckLookups{stuck: map[string]bool{}}
	svc := newService(db, lookups, 99999999)
	ctx := context.Background()
	start := time.Now().Add(-time.Hour)
	const stuck, settleable = 150, 10
	for i := range stuck + settleable {
		id := fmt.Sprintf("pay_%04d", i)
		if i < stuck {
			lookups.stuck[id] = true
		}
		db.Ent.Payment.Create().SetID(id).SetAmount(100).SetCurrency("USD").SetStatus(state.PaymentProcessing).
			SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
			SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("memory").
			SetCreatedAt(start.Add(time.Duration(i) * time.Millisecond)).ExecX(ctx)
	}
	done, err := svc.Reconcile(ctx, payment.Window{})
	if done.Payments != settleable || done.Left != stuck || err == nil {
		t.Errorf("reconciled %+v, %v; want %d settled and %d left, with their errors", done, err, settleable, stuck)
	}
}
