package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"

	"github.com/XSAM/otelsql"
	"github.com/jackc/pgx/v5"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// A round trip, as counted here, is one call the pool makes into its driver that asks the
// database something: a statement run (alone or prepared), a statement prepared, a transaction
// begun, committed or rolled back, a ping. On PostgreSQL each is at least one exchange with the
// server (pgx's first run of a statement on a connection prepares it too); on
// SQLite each is a call into the engine. The benchmarks report them per request, so a change that
// adds one is seen in review.

// openPool opens the pool, with every round trip counted in roundTrips unless it is nil, and
// every statement traced when traced (on PostgreSQL by pgx's tracer, which connectorFor sets).
func openPool(driverName, dsn string, roundTrips *atomic.Int64, traced bool) (*sql.DB, error) {
	connector, err := connectorFor(driverName, dsn, traced)
	if err != nil {
		return nil, err
	}
	if roundTrips != nil {
		connector = countingConnector{Connector: connector, roundTrips: roundTrips}
	}
	if traced && driverName != "pgx" {
		// A span per statement, transaction, prepare and connection made within a traced request
		// or job, as pgx's tracer does on PostgreSQL: none for the background loops' reads, which
		// would each be a trace of one span; none per connection's reset or rows read.
		return otelsql.OpenDB(connector, otelsql.WithAttributes(semconv.DBSystemNameSQLite),
			otelsql.WithSpanOptions(otelsql.SpanOptions{OmitConnResetSession: true, OmitRows: true,
				SpanFilter: func(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
					return trace.SpanFromContext(ctx).IsRecording()
				}})), nil
	}
	return sql.OpenDB(connector), nil
}

// dsnConnector connects as sql.Open does for a driver without a connector of its own, as
// modernc's sqlite is.
type dsnConnector struct {
	driver driver.Driver
	dsn    string
}

func (c dsnConnector) Driver() driver.Driver { return c.driver }

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }

// countingConnector counts the round trips of the connections it makes.
type countingConnector struct {
	driver.Connector
	roundTrips *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	full, ok := conn.(contextConn)
	if !ok {
		conn.Close()
		return nil, errors.New("counting round trips needs a driver with context methods")
	}
	counting := &countingConn{contextConn: full, roundTrips: c.roundTrips}
	counting.tx.roundTrips = c.roundTrips
	counting.valueChecker, _ = conn.(driver.NamedValueChecker)
	return counting, nil
}

// contextConn is a connection with every method database/sql prefers, as both drivers' are: it
// then never calls the older ones (Prepare, Begin), which pass through uncounted, as do those that
// ask the database nothing.
type contextConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
}

type countingConn struct {
	contextConn
	// valueChecker is the driver's own conversion of arguments, if it has one.
	valueChecker driver.NamedValueChecker
	// tx is the connection's one transaction at a time, kept here so that a Begin allocates no
	// more than the driver's does.
	tx         countingTx
	roundTrips *atomic.Int64
}

// count counts a call, but not one the driver declined (driver.ErrSkip): database/sql then makes
// it another way, which is counted.
func (c *countingConn) count(err error) {
	if !errors.Is(err, driver.ErrSkip) {
		c.roundTrips.Add(1)
	}
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	result, err := c.contextConn.ExecContext(ctx, query, args)
	c.count(err)
	return result, err
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.contextConn.QueryContext(ctx, query, args)
	c.count(err)
	return rows, err
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	stmt, err := c.contextConn.PrepareContext(ctx, query)
	c.count(err)
	if err != nil {
		return nil, err
	}
	full, ok := stmt.(contextStmt)
	if !ok {
		stmt.Close()
		return nil, errors.New("counting round trips needs a driver whose statements have context methods")
	}
	return countingStmt{contextStmt: full, roundTrips: c.roundTrips}, nil
}

// Conn is pgx's connection under the counter, for a batch (ExecTogether), which counts itself:
// one round trip, however many statements it holds.
func (c *countingConn) Conn() *pgx.Conn {
	return c.contextConn.(interface{ Conn() *pgx.Conn }).Conn()
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.contextConn.BeginTx(ctx, opts)
	c.count(err)
	if err != nil {
		return nil, err
	}
	c.tx.Tx = tx
	return &c.tx, nil
}

func (c *countingConn) Ping(ctx context.Context) error {
	err := c.contextConn.Ping(ctx)
	c.count(err)
	return err
}

// CheckNamedValue converts arguments as the driver does, or, with driver.ErrSkip, as database/sql
// does for a driver that does not.
func (c *countingConn) CheckNamedValue(value *driver.NamedValue) error {
	if c.valueChecker == nil {
		return driver.ErrSkip
	}
	return c.valueChecker.CheckNamedValue(value)
}

type countingTx struct {
	driver.Tx
	roundTrips *atomic.Int64
}

func (t *countingTx) Commit() error {
	t.roundTrips.Add(1)
	return t.Tx.Commit()
}

func (t *countingTx) Rollback() error {
	t.roundTrips.Add(1)
	return t.Tx.Rollback()
}

type contextStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type countingStmt struct {
	contextStmt
	roundTrips *atomic.Int64
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.roundTrips.Add(1)
	return s.contextStmt.ExecContext(ctx, args)
}

func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.roundTrips.Add(1)
	return s.contextStmt.QueryContext(ctx, args)
}
