// Package database opens Paygate's SQL database (embedded SQLite or PostgreSQL), applies the
// embedded migrations and reports readiness.
package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/exaring/otelpgx"
	"github.com/golang-migrate/migrate/v4"
	migratedb "github.com/golang-migrate/migrate/v4/database"
	"github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/paygate/paygate/ent"
	// The runtime registers the schema's hooks and interceptors, the merchant filter among
	// them: every client is opened here, so none goes without it.
	_ "github.com/paygate/paygate/ent/runtime"
	"github.com/paygate/paygate/migrations"
)

// DB is an open database with its ent client.
type DB struct {
	SQL     *sql.DB
	Dialect string // dialect.SQLite or dialect.Postgres
	Ent     *ent.Client
	// dsn is what the pool connects with, for the listener's own connection.
	dsn string
	// roundTrips counts the pool's round trips (roundtrips.go) when Options asked for it.
	roundTrips *atomic.Int64
	// pgxRows is the pool of pgx's own rows on PostgreSQL (rows.go); nil elsewhere.
	pgxRows *pgxpool.Pool
}

// Options size the connection pool and say whether to count its round trips.
type Options struct {
	// MaxConns bounds open connections to PostgreSQL; SQLite files get a fixed small pool since
	// writes serialize anyway.
	MaxConns int
	// CountRoundTrips counts every round trip the pool makes, for RoundTrips to tell: the
	// benchmarks' figure per request.
	CountRoundTrips bool
	// Traced makes every statement a span of the trace it runs in (OpenTelemetry's global tracer
	// provider), with its text and never its values: pgx's tracer on PostgreSQL, database/sql's
	// on SQLite. For when traces are exported: each span costs its statement.
	Traced bool
}

// Open opens the database named by rawURL: "" or sqlite://PATH (the embedded SQLite; PATH may be
// :memory:) or postgres://... (PostgreSQL through pgx, which prepares each statement once per
// connection and then runs it in one exchange with the server, where lib/pq takes two).
func Open(rawURL string, opts Options) (*DB, error) {
	driverName, dialectName, dsn, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var roundTrips *atomic.Int64
	if opts.CountRoundTrips {
		roundTrips = new(atomic.Int64)
	}
	sqlDB, err := openPool(driverName, dsn, roundTrips, opts.Traced)
	if err != nil {
		return nil, err
	}
	maxConns := opts.MaxConns
	if maxConns <= 0 {
		maxConns = 20
	}
	switch {
	case dialectName == dialect.SQLite && strings.Contains(dsn, ":memory:"):
		// Each connection to :memory: is its own database: keep exactly one, forever.
		sqlDB.SetMaxOpenConns(1)
		sqlDB.SetConnMaxIdleTime(0)
		sqlDB.SetConnMaxLifetime(0)
	case dialectName == dialect.SQLite:
		sqlDB.SetMaxOpenConns(4)
		sqlDB.SetMaxIdleConns(4)
	default:
		sqlDB.SetMaxOpenConns(maxConns)
		sqlDB.SetMaxIdleConns(maxConns)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("connecting to the database: %w", err)
	}
	var pgxRows *pgxpool.Pool
	if dialectName == dialect.Postgres {
		config, err := pgxConfig(dsn, opts.Traced)
		if err == nil {
			pgxRows, err = openPgxRows(config, maxConns, roundTrips)
		}
		if err != nil {
			sqlDB.Close()
			return nil, err
		}
	}
	sqlDriver := entsql.OpenDB(dialectName, sqlDB)
	client := ent.NewClient(ent.Driver(utcDriver{Driver: sqlDriver, pgxRows: pgxRows}))
	return &DB{
		pgxRows:    pgxRows,
		SQL:        sqlDB,
		Dialect:    dialectName,
		Ent:        client,
		dsn:        dsn,
		roundTrips: roundTrips,
	}, nil
}

// RoundTrips is how many round trips the pool has made since it was opened, when it was opened
// with Options.CountRoundTrips; else 0.
func (db *DB) RoundTrips() int64 {
	if db.roundTrips == nil {
		return 0
	}
	return db.roundTrips.Load()
}

