package database_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// claimOf is the create of an idempotency key named key.
func claimOf(client *ent.Client, key string) *ent.IdempotencyKeyCreate {
	now := time.Now().UTC()
	return client.IdempotencyKey.Create().SetPrincipal("usr_together").SetKey(key).SetRequestHash("h").
		SetExpiresAt(now.Add(time.Hour)).SetCreatedAt(now)
}

// TestAUniqueViolationIsTheStatementsError: in an ent transaction, on SQLite and PostgreSQL alike,
// an insert that a unique index refuses fails where it runs, as ent.IsConstraintError, not later
// at the commit.
func TestAUniqueViolationIsTheStatementsError(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		if err := claimOf(db.Ent, "taken").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		tx, err := db.Ent.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		err = claimOf(tx.Client(), "taken").Exec(ctx)
		if !ent.IsConstraintError(err) || !database.IsUniqueViolation(err) {
			t.Fatalf("inserting a key taken: %v; want a constraint error at the insert", err)
		}
	})
}

// TestStatementsRunTogether: rows rendered by InsertStatement and run by ExecTogether are what
// ent's Save would have written (its defaults and its hooks, the merchant's among them, applied),
// and a statement refused leaves nothing of the others written, its error naming it.
func TestStatementsRunTogether(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		id := prefixid.New("pay")
		made, insert, err := db.Ent.Payment.Create().SetID(id).
			SetAmount(1999).SetCurrency("USD").SetStatus(state.PaymentProcessing).SetPaymentMethod("credit_card").
			SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").SetCardExpMonth(12).
			SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").SetMetadata(map[string]string{"order": "42"}).
			InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if made.MerchantID != tenant.DefaultMerchant || made.CreatedAt.IsZero() || made.CaptureMethod != state.CaptureAutomatic {
			t.Fatalf("the payment rendered: merchant %q, created %v, capture %q; want the hook's merchant and the schema's defaults",
				made.MerchantID, made.CreatedAt, made.CaptureMethod)
		}
		_, change, err := db.Ent.PaymentStatusChange.Create().SetPaymentID(id).SetTo(state.PaymentProcessing).
			SetReason("r").SetActor("a").SetAt(made.CreatedAt).InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, claim, err := claimOf(db.Ent, "together").InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.ExecTogether(ctx, claim, insert, change); err != nil {
			t.Fatal(err)
		}
		read, err := db.Ent.Payment.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := asJSON(t, read), asJSON(t, made); got != want {
			t.Errorf("read back %s; rendered %s", got, want)
		}
		if n, err := read.QueryStatusHistory().Count(ctx); err != nil || n != 1 {
			t.Errorf("history rows: %d, %v; want 1", n, err)
		}

		// The same key again, after a payment of its own: the claim is refused, the payment
		// before it is not written either.
		second := prefixid.New("pay")
		_, secondInsert, err := db.Ent.Payment.Create().SetID(second).
			SetAmount(500).SetCurrency("USD").SetStatus(state.PaymentProcessing).SetPaymentMethod("credit_card").
			SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").SetCardExpMonth(12).
			SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, again, err := claimOf(db.Ent, "together").InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = db.ExecTogether(ctx, secondInsert, again)
		failed, named := errors.AsType[*database.StatementError](err)
		if !named || failed.Index != 1 || !database.IsUniqueViolation(err) {
			t.Fatalf("a key claimed twice: %v; want the second statement's unique violation", err)
		}
		if _, err := db.Ent.Payment.Get(ctx, second); !ent.IsNotFound(err) {
			t.Errorf("the payment sent with a refused claim: %v; want none written", err)
		}
		if n, err := db.Ent.IdempotencyKey.Query().Where(idempotencykey.Key("together")).Count(ctx); err != nil || n != 1 {
			t.Errorf("keys named together: %d, %v; want 1", n, err)
		}
	})
}

// TestInsertStatementRunsTheHooks: a row rendered in a merchant's context for another merchant is
// refused before any statement is made, as Save refuses it.
func TestInsertStatementRunsTheHooks(t *testing.T) {
	db := databasetest.SQLite(t)
	_, _, err := db.Ent.Payment.Create().SetID(prefixid.New("pay")).SetMerchantID("mer_elsewhere").
		SetAmount(1).SetCurrency("USD").SetStatus(state.PaymentProcessing).SetPaymentMethod("credit_card").
		SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").SetCardExpMonth(12).
		SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").InsertStatement(databasetest.AsMerchant())
	if err == nil {
		t.Fatal("a payment of another merchant was rendered in the default merchant's context")
	}
	if _, _, err := claimOf(db.Ent, "k").InsertStatement(context.Background()); !errors.Is(err, tenant.ErrNoMerchant) {
		t.Errorf("rendering in a context of nobody: %v; want %v", err, tenant.ErrNoMerchant)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	text, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
