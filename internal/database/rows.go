package database

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paygate/paygate/ent"
)

// On PostgreSQL, reads outside a transaction that scan into pgx's own types (ent's generated code
// says which: ent.PgxRowsWanted) get pgx's own rows, from a pgx pool of their own. Under
// database/sql, pgx's driver makes a converter for each column of every statement's rows and a
// value for each column of each row, which database/sql then converts into the destination: read
// so, a page of payments allocates about twice what it does read by pgx into its own types. The
// pool is pgx's, rather than connections borrowed from database/sql's, because ent reads a query's
// rows after the driver's Query returns, and database/sql lends its driver's connection only for
// the length of a call (Conn.Raw).

// openPgxRows opens the pool of pgx's own rows: connections made as database/sql's are, at most
// maxConns of them, with every query counted in roundTrips unless it is nil.
func openPgxRows(config *pgx.ConnConfig, maxConns int, roundTrips *atomic.Int64) (*pgxpool.Pool, error) {
	poolConfig, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	poolConfig.ConnConfig = config
	poolConfig.MaxConns = int32(maxConns)
	poolConfig.AfterConnect = readTimesInUTC
	if roundTrips != nil {
		counting := countingTracer{roundTrips: roundTrips}
		if config.Tracer != nil {
			poolConfig.ConnConfig.Tracer = multitracer.New(config.Tracer, counting) // traced and counted
		} else {
			poolConfig.ConnConfig.Tracer = counting
		}
	}
	return pgxpool.NewWithConfig(context.Background(), poolConfig)
}

// countingTracer counts each query of the pool of pgx's own rows as a round trip (roundtrips.go).
type countingTracer struct{ roundTrips *atomic.Int64 }

func (t countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.roundTrips.Add(1)
	return ctx
}

func (countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// pgxColumnScanner is pgx's own rows as ent reads a query's rows.
type pgxColumnScanner struct{ pgx.Rows }

func (r pgxColumnScanner) Close() error {
	r.Rows.Close()
	return nil
}

func (r pgxColumnScanner) Columns() ([]string, error) { return pgxColumnNames(r.Rows), nil }

// ColumnTypes is refused: ent asks for it only for a column its type does not know, and a query
// with such a column does not scan into pgx's own types.
func (pgxColumnScanner) ColumnTypes() ([]*sql.ColumnType, error) {
	return nil, errors.New("pgx's own rows do not describe their columns as database/sql's")
}

func (pgxColumnScanner) NextResultSet() bool { return false }

// pgxColumnNames returns the names of rows' columns.
func pgxColumnNames(rows pgx.Rows) []string {
	fields := rows.FieldDescriptions()
	columns := make([]string, len(fields))
	for i, field := range fields {
		columns[i] = field.Name
	}
	return columns
}

// QueryRows runs query, written out, outside any transaction and hands its rows and their columns
// to read: pgx's own rows on PostgreSQL, database/sql's elsewhere.
func (db *DB) QueryRows(ctx context.Context, query string, args []any, read func(columns []string, rows ent.RowScanner) error) error {
	args = inUTC(args).([]any)
	if db.pgxRows != nil {
		rows, err := db.pgxRows.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := read(pgxColumnNames(rows), rows); err != nil {
			return err
		}
		return rows.Err()
	}
	rows, err := db.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return err
	}
	if err := read(columns, rows); err != nil {
		return err
	}
	return rows.Err()
}

// queryPgxRows runs ent's query on the pool of pgx's own rows into rows, if ctx says it scans into
// pgx's own types and there is such a pool; it says whether it did.
func queryPgxRows(ctx context.Context, pool *pgxpool.Pool, query string, args, rows any) (bool, error) {
	list, isList := args.([]any)
	into, isRows := rows.(*entsql.Rows)
	if pool == nil || !isList || !isRows || !ent.PgxRowsWanted(ctx) {
		return false, nil
	}
	native, err := pool.Query(ctx, query, list...)
	if err != nil {
		return true, err
	}
	*into = entsql.Rows{ColumnScanner: pgxColumnScanner{native}}
	return true, nil
}