// connectorFor returns how the pool connects: through pgx, its times read in UTC, or through the
// driver registered as driverName.
func connectorFor(driverName, dsn string, traced bool) (driver.Connector, error) {
	if driverName == "pgx" {
		config, err := pgxConfig(dsn, traced)
		if err != nil {
			return nil, err
		}
		return stdlib.GetConnector(*config, stdlib.OptionAfterConnect(readTimesInUTC)), nil
	}
	// sql.Open connects nothing: it only finds the registered driver.
	probe, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	return dsnConnector{driver: probe.Driver(), dsn: dsn}, nil
}

// pgxConfig is the connection configuration of a PostgreSQL DSN. Statements are prepared once
// per connection and kept (pgx's cache_statement mode); the cache of statement descriptions
// serves only the cache_describe mode, so in the default mode it is not made: each connection's
// would be a map sized for 512 statements (27 KB), held live for nothing and marked by every
// garbage collection (a pool of 20 connections holds 0.9 MB rather than 1.5 MB).
func pgxConfig(dsn string, traced bool) (*pgx.ConnConfig, error) {
	config, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if config.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		config.DescriptionCacheCapacity = 0
	}
	if traced {
		// Every statement and batch within a traced request or job a span, named by its
		// operation (INSERT, SELECT ...), the statement's text without its parameters.
		config.Tracer = otelpgx.NewTracer(otelpgx.WithTrimSQLInSpanName())
	}
	return config, nil
}

// readTimesInUTC makes a connection hand back timestamptz values in UTC, as SQLite's are and as
// the API shows them, rather than in the server process's local zone (pgx's default).
func readTimesInUTC(_ context.Context, conn *pgx.Conn) error {
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID, Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
	return nil
}

func parseURL(rawURL string) (driverName, dialectName, dsn string, err error) {
	switch {
	case rawURL == "":
		return "sqlite", dialect.SQLite, sqliteDSN("./paygate.db"), nil
	case strings.HasPrefix(rawURL, "sqlite://"):
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if path == "" {
			return "", "", "", errors.New("DATABASE_URL sqlite:// needs a path, or :memory:")
		}
		return "sqlite", dialect.SQLite, sqliteDSN(path), nil
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		parsed, err := url.Parse(rawURL)
		if err != nil {
			return "", "", "", errors.New("DATABASE_URL is not a valid postgres:// URL")
		}
		// Without sslmode, TLS is required, as it was with lib/pq: pgx alone would "prefer" it,
		// and fall back to plain text wherever something in the path refuses TLS.
		if query := parsed.Query(); !query.Has("sslmode") {
			query.Set("sslmode", "require")
			parsed.RawQuery = query.Encode()
		}
		return "pgx", dialect.Postgres, parsed.String(), nil
	default:
		return "", "", "", errors.New("DATABASE_URL must start with sqlite:// or postgres://")
	}
}

func sqliteDSN(path string) string {
	// WAL lets readers run beside the writer; immediate transactions take the write lock at BEGIN,
	// so two writers queue on busy_timeout instead of failing with SQLITE_BUSY on upgrade.
	return "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// Close closes the database.
func (db *DB) Close() error {
	if db.pgxRows != nil {
		db.pgxRows.Close()
	}
	return db.Ent.Close()
}

func (db *DB) migrationSource() (source.Driver, error) {
	dir := "sqlite"
	if db.Dialect == dialect.Postgres {
		dir = "postgres"
	}
	return iofs.New(migrations.FS, dir)
}

// Migrate applies every embedded migration not yet applied. On PostgreSQL an advisory lock keeps
// servers that start together from migrating twice.
func (db *DB) Migrate(ctx context.Context) error {
	// A database at the newest migration is left alone, its lock untaken: a session's advisory
	// lock taken through PgBouncer in transaction mode would stay with whichever of its server
	// connections ran it, for the next server to wait on.
	if latest, err := db.LatestMigration(); err == nil {
		if version, dirty, err := db.migrationVersion(ctx); err == nil && version == latest && !dirty {
			return nil
		}
	}
	m, done, err := db.migrator(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("applying migrations: %w", err)
	}
	return db.checkForeignKeys(ctx)
}

// checkForeignKeys fails when a SQLite row refers to one that does not exist: what migrating
// without enforcing the keys would let a wrong migration leave behind.
func (db *DB) checkForeignKeys(ctx context.Context) error {
	if db.Dialect != dialect.SQLite {
		return nil // PostgreSQL's migrations run with its keys enforced
	}
	rows, err := db.SQL.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table string
		var rowID sql.NullInt64
		var parent string
		var key int
		rows.Scan(&table, &rowID, &parent, &key)
		return fmt.Errorf("after the migrations, a row of %s refers to a row of %s that does not exist", table, parent)
	}
	return rows.Err()
}

