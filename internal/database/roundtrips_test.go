package database_test

import (
	"context"
	"os"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestRoundTripsCountEachCallIntoTheDatabase: a statement, a prepared statement's runs, and each
// step of a transaction count one each, through database/sql and through ent alike.
func TestRoundTripsCountEachCallIntoTheDatabase(t *testing.T) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.CountingSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.CountingPostgres
	}
	for name, open := range databases {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			expect := func(what string, want int64, do func() error) {
				t.Helper()
				before := db.RoundTrips()
				if err := do(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if got := db.RoundTrips() - before; got != want {
					t.Errorf("%s: %d round trips, want %d", what, got, want)
				}
			}
			expect("a statement", 1, func() error {
				_, err := db.SQL.ExecContext(ctx, "UPDATE schema_migrations SET dirty = dirty")
				return err
			})
			expect("a query and its rows", 1, func() error {
				var version int
				return db.SQL.QueryRowContext(ctx, "SELECT version FROM schema_migrations").Scan(&version)
			})
			expect("a transaction of two statements", 4, func() error {
				tx, err := db.SQL.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				for range 2 {
					if _, err := tx.ExecContext(ctx, "UPDATE schema_migrations SET dirty = dirty"); err != nil {
						return err
					}
				}
				return tx.Commit()
			})
			expect("a transaction rolled back", 2, func() error {
				tx, err := db.SQL.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				return tx.Rollback()
			})
			expect("a statement prepared and run twice", 3, func() error {
				conn, err := db.SQL.Conn(ctx) // one connection: the statement is prepared once
				if err != nil {
					return err
				}
				defer conn.Close()
				stmt, err := conn.PrepareContext(ctx, "SELECT count(*) FROM schema_migrations")
				if err != nil {
					return err
				}
				defer stmt.Close()
				for range 2 {
					var n int
					if err := stmt.QueryRowContext(ctx).Scan(&n); err != nil {
						return err
					}
				}
				return nil
			})
			expect("an ent query", 1, func() error {
				_, err := db.Ent.Payment.Query().Count(databasetest.AsMerchant())
				return err
			})
		})
	}
	if plain := databasetest.SQLite(t); plain.RoundTrips() != 0 {
		t.Errorf("a pool not counting says %d round trips", plain.RoundTrips())
	}
}
