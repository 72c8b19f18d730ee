package database_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// TestExecCheckedWritesAllOrNothing: statements run by ExecChecked are committed when its check
// passes, and leave nothing written when the check refuses the rows they affected or one of them
// fails, which its error names; after either, nothing stays locked (another pool writes the row
// they updated at once) and the pool's one connection is out of the transaction (a write through
// it is seen at once from another pool). Each time, the check is handed the
// rows each statement affected, and is not asked when a statement failed.
func TestExecCheckedWritesAllOrNothing(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		db, other := pools[0], pools[1]
		db.SQL.SetMaxOpenConns(1)
		ctx := databasetest.AsMerchant()
		id := prefixid.New("pay")
		seedPayment(t, ctx, db.Ent, id)
		move, err := db.Ent.Payment.Update().Where(payment.ID(id), payment.StatusEQ(state.PaymentProcessing)).
			SetStatus(state.PaymentSucceeded).UpdateStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, history, err := db.Ent.PaymentStatusChange.Create().SetPaymentID(id).SetFrom(state.PaymentProcessing).
			SetTo(state.PaymentSucceeded).SetReason("r").SetActor("a").SetAt(time.Now().UTC()).InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, claim, err := claimOf(db.Ent, "checked").InsertStatement(ctx)
		if err != nil {
			t.Fatal(err)
		}
		statements := []ent.Statement{move, history, claim}

		// written reports what of the statements the other pool sees.
		written := func() (status state.PaymentStatus, changes, keys int) {
			t.Helper()
			p := other.Ent.Payment.GetX(ctx, id)
			changes = other.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(id)).CountX(ctx)
			keys = other.Ent.IdempotencyKey.Query().Where(idempotencykey.Key("checked")).CountX(ctx)
			return p.Status, changes, keys
		}
		// outOfTheTransaction writes the payment from the other pool, which waits for no lock of
		// ExecChecked's, and then through db's one connection, which is seen from the other pool.
		outOfTheTransaction := func(description string) {
			t.Helper()
			waiting, stop := context.WithTimeout(ctx, 5*time.Second)
			defer stop()
			if err := other.Ent.Payment.UpdateOneID(id).SetDescription(description).Exec(waiting); err != nil {
				t.Fatalf("writing the payment after ExecChecked: %v", err)
			}
			if err := db.Ent.Payment.UpdateOneID(id).SetDescription(description + ", again").Exec(ctx); err != nil {
				t.Fatalf("writing through ExecChecked's connection after it: %v", err)
			}
			if got := other.Ent.Payment.GetX(ctx, id).Description; got == nil || *got != description+", again" {
				t.Errorf("after ExecChecked, a write through its connection is not seen elsewhere: %v", got)
			}
		}

		refused := errors.New("refused")
		var handed []int64
		err = db.ExecChecked(ctx, statements, func(affected []int64) error {
			handed = slices.Clone(affected)
			return refused
		})
		if !errors.Is(err, refused) || !slices.Equal(handed, []int64{1, 1, 1}) {
			t.Errorf("refused by its check: %v, the check handed %v; want its error after rows 1, 1, 1", err, handed)
		}
		if status, changes, keys := written(); status != state.PaymentProcessing || changes != 0 || keys != 0 {
			t.Errorf("after the check refused: %s, %d history rows, %d keys; want nothing written", status, changes, keys)
		}
		outOfTheTransaction("after a refusal")

		// The key taken by someone else: the claim fails, after the move and its history row.
		if err := claimOf(other.Ent, "checked").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		asked := false
		err = db.ExecChecked(ctx, statements, func([]int64) error { asked = true; return nil })
		failed, named := errors.AsType[*database.StatementError](err)
		if !named || failed.Index != 2 || !database.IsUniqueViolation(err) || asked {
			t.Errorf("a claim refused: %v, check asked %v; want the third statement's unique violation, unchecked", err, asked)
		}
		if status, changes, _ := written(); status != state.PaymentProcessing || changes != 0 {
			t.Errorf("after a statement failed: %s, %d history rows; want nothing written", status, changes)
		}
		outOfTheTransaction("after a failure")
		if _, err := other.Ent.IdempotencyKey.Delete().Where(idempotencykey.Key("checked")).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		if err := db.ExecChecked(ctx, statements, func(affected []int64) error {
			handed = slices.Clone(affected)
			return nil
		}); err != nil || !slices.Equal(handed, []int64{1, 1, 1}) {
			t.Fatalf("passed by its check: %v after rows %v", err, handed)
		}
		if status, changes, keys := written(); status != state.PaymentSucceeded || changes != 1 || keys != 1 {
			t.Errorf("after the check passed: %s, %d history rows, %d keys; want succeeded, 1 and 1", status, changes, keys)
		}
		outOfTheTransaction("after a commit")
	})
}
