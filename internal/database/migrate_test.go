package database

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
)

// TestEveryMigrationRollsBack applies the SQLite migrations one at a time, and after each takes
// it back (which must restore the schema it found: tables, columns, indexes) and applies it
// again, with a row in the idempotency keys to carry through: a down migration that fails, leaves
// another schema or loses rows would leave an operator stuck halfway through a rollback.
func TestEveryMigrationRollsBack(t *testing.T) {
	db, err := Open("sqlite://"+filepath.Join(t.TempDir(), "migrate.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, done, err := db.migrator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	latest, err := db.LatestMigration()
	if err != nil {
		t.Fatal(err)
	}
	keysTable := func() bool {
		var n int
		db.SQL.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'idempotency_keys'`).Scan(&n)
		return n == 1
	}
	for {
		hadKeys := keysTable()
		if hadKeys {
			if _, err := db.SQL.Exec(`INSERT INTO idempotency_keys (id, principal, key, request_hash, expires_at, created_at) VALUES ('idk_rollback', 'usr', 'k', 'h', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`); err != nil {
				t.Fatal(err)
			}
		}
		before := schemaOf(t, db)
		err := m.Steps(1)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, migrate.ErrNoChange) || isShortLimit(err) { // past the last
			break
		}
		if err != nil {
			t.Fatalf("up: %v", err)
		}
		version, _, _ := m.Version()
		if err := m.Steps(-1); err != nil {
			t.Fatalf("rolling back migration %d: %v", version, err)
		}
		if after := schemaOf(t, db); after != before {
			t.Errorf("migration %d, rolled back, leaves the schema\n%s\nwhere it found\n%s", version, after, before)
		}
		if err := m.Steps(1); err != nil {
			t.Fatalf("applying migration %d again: %v", version, err)
		}
		if hadKeys {
			var rows int
			db.SQL.QueryRow(`SELECT COUNT(*) FROM idempotency_keys WHERE id = 'idk_rollback'`).Scan(&rows)
			if rows != 1 {
				t.Errorf("migration %d, down and up again, kept %d of 1 idempotency key", version, rows)
			}
			db.SQL.Exec(`DELETE FROM idempotency_keys`)
		}
	}
	if version, dirty, err := m.Version(); err != nil || dirty || version != latest {
		t.Errorf("after every migration: version %d, dirty %v, %v; want %d", version, dirty, err, latest)
	}
}

func isShortLimit(err error) bool {
	var short migrate.ErrShortLimit
	return errors.As(err, &short)
}

// schemaOf describes the SQLite schema: every table's columns and every index, in order.
func schemaOf(t *testing.T, db *DB) string {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT m.type, m.name, COALESCE(p.name, ''), COALESCE(p.type, ''), COALESCE(p."notnull", 0), COALESCE(p.pk, 0), COALESCE(p.dflt_value, '')
		FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p ON m.type = 'table'
		WHERE m.name NOT LIKE 'sqlite_%' AND m.name != 'schema_migrations' ORDER BY m.type, m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var schema strings.Builder
	for rows.Next() {
		var kind, name, column, columnType, defaultValue string
		var notNull, primaryKey int
		if err := rows.Scan(&kind, &name, &column, &columnType, &notNull, &primaryKey, &defaultValue); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&schema, "%s %s %s %s notnull=%d pk=%d default=%s\n", kind, name, column, columnType, notNull, primaryKey, defaultValue)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return schema.String()
}

// TestPostgresURLsRequireTLSUnlessTheySayOtherwise: a URL that names no sslmode connects over
// TLS or not at all, as with lib/pq, rather than pgx's fallback to plain text; one that names
// it keeps it, and the rest of the URL is kept.
func TestPostgresURLsRequireTLSUnlessTheySayOtherwise(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://u@db.example.com:5432/pay":                                  "sslmode=require",
		"postgresql://u@db.example.com/pay?search_path=s1":                      "sslmode=require",
		"postgres://u@127.0.0.1/pay?sslmode=disable":                            "sslmode=disable",
		"postgres://u@db.example.com/pay?sslmode=verify-full&connect_timeout=5": "sslmode=verify-full",
	} {
		driver, _, dsn, err := parseURL(url)
		if err != nil || driver != "pgx" || !strings.Contains(dsn, want) || strings.Count(dsn, "sslmode=") != 1 {
			t.Errorf("parseURL(%q) = %s %q, %v; want %s", url, driver, dsn, err, want)
		}
		if strings.Contains(url, "search_path=s1") && !strings.Contains(dsn, "search_path=s1") {
			t.Errorf("parseURL(%q) lost the search path: %q", url, dsn)
		}
	}
}
