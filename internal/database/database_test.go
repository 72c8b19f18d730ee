package database_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

func TestOpenChoosesTheDatabaseFromTheURL(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := database.Open("", database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Dialect != "sqlite3" {
		t.Errorf("default dialect = %s", db.Dialect)
	}
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "paygate.db")); err != nil {
		t.Errorf("the default database is not ./paygate.db: %v", err)
	}

	memory, err := database.Open("sqlite://:memory:", database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer memory.Close()
	if err := memory.Migrate(context.Background()); err != nil {
		t.Fatalf("migrating :memory: %v", err)
	}
	latest, _ := memory.LatestMigration()
	if err := memory.Ready(context.Background(), latest); err != nil {
		t.Errorf(":memory: not ready after migrating: %v", err)
	}

	for _, bad := range []string{"mysql://x", "sqlite://", "file.db"} {
		if _, err := database.Open(bad, database.Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func TestMigrationsAreIdempotentAndReadinessFollowsThem(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		latest, err := db.LatestMigration()
		if err != nil || latest == 0 {
			t.Fatalf("latest migration = %d, %v", latest, err)
		}
		if err := db.Ready(ctx, latest); err != nil {
			t.Errorf("not ready after migrating: %v", err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Errorf("migrating twice: %v", err)
		}
		if err := db.Ready(ctx, latest+1); err == nil {
			t.Error("ready although a newer migration exists")
		}
	})
}

// TestDatabaseHoldsTheMoneyInvariants writes around the code: the CHECK constraints refuse a
// refunded total above the amount, a non-positive amount and an unknown status.
func TestDatabaseHoldsTheMoneyInvariants(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		p := succeededPayment(t, db)
		statements := map[string]string{
			"refund above amount": "UPDATE payments SET amount_refunded = 1001 WHERE id = $1",
			"negative refund":     "UPDATE payments SET amount_refunded = -1 WHERE id = $1",
			"zero amount":         "UPDATE payments SET amount = 0 WHERE id = $1",
			"unknown status":      "UPDATE payments SET status = 'paid' WHERE id = $1",
			"history to unknown": `INSERT INTO payment_status_changes (id, "from", "to", at, payment_id)
				VALUES ('psc_1', 'pending', 'paid', '2026-01-01T00:00:00Z', $1)`,
			"history from unknown": `INSERT INTO payment_status_changes (id, "from", "to", at, payment_id)
				VALUES ('psc_2', 'paid', 'pending', '2026-01-01T00:00:00Z', $1)`,
		}
		for name, statement := range statements {
			if _, err := db.SQL.ExecContext(ctx, statement, p.ID); err == nil {
				t.Errorf("%s: the database accepted it", name)
			}
		}
		if _, err := db.SQL.ExecContext(ctx, `INSERT INTO payment_status_changes (id, "from", "to", at, payment_id)
			VALUES ('psc_3', NULL, 'pending', '2026-01-01T00:00:00Z', $1)`, p.ID); err != nil {
			t.Errorf("the first history entry: %v", err)
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE payments SET amount_refunded = 1000 WHERE id = $1", p.ID); err != nil {
			t.Errorf("refunding exactly the amount: %v", err)
		}
	})
}

func TestTimesCompareAsInstantsWhateverTheirZone(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		p := succeededPayment(t, db)
		// East of UTC the local text of an earlier instant sorts after the UTC text of a later one,
		// and west of it the other way round.
		for _, zone := range []*time.Location{time.FixedZone("UTC+9", 9*3600), time.FixedZone("UTC-5", -5*3600)} {
			before, after := p.CreatedAt.Add(-time.Minute).In(zone), p.CreatedAt.Add(time.Minute).In(zone)
			n, err := db.Ent.Payment.Query().Where(payment.CreatedAtGT(before), payment.CreatedAtLT(after)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("between %s and %s: %d payments, want 1", before, after, n)
			}
		}
	})
}

// succeededPayment writes a payment of 10.00 USD straight to the database.
func succeededPayment(t *testing.T, db *database.DB) *ent.Payment {
	t.Helper()
	p, err := db.Ent.Payment.Create().
		SetAmount(1000).SetCurrency("USD").SetStatus(state.PaymentSucceeded).SetPaymentMethod("credit_card").
		SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").SetCardExpMonth(12).
		SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("sandbox").Save(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPostgresTimesAreReadInUTC: times come back from PostgreSQL in UTC, whatever the server
// process's local zone, as they do from SQLite: what GraphQL shows of them carries no zone of
// the machine it runs on.
func TestPostgresTimesAreReadInUTC(t *testing.T) {
	db := databasetest.Postgres(t)
	var now time.Time
	if err := db.SQL.QueryRow("SELECT now()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	if now.Location() != time.UTC {
		t.Errorf("a timestamptz read in %q, want UTC", now.Location())
	}
	merchant, err := db.Ent.Merchant.Query().First(tenant.System(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	if merchant.CreatedAt.Location() != time.UTC {
		t.Errorf("an entity's time read in %q, want UTC", merchant.CreatedAt.Location())
	}
}

// A database at the newest migration is migrated by reading its version alone: no migration
// lock is taken, which behind PgBouncer in transaction mode would stay on one of its connections.
func TestMigrateLeavesAnUpToDateDatabaseAlone(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *database.DB{
		"sqlite": databasetest.CountingSQLite, "postgres": databasetest.CountingPostgres,
	} {
		t.Run(name, func(t *testing.T) {
			db := open(t) // migrated
			before := db.RoundTrips()
			if err := db.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			if trips := db.RoundTrips() - before; trips != 1 {
				t.Errorf("migrating an up-to-date database took %d round trips; want 1, reading its version", trips)
			}
		})
	}
}
