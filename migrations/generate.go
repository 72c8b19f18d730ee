//go:build ignore

// generate writes a new migration into postgres/ and sqlite/ when the ent schema differs from what
// the existing migrations build, and nothing when it does not. Atlas computes the difference by
// replaying the directory on a scratch database: an in-memory SQLite, and a throwaway schema in the
// PostgreSQL named by PAYGATE_TEST_DATABASE_URL (default: the local test database).
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log"
	"net/url"
	"os"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/paygate/paygate/ent/migrate"
)

func main() {
	ctx := context.Background()
	if err := diffSQLite(ctx); err != nil {
		log.Fatalf("sqlite migrations: %v", err)
	}
	scratchURL, cleanup, err := scratchPostgresSchema(ctx)
	if err != nil {
		log.Fatalf("postgres scratch schema: %v", err)
	}
	defer cleanup()
	// By URL, so Atlas binds to the scratch schema and writes unqualified table names.
	if err := migrate.NamedDiff(ctx, scratchURL, "schema", options(dialect.Postgres, "postgres")...); err != nil {
		log.Fatalf("postgres migrations: %v", err)
	}
}

func diffSQLite(ctx context.Context) error {
	db, err := sql.Open("sqlite", "file:scratch?mode=memory&_pragma=foreign_keys(1)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // an in-memory SQLite database lives in one connection
	return migrate.NewSchema(entsql.OpenDB(dialect.SQLite, db)).NamedDiff(ctx, "schema", options(dialect.SQLite, "sqlite")...)
}

func options(entDialect, dir string) []schema.MigrateOption {
	migrationsDir, err := sqltool.NewGolangMigrateDir(dir)
	if err != nil {
		log.Fatalf("migrations directory %s: %v", dir, err)
	}
	// A migration that moves data is edited by hand after it is written (an upgrade filling a
	// new column): the directory's sum is taken from the files as they are, so Atlas replays them.
	sum, err := migrationsDir.Checksum()
	if err == nil {
		err = atlasmigrate.WriteSumFile(migrationsDir, sum)
	}
	if err != nil {
		log.Fatalf("migrations directory %s: summing: %v", dir, err)
	}
	return []schema.MigrateOption{
		schema.WithDir(migrationsDir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(entDialect),
		schema.WithFormatter(sqltool.GolangMigrateFormatter),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
	}
}

func scratchPostgresSchema(ctx context.Context) (string, func(), error) {
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		return "", nil, err
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	name := "migrations_scratch_" + hex.EncodeToString(suffix)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close()
		return "", nil, err
	}
	cleanup := func() {
		admin.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE")
		admin.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), cleanup, nil
}
