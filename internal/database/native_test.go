package database_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// keptPlan stands for a plan a connection kept: what it scans shows that it was used.
type keptPlan struct{}

func (keptPlan) Scan(_ []byte, dest any) error {
	*dest.(*string) = "from the kept plan"
	return nil
}

// TestNativeReadsKeepTheirScanPlans: a connection scans a statement's columns with the plans it
// made for the statement's read before, and makes a column's plan anew when its type, or its
// destination's, is not the one the plan was made for; it keeps plans for a bounded number of
// statements.
func TestNativeReadsKeepTheirScanPlans(t *testing.T) {
	db := databasetest.Postgres(t)
	db.SQL.SetMaxOpenConns(1) // one connection: every read below is on it
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, `CREATE TABLE plan_probe (a integer, b text); INSERT INTO plan_probe VALUES (7, 'x')`); err != nil {
		t.Fatal(err)
	}
	const query = `SELECT a, b FROM plan_probe`
	read := func(b any) (int64, string) {
		t.Helper()
		var a int64
		err := database.QueryNatively(ctx, db, query, nil, func(rows ent.NativeRows) error {
			for rows.Next() {
				if err := rows.Scan(&a, b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		switch b := b.(type) {
		case *string:
			return a, *b
		case *pgtype.Text:
			return a, b.String
		}
		return a, ""
	}
	keep := func(change func(plans []pgtype.ScanPlan, types []uint32)) int {
		t.Helper()
		statements, err := database.KeptScanPlans(ctx, db, query, change)
		if err != nil {
			t.Fatal(err)
		}
		return statements
	}

	if a, b := read(new(string)); a != 7 || b != "x" {
		t.Fatalf("first read: %d %q", a, b)
	}
	keep(func(plans []pgtype.ScanPlan, _ []uint32) {
		if len(plans) != 2 {
			t.Fatalf("%d plans kept, want 2", len(plans))
		}
		plans[1] = keptPlan{}
	})
	if _, b := read(new(string)); b != "from the kept plan" {
		t.Errorf("a second read made its plan anew: %q", b)
	}
	if _, b := read(new(pgtype.Text)); b != "x" {
		t.Errorf("a destination of another type scanned with the kept plan: %q", b)
	}
	if _, b := read(new(string)); b != "x" { // a plan for a string again
		t.Errorf("read %q", b)
	}
	// As if the column had been of another type when the plan was made.
	keep(func(plans []pgtype.ScanPlan, types []uint32) { plans[1], types[1] = keptPlan{}, pgtype.VarcharOID })
	if a, b := read(new(string)); a != 7 || b != "x" {
		t.Errorf("a column of another type scanned with the kept plan: %d %q", a, b)
	}

	for i := range 100 {
		query := fmt.Sprintf("SELECT a + %d, b FROM plan_probe", i)
		if err := database.QueryNatively(ctx, db, query, nil, func(rows ent.NativeRows) error {
			var a int64
			var b string
			for rows.Next() {
				if err := rows.Scan(&a, &b); err != nil {
					return err
				}
			}
			if a != int64(7+i) || b != "x" {
				return fmt.Errorf("read %d %q", a, b)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if statements := keep(func([]pgtype.ScanPlan, []uint32) {}); statements > 64 {
		t.Errorf("a connection keeps plans for %d statements", statements)
	}
}
