// Package databasetest gives each test its own migrated database: a SQLite file, and a fresh
// PostgreSQL schema when PAYGATE_TEST_DATABASE_URL is set.
package databasetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/tenant"
)

// ForEach runs fn as parallel subtests on SQLite and, when PAYGATE_TEST_DATABASE_URL is set, on
// PostgreSQL, each with a new migrated database.
func ForEach(t *testing.T, fn func(t *testing.T, db *database.DB)) {
	t.Helper()
	ForEachPools(t, 1, func(t *testing.T, pools []*database.DB) { fn(t, pools[0]) })
}

// ForEachPools is ForEach with n connection pools over the one new database, as n server
// processes would hold: what they share is the database alone.
func ForEachPools(t *testing.T, n int, fn func(t *testing.T, pools []*database.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openPools(t, sqliteURL(t), n))
	})
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			fn(t, openPools(t, postgresURL(t), n))
		})
	}
}

func openPools(t testing.TB, rawURL string, n int) []*database.DB {
	pools := make([]*database.DB, n)
	for i := range pools {
		pools[i] = open(t, rawURL, database.Options{})
	}
	return pools
}

// SQLite returns a migrated SQLite database in a file of the test's temp dir.
func SQLite(t testing.TB) *database.DB {
	t.Helper()
	return open(t, sqliteURL(t), database.Options{})
}

// CountingSQLite is SQLite whose pool counts its round trips (database.DB.RoundTrips).
func CountingSQLite(t testing.TB) *database.DB {
	t.Helper()
	return open(t, sqliteURL(t), database.Options{CountRoundTrips: true})
}

// TracedSQLite is SQLite whose statements are spans (database.Options.Traced).
func TracedSQLite(t testing.TB) *database.DB {
	t.Helper()
	return open(t, sqliteURL(t), database.Options{Traced: true})
}

func sqliteURL(t testing.TB) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "paygate.db")
}

// Postgres returns a migrated database in a new schema of PAYGATE_TEST_DATABASE_URL, dropped when
// the test ends. It skips the test when the variable is unset.
func Postgres(t testing.TB) *database.DB {
	t.Helper()
	return open(t, postgresURL(t), database.Options{})
}

// CountingPostgres is Postgres whose pool counts its round trips (database.DB.RoundTrips).
func CountingPostgres(t testing.TB) *database.DB {
	t.Helper()
	return open(t, postgresURL(t), database.Options{CountRoundTrips: true})
}

// TracedPostgres is Postgres whose statements are spans (database.Options.Traced).
func TracedPostgres(t testing.TB) *database.DB {
	t.Helper()
	return open(t, postgresURL(t), database.Options{Traced: true})
}

// postgresURL creates a schema of PAYGATE_TEST_DATABASE_URL, dropped when the test ends, and
// returns the URL that works in it.
func postgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	suffix := make([]byte, 8)
	rand.Read(suffix)
	schema := "test_" + hex.EncodeToString(suffix)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(t testing.TB, rawURL string, opts database.Options) *database.DB {
	t.Helper()
	opts.MaxConns = 30
	db, err := database.Open(rawURL, opts)
	if err != nil {
		t.Fatalf("opening %s: %v", rawURL, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrating: %v", err)
	}
	return db
}

// AsMerchant is the context of the default merchant's work, for tests that read and write its
// data behind the server's back: every query of a merchant's data says whose it is.
func AsMerchant() context.Context {
	return tenant.For(context.Background(), tenant.DefaultMerchant)
}

// RecordingClient returns a client over db's pool that hands each statement
// it sends to record as it sends it: what a test then asks PostgreSQL to plan.
func RecordingClient(db *database.DB, record func(query string)) *ent.Client {
	logged := func(_ context.Context, v ...any) {
		if m := loggedQuery.FindStringSubmatch(fmt.Sprint(v...)); m != nil {
			record(m[1])
		}
	}
	return ent.NewClient(ent.Driver(dialect.DebugWithContext(entsql.OpenDB(db.Dialect, db.SQL), logged)))
}

// loggedQuery picks the statement out of a line ent's debug driver logs as it sends one.
var loggedQuery = regexp.MustCompile(`(?s)\.(?:Exec|Query): query=(.*) args=`)

// GenericPlan returns PostgreSQL's generic plan of query, as EXPLAIN prints it: the plan a
// prepared statement keeps for every call once the server prefers it to planning each one,
// made with the statistics the tables have at that moment.
func GenericPlan(t testing.TB, db *database.DB, query string) string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	parameters := len(slices.Compact(slices.Sorted(slices.Values(placeholder.FindAllString(query, -1)))))
	// Any values will do: a generic plan is the one made without them.
	execute := "EXECUTE planned"
	if parameters > 0 {
		execute += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", parameters), ", ") + ")"
	}
	for _, statement := range []string{"SET LOCAL plan_cache_mode = force_generic_plan", "PREPARE planned AS " + query} {
		if _, err := tx.ExecContext(ctx, statement); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
	defer tx.ExecContext(ctx, "DEALLOCATE planned") // a prepared statement outlives its transaction
	rows, err := tx.QueryContext(ctx, "EXPLAIN "+execute)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// placeholder is a parameter of a PostgreSQL statement.
var placeholder = regexp.MustCompile(`\$[0-9]+`)
