package database_test

import (
	"fmt"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
)

// TestReadPathReadsEveryRowAsWritten: ent's read path, with the generated template's changes to
// it (columns qualified once per dialect, one query's rows scanned into the same destinations),
// gives each row its own values: refunds with and without their optional fields, read all at once,
// with a column a modifier adds, under a join with a table whose columns share their names, from
// a payment's edge, loaded with their payments, and as selected fields; and payments with their
// JSON columns, read with their refunds.
func TestReadPathReadsEveryRowAsWritten(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		var payments []*ent.Payment
		var refunds []*ent.Refund
		for i := range 3 {
			p, err := db.Ent.Payment.Create().SetCreatedAt(when.Add(time.Duration(i) * time.Minute)).SetUpdatedAt(when).
				SetAmount(int64(1000 + i)).SetCurrency("EUR").SetStatus(state.PaymentSucceeded).SetPaymentMethod("credit_card").
				SetCustomerEmail(fmt.Sprintf("%d@example.com", i)).SetCardBrand("visa").SetCardLast4("4242").
				SetCardExpMonth(12).SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").
				SetMetadata(map[string]string{"i": fmt.Sprint(i)}).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			payments = append(payments, p)
			for k := range 2 {
				create := db.Ent.Refund.Create().SetPaymentID(p.ID).SetAmount(int64(10*i + k + 1)).SetCurrency("EUR").
					SetStatus(state.RefundSucceeded).SetCreatedAt(when.Add(time.Duration(2*i+k) * time.Second)).SetUpdatedAt(when)
				if k == 1 {
					create.SetReason(fmt.Sprintf("reason %d", i)).SetFailureCode("none")
				}
				r, err := create.Save(ctx)
				if err != nil {
					t.Fatal(err)
				}
				refunds = append(refunds, r)
			}
		}
		byCreation := refund.ByCreatedAt()
		doubled := func(s *entsql.Selector) { s.AppendSelectExprAs(entsql.Expr(s.C(refund.FieldAmount)+" * 2"), "doubled") }
		modified := db.Ent.Refund.Query().Order(byCreation)
		modified.Modify(doubled)
		read, err := modified.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sameRefunds(t, "read all, with a column added", read, refunds)
		for i, r := range read {
			if got, err := r.Value("doubled"); err != nil || fmt.Sprint(got) != fmt.Sprint(2*refunds[i].Amount) {
				t.Errorf("refund %d's added column: %v (%T), %v; want %d", i, got, got, err, 2*refunds[i].Amount)
			}
		}

		joined := db.Ent.Refund.Query().Order(byCreation)
		joined.Modify(func(s *entsql.Selector) {
			paid := entsql.Table(payment.Table)
			s.Distinct().Join(paid).On(s.C(refund.FieldPaymentID), paid.C(payment.FieldID))
		})
		if read, err = joined.All(ctx); err != nil {
			t.Fatal(err)
		}
		sameRefunds(t, "under a join", read, refunds)

		if read, err = payments[1].QueryRefunds().Order(byCreation).All(ctx); err != nil {
			t.Fatal(err)
		}
		sameRefunds(t, "from a payment's edge", read, refunds[2:4])

		withPayments, err := db.Ent.Refund.Query().WithPayment().Order(byCreation).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sameRefunds(t, "with their payments", withPayments, refunds)
		for i, r := range withPayments {
			if r.Edges.Payment == nil || r.Edges.Payment.ID != payments[i/2].ID {
				t.Errorf("refund %d loaded with payment %v; want %s", i, r.Edges.Payment, payments[i/2].ID)
			}
		}

		var amounts []int64
		if err := db.Ent.Refund.Query().Order(byCreation).Select(refund.FieldAmount).Scan(ctx, &amounts); err != nil {
			t.Fatal(err)
		}
		for i, amount := range amounts {
			if amount != refunds[i].Amount {
				t.Errorf("selected amount %d: %d; want %d", i, amount, refunds[i].Amount)
			}
		}

		// On PostgreSQL, the payments and then their refunds are read from pgx's own rows outside
		// a transaction, and by database/sql into the same destinations in one.
		pgxQueries := database.PgxRowsQueries(db)
		readPayments, err := db.Ent.Payment.Query().WithRefunds().Order(payment.ByCreatedAt()).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		samePayments(t, "with their refunds", readPayments, payments)
		if got, want := database.PgxRowsQueries(db)-pgxQueries, pgxRowsQueries(db, 2); got != want {
			t.Errorf("reading payments and their refunds took %d queries of pgx's own rows; want %d", got, want)
		}
		tx, err := db.Ent.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		pgxQueries = database.PgxRowsQueries(db)
		if readPayments, err = tx.Payment.Query().WithRefunds().Order(payment.ByCreatedAt()).All(ctx); err != nil {
			t.Fatal(err)
		}
		samePayments(t, "in a transaction", readPayments, payments)
		if got := database.PgxRowsQueries(db) - pgxQueries; got != 0 {
			t.Errorf("reading in a transaction took %d queries of pgx's own rows; want none", got)
		}
	})
}

// pgxRowsQueries is how many of n reads take pgx's own rows on db: all on PostgreSQL, none on
// SQLite.
func pgxRowsQueries(db *database.DB, n int64) int64 {
	if db.Dialect == dialect.Postgres {
		return n
	}
	return 0
}

// samePayments checks that read are want, in order, every field but the edges, each read with
// its two refunds.
func samePayments(t *testing.T, how string, read, want []*ent.Payment) {
	t.Helper()
	if len(read) != len(want) {
		t.Fatalf("%s: read %d payments; want %d", how, len(read), len(want))
	}
	for i, p := range read {
		withoutEdges := *p
		withoutEdges.Edges = ent.PaymentEdges{}
		if asJSON(t, &withoutEdges) != asJSON(t, want[i]) || len(p.Edges.Refunds) != 2 {
			t.Errorf("%s: payment %d read as %s, with %d refunds; want %s", how, i, asJSON(t, &withoutEdges), len(p.Edges.Refunds), asJSON(t, want[i]))
		}
	}
}

// sameRefunds checks that read are want, in order, every field but the edges.
func sameRefunds(t *testing.T, how string, read, want []*ent.Refund) {
	t.Helper()
	if len(read) != len(want) {
		t.Fatalf("%s: read %d refunds; want %d", how, len(read), len(want))
	}
	for i := range read {
		withoutEdges := *read[i]
		withoutEdges.Edges = ent.RefundEdges{}
		if got, wanted := asJSON(t, &withoutEdges), asJSON(t, want[i]); got != wanted {
			t.Errorf("%s: refund %d read as %s; want %s", how, i, got, wanted)
		}
	}
}