// migrator returns golang-migrate over the embedded migrations of db's dialect, and the function
// that releases it.
func (db *DB) migrator(ctx context.Context) (*migrate.Migrate, func(), error) {
	src, err := db.migrationSource()
	if err != nil {
		return nil, nil, err
	}
	var driver migratedb.Driver
	done := func() {}
	if db.Dialect == dialect.Postgres {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		pg, err := postgres.WithConnection(ctx, conn, &postgres.Config{})
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		driver, done = pg, func() { pg.Close() } // closes only the connection: WithConnection leaves the pool alone
	} else {
		// A migration that rebuilds a table drops the old one: with foreign keys enforced, that
		// deletes (or refuses) the rows referring to it, and SQLite ignores the migration's own
		// PRAGMA foreign_keys inside the transaction it runs in. So migrations run on a
		// connection that does not enforce them, and Migrate checks the keys afterwards.
		pool := db.SQL
		if strings.Contains(db.dsn, ":memory:") {
			// One connection, which is the database: it stops enforcing while migrating.
			if _, err := pool.ExecContext(ctx, "PRAGMA foreign_keys = off"); err != nil {
				return nil, nil, err
			}
			done = func() { pool.ExecContext(context.Background(), "PRAGMA foreign_keys = on") }
		} else {
			if pool, err = sql.Open("sqlite", strings.Replace(db.dsn, "_pragma=foreign_keys(1)", "_pragma=foreign_keys(0)", 1)); err != nil {
				return nil, nil, err
			}
			pool.SetMaxOpenConns(1)
			done = func() { pool.Close() }
		}
		if driver, err = sqlite.WithInstance(pool, &sqlite.Config{}); err != nil {
			done()
			return nil, nil, err
		}
	}
	m, err := migrate.NewWithInstance("iofs", src, db.Dialect, driver)
	if err != nil {
		done()
		return nil, nil, err
	}
	return m, done, nil
}

// LatestMigration returns the version of the newest embedded migration.
func (db *DB) LatestMigration() (uint, error) {
	dir := "sqlite"
	if db.Dialect == dialect.Postgres {
		dir = "postgres"
	}
	entries, err := fs.Glob(migrations.FS, dir+"/*.up.sql")
	if err != nil || len(entries) == 0 {
		return 0, fmt.Errorf("no embedded migrations for %s", dir)
	}
	var latest uint
	for _, name := range entries {
		var version uint
		if _, err := fmt.Sscanf(name[len(dir)+1:], "%d_", &version); err == nil && version > latest {
			latest = version
		}
	}
	return latest, nil
}

// Ready reports whether the database answers and has every migration applied, clean.
func (db *DB) Ready(ctx context.Context, latest uint) error {
	version, dirty, err := db.migrationVersion(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("reading the migration version: %w", err)
	case dirty:
		return fmt.Errorf("migration %d failed halfway", version)
	case version < latest:
		return fmt.Errorf("migration %d applied, %d expected", version, latest)
	}
	return nil
}

// migrationVersion reads the version of the last migration applied, and whether it failed halfway.
func (db *DB) migrationVersion(ctx context.Context) (version uint, dirty bool, err error) {
	err = db.SQL.QueryRowContext(ctx, "SELECT version, dirty FROM schema_migrations LIMIT 1").Scan(&version, &dirty)
	return version, dirty, err
}
