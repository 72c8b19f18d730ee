package payment_test

import (
	"context"
	"os"
	"reflect"
	"testing"

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
// oldest first, as its history read on its own, in one round trip on PostgreSQL (two elsewhere),
// and stays its merchant's alone.
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
				if describe(got[i]) != describe(want[i]) {
					t.Errorf("change %d read with the payment = %s; read alone = %s", i, describe(got[i]), describe(want[i]))
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

// describe is every field of a status change, its time to the microsecond the database keeps.
func describe(c *ent.PaymentStatusChange) string {
	from := "<nil>"
	if c.From != nil {
		from = string(*c.From)
	}
	return c.ID + " " + c.MerchantID + " " + c.PaymentID + " " + from + "->" + string(c.To) + " " + c.Reason + " " +
		c.Actor + " " + c.At.Format("2006-01-02T15:04:05.000000Z07:00") + " " + c.At.Location().String()
}
