package payment_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// TestHistoryReadWithThePayment: a payment read with its status history carries the same changes,
// every field of them, oldest first, as its history read on its own, in one round trip on
// PostgreSQL (two elsewhere), and both are its merchant's alone: a change filed under another
// merchant is in neither, and another merchant cannot read the payment.
func TestHistoryReadWithThePayment(t *testing.T) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.CountingSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.CountingPostgres
	}
	for name, open := range databases {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := allowed()
			svc := newService(db, providertest.Memory{}, 99999999)
			p, err := svc.Create(ctx, validInput())
			if err != nil {
				t.Fatal(err)
			}
			one := money.Decimal("1.00")
			if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: &one}); err != nil {
				t.Fatal(err)
			}

			// A change naming another merchant, as only a bug could write: held off like any other
			// merchant's row.
			if _, err := db.Ent.PaymentStatusChange.Create().SetMerchantID("mer_elsewhere").SetPaymentID(p.ID).
				SetTo(state.PaymentRefunded).SetAt(time.Now()).Save(tenant.System(ctx)); err != nil {
				t.Fatal(err)
			}

			alone, err := svc.Get(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			want, err := svc.StatusHistory(ctx, alone)
			if err != nil {
				t.Fatal(err)
			}
			var statuses []state.PaymentStatus
			for _, change := range want {
				statuses = append(statuses, change.To)
			}
			if !reflect.DeepEqual(statuses, []state.PaymentStatus{state.PaymentPending, state.PaymentProcessing,
				state.PaymentSucceeded, state.PaymentPartiallyRefunded}) {
				t.Fatalf("history read alone moves through %v", statuses)
			}

			before := db.RoundTrips()
			with, err := svc.GetWithHistory(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.StatusHistory(ctx, with)
			if err != nil {
				t.Fatal(err)
			}
			wantTrips := int64(2)
			if name == "postgres" {
				wantTrips = 1
			}
			if trips := db.RoundTrips() - before; trips != wantTrips {
				t.Errorf("the payment and its history took %d round trips; want %d", trips, wantTrips)
			}
			if len(got) != len(want) {
				t.Fatalf("history read with the payment has %d changes; want %d", len(got), len(want))
			}
			for i := range want {
				if describe(t, got[i]) != describe(t, want[i]) {
					t.Errorf("change %d read with the payment = %s; read alone = %s", i, describe(t, got[i]), describe(t, want[i]))
				}
			}
			if with.Status != alone.Status || with.AmountRefunded != alone.AmountRefunded || !with.UpdatedAt.Equal(alone.UpdatedAt) {
				t.Errorf("payment read with its history = %+v; read alone = %+v", with, alone)
			}

			elsewhere := auth.WithPrincipal(tenant.For(context.Background(), "mer_elsewhere"), auth.Principal{
				Subject: "usr_other", UserID: "usr_other", Role: "admin", Scopes: auth.ScopesOf("admin"), Merchant: "mer_elsewhere", Home: "mer_elsewhere"})
			if _, err := svc.GetWithHistory(elsewhere, p.ID); !hasCode(err, apierror.NotFound) {
				t.Errorf("another merchant reading the payment with its history: %v; want not found", err)
			}
		})
	}
}

// describe is every field of a status change (its JSON, as ent tags it, so that a field added to
// the schema is compared too) and its time's location.
func describe(t *testing.T, c *ent.PaymentStatusChange) string {
	text, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(text) + " " + c.At.Location().String()
}
