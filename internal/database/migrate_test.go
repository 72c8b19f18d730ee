package database

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/golang-migrate/migrate/v4"
)

// TestEveryMigrationRollsBack applies the SQLite migrations one at a time, and after each takes
// it back and applies it again, with a row in the table the last one rebuilt: a down migration
// that fails or loses rows would leave an operator stuck halfway through a rollback.
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
