package database

import (
	"context"
	stdsql "database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A transaction on PostgreSQL costs a round trip per statement, and BEGIN and COMMIT one each:
// a payment's create writes its idempotency key, the payment and two history rows, each waiting
// for the server before the next is sent, though none of their answers is read. A pipelined
// transaction holds back every statement whose answer no one reads (an insert of a row whose id
// the caller chose, which is how ent inserts every row here) and sends the held ones, in order,
// in one exchange with the next statement whose count is read (a conditional update), or with
// COMMIT; before a query, whose rows database/sql reads, in an exchange of their own. The
// statements, their order, the rows they lock and the transaction's atomicity are what they
// would be without it; what changes is when a held statement's error is heard: at that next
// exchange, from the call that made it (see Pipelined).

type pipelinedKey struct{}

// Pipelined returns a context in which a transaction begun on PostgreSQL is pipelined: the
// statements whose answers are not read are sent with the next one whose count is read, or with
// COMMIT, or before the next query. Use it for a transaction that does not look at the error of
// such a statement where it runs it (a unique index refusing an insert is then the error of a
// later statement, or of the commit), as the transactions that write a payment's money do not.
// Elsewhere, and on SQLite (whose statements are calls in process), transactions are as usual.
func Pipelined(ctx context.Context) context.Context {
	return context.WithValue(ctx, pipelinedKey{}, true)
}

type countUnreadKey struct{}

// CountUnread returns a context in which an update of many rows (ent's Update().Exec, which drops
// the count Save returns) in a pipelined transaction is held like an insert although ent asks
// for its count: the caller says it does not read it. ent is then told no row changed, and the
// statement goes with the next exchange, whose error is its error. Not for UpdateOne or
// DeleteOne, which read the count to say whether the row exists. Elsewhere it runs as usual.
func CountUnread(ctx context.Context) context.Context {
	return context.WithValue(ctx, countUnreadKey{}, true)
}

// pipeliningDriver begins pipelined transactions where the context asks for them.
type pipeliningDriver struct{ *entsql.Driver }

func (d pipeliningDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	if on, _ := ctx.Value(pipelinedKey{}).(bool); !on {
		return d.Driver.Tx(ctx)
	}
	conn, err := d.DB().Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &pipelinedTx{ctx: ctx, conn: conn}, nil
}

// pipelinedTx is a transaction on one connection that sends BEGIN with its first exchange and
// holds back the statements whose answers are not read.
type pipelinedTx struct {
	// ctx is the one the transaction was begun with, for its commit and rollback.
	ctx  context.Context
	conn *stdsql.Conn
	// begun says BEGIN has been sent; held are the statements waiting for the next exchange.
	begun bool
	held  []heldStatement
	// failed is set once an exchange failed: the server has aborted the transaction, and only
	// a rollback is left to do.
	failed bool
}

// heldStatement is a statement and its arguments as ent handed them over: they are encoded when
// the statement is sent, so an argument must not change after it is held. ent's are values (its
// JSON already marshalled, times already in UTC), and a held one is not touched again.
type heldStatement struct {
	query string
	args  []any
}

// pgxConnection is what Paygate asks of pgx's connection under database/sql, directly: to send
// statements in one exchange (pipelined transactions) and to read rows natively (native.go).
// It is pgx's own, or the round-trip counting one over it (roundtrips.go).
type pgxConnection interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	Query(ctx context.Context, query string, args ...any) (pgx.Rows, error)
}

// Exec holds back a statement whose answer is not asked for (v nil), or not read (CountUnread);
// one whose answer is read goes at once, with those held.
func (t *pipelinedTx) Exec(ctx context.Context, query string, args, v any) error {
	argv, ok := args.([]any)
	if !ok {
		return fmt.Errorf("database: invalid arguments %T; want []any", args)
	}
	if t.failed {
		return errAborted
	}
	unread, _ := ctx.Value(countUnreadKey{}).(bool)
	switch v := v.(type) {
	case nil:
		t.held = append(t.held, heldStatement{query, argv})
		return nil
	case *stdsql.Result:
		if unread {
			t.held = append(t.held, heldStatement{query, argv})
			*v = driver.RowsAffected(0)
			return nil
		}
		tag, err := t.send(ctx, heldStatement{query, argv})
		if err != nil {
			return err
		}
		*v = driver.RowsAffected(tag.RowsAffected())
		return nil
	default:
		return fmt.Errorf("database: invalid result %T; want *sql.Result", v)
	}
}

