package database_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// seedPayment writes a processing payment of 10.00 USD with id, in ctx's merchant.
func seedPayment(t *testing.T, ctx context.Context, client *ent.Client, id string) {
	t.Helper()
	made := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := client.Payment.Create().SetID(id).SetAmount(1000).SetCurrency("USD").SetStatus(state.PaymentProcessing).
		SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
		SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("stripe").
		SetFailureCode("earlier").SetPendingAction(payment.PendingActionCapture).SetCaptureRequested(500).
		SetMetadata(map[string]string{"order": "1"}).SetCreatedAt(made).SetUpdatedAt(made).Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateStatementIsSaves: an update rendered by UpdateStatement, run with ent's ExecContext,
// is the statement Save runs, word for word, and changes the same rows in the same way, its hooks
// (the merchant's guard) and defaults applied: set, cleared and added columns, JSON among them;
// one row, none, several, and none of another merchant's.
func TestUpdateStatementIsSaves(t *testing.T) {
	at := time.Date(2031, 5, 6, 7, 8, 9, 10000, time.UTC)
	rule := "cheapest"
	cases := []struct {
		name string
		// rows is how many payments each way updates, owner whose they are.
		rows   int
		owner  string
		update func(client *ent.Client, ids []string) *ent.PaymentUpdate
		want   int
	}{
		{"every kind of change", 1, tenant.DefaultMerchant, func(client *ent.Client, ids []string) *ent.PaymentUpdate {
			return client.Payment.Update().Where(payment.IDIn(ids...), payment.StatusEQ(state.PaymentProcessing)).
				SetStatus(state.PaymentSucceeded).SetUpdatedAt(at).SetProviderPaymentID("ch_1").
				SetRouting(&state.RoutingDecision{Rule: &rule, Attempts: []state.RoutingAttempt{{Provider: "stripe", Outcome: "approved", LatencyMS: 12}}}).
				SetMetadata(map[string]string{"order": "2", "note": `"quoted"`}).
				ClearFailureCode().ClearPendingAction().ClearCaptureRequested().
				AddAmountCaptured(1000).SetCaptureBefore(at.Add(time.Hour))
		}, 1},
		{"a condition unmet", 1, tenant.DefaultMerchant, func(client *ent.Client, ids []string) *ent.PaymentUpdate {
			return client.Payment.Update().Where(payment.IDIn(ids...), payment.StatusEQ(state.PaymentFailed)).
				SetStatus(state.PaymentSucceeded).SetUpdatedAt(at)
		}, 0},
		{"several rows", 3, tenant.DefaultMerchant, func(client *ent.Client, ids []string) *ent.PaymentUpdate {
			return client.Payment.Update().Where(payment.IDIn(ids...)).SetUpdatedAt(at).AddAmountRefunded(7).SetDescription("both")
		}, 3},
		{"another merchant's", 1, "mer_other", func(client *ent.Client, ids []string) *ent.PaymentUpdate {
			return client.Payment.Update().Where(payment.IDIn(ids...)).SetUpdatedAt(at).SetStatus(state.PaymentFailed)
		}, 0},
	}
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		var mu sync.Mutex
		var sent []string
		recording := databasetest.RecordingClient(db, func(query string) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, query)
		})
		for _, tc := range cases {
			var rendered, saved []string
			for range tc.rows {
				rendered, saved = append(rendered, prefixid.New("pay")), append(saved, prefixid.New("pay"))
				seedPayment(t, tenant.For(context.Background(), tc.owner), db.Ent, rendered[len(rendered)-1])
				seedPayment(t, tenant.For(context.Background(), tc.owner), db.Ent, saved[len(saved)-1])
			}

			statement, err := tc.update(db.Ent, rendered).UpdateStatement(ctx)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			tx, err := db.Ent.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			result, err := tx.ExecContext(ctx, statement.Query, statement.Args...)
			if err != nil {
				tx.Rollback()
				t.Fatalf("%s: running %s: %v", tc.name, statement.Query, err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			affected, err := result.RowsAffected()
			if err != nil {
				t.Fatal(err)
			}

			mu.Lock()
			sent = nil
			mu.Unlock()
			n, err := tc.update(recording, saved).Save(ctx)
			if err != nil {
				t.Fatalf("%s: saving: %v", tc.name, err)
			}
			mu.Lock()
			savedQueries := slices.Clone(sent)
			mu.Unlock()

			if int(affected) != tc.want || n != tc.want {
				t.Errorf("%s: the rendered update changed %d rows, Save %d; want %d", tc.name, affected, n, tc.want)
			}
			if len(savedQueries) != 1 || savedQueries[0] != statement.Query {
				t.Errorf("%s: rendered\n%s\nSave ran %q", tc.name, statement.Query, savedQueries)
			}
			everyone := tenant.System(context.Background())
			for i := range rendered {
				a, b := db.Ent.Payment.GetX(everyone, rendered[i]), db.Ent.Payment.GetX(everyone, saved[i])
				a.ID, b.ID = "", ""
				if got, want := asJSON(t, a), asJSON(t, b); got != want {
					t.Errorf("%s: rendered and run\n%s\nsaved\n%s", tc.name, got, want)
				}
			}
		}
	})
}

// TestUpdateStatementRefusesWhatItCannotRender: an update of edges, or with a modifier, is
// refused rather than rendered as less than Save runs; its hooks and defaults run as Save's do.
func TestUpdateStatementRefusesWhatItCannotRender(t *testing.T) {
	db := databasetest.SQLite(t)
	ctx := databasetest.AsMerchant()
	if _, err := db.Ent.Payment.Update().Where(payment.ID("pay_x")).AddStatusHistoryIDs("psc_x").UpdateStatement(ctx); err == nil {
		t.Error("an update adding to an edge was rendered")
	}
	if _, err := db.Ent.Payment.Update().Where(payment.ID("pay_x")).SetDescription("d").
		Modify(func(u *entsql.UpdateBuilder) { u.Set("amount", 1) }).UpdateStatement(ctx); err == nil {
		t.Error("an update with a modifier was rendered")
	}
	if _, err := db.Ent.Payment.Update().SetDescription("d").UpdateStatement(context.Background()); !errors.Is(err, tenant.ErrNoMerchant) {
		t.Errorf("rendering in a context of nobody: %v; want %v", err, tenant.ErrNoMerchant)
	}
	statement, err := db.Ent.Payment.Update().Where(payment.ID("pay_x")).SetDescription("d").UpdateStatement(ctx)
	if err != nil || !strings.Contains(statement.Query, "`updated_at` = ?") || !strings.Contains(statement.Query, "`merchant_id` = ?") {
		t.Errorf("rendered %q, %v; want the default's updated_at and the guard's merchant", statement.Query, err)
	}
}