// Query sends the statements held, then runs query, whose rows ent reads.
func (t *pipelinedTx) Query(ctx context.Context, query string, args, v any) error {
	if t.failed {
		return errAborted
	}
	if !t.begun || len(t.held) > 0 {
		if _, err := t.send(ctx); err != nil {
			return err
		}
	}
	return entsql.Conn{ExecQuerier: t.conn}.Query(ctx, query, args, v)
}

// Commit sends the statements held with COMMIT, in one exchange. Like database/sql's, a failed
// commit ends the transaction: it is rolled back, and the connection goes back to the pool.
//
// The exchange is not cut short when the transaction's context ends: COMMIT is already in the
// server's hands behind the statements held, and one of them may be waiting for a lock. pgx
// would close the socket and answer an error while the server, once the lock is free, goes on
// to commit. Waiting for the answer keeps the answer and the database in agreement.
func (t *pipelinedTx) Commit() error {
	if !t.begun && len(t.held) == 0 {
		return t.conn.Close() // nothing was written
	}
	if t.failed {
		return errors.Join(errAborted, t.Rollback())
	}
	tag, err := t.send(context.WithoutCancel(t.ctx), heldStatement{query: "COMMIT"})
	switch {
	case err != nil:
		return errors.Join(err, t.Rollback())
	case tag.String() != "COMMIT":
		// PostgreSQL answers COMMIT of a transaction it aborted with ROLLBACK.
		return errors.Join(errAborted, t.conn.Close())
	}
	return t.conn.Close()
}

// Rollback drops the statements held and rolls back what was sent.
func (t *pipelinedTx) Rollback() error {
	t.held = nil
	var err error
	if t.begun {
		_, err = t.conn.ExecContext(context.WithoutCancel(t.ctx), "ROLLBACK")
	}
	return errors.Join(err, t.conn.Close())
}

var errAborted = errors.New("database: the transaction was aborted by an earlier statement's error")

// send sends BEGIN if it has not been, the statements held and then last, in one exchange, and
// returns last's answer; the first error of any of them is the error, and aborts the transaction.
func (t *pipelinedTx) send(ctx context.Context, last ...heldStatement) (pgconn.CommandTag, error) {
	batch := &pgx.Batch{}
	if !t.begun {
		batch.Queue("BEGIN")
	}
	for _, s := range append(t.held, last...) {
		batch.Queue(s.query, s.args...)
	}
	t.held = t.held[:0]
	var tag pgconn.CommandTag
	err := t.conn.Raw(func(driverConn any) error {
		conn, ok := pgxConnectionOf(driverConn)
		if !ok {
			return fmt.Errorf("database: %T cannot send statements together", driverConn)
		}
		results := conn.SendBatch(ctx, batch)
		var err error
		for range batch.Len() {
			if tag, err = results.Exec(); err != nil {
				break
			}
		}
		// Close reads what is left, and answers the first error again.
		if closeErr := results.Close(); err == nil {
			err = closeErr
		}
		return err
	})
	t.begun = true
	if err != nil {
		t.failed = true
		return tag, err
	}
	return tag, nil
}

// pgxConnectionOf returns pgx's connection under database/sql's driverConn, if it is pgx's.
func pgxConnectionOf(driverConn any) (pgxConnection, bool) {
	switch c := driverConn.(type) {
	case interface{ Conn() *pgx.Conn }:
		return c.Conn(), true
	case pgxConnection:
		return c, true
	}
	return nil, false
}

// UniqueViolation reports whether err is PostgreSQL refusing a row of table for a unique index:
// in a pipelined transaction, the error of an insert whose answer was not read where it ran.
func UniqueViolation(err error, table string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == table // unique_violation
}
