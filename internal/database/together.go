package database

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/jackc/pgx/v5"

	"github.com/paygate/paygate/ent"
)

// ExecTogether runs statements (rendered by ent's InsertStatement) as one transaction: all of
// them or none. On PostgreSQL they go in one pgx.Batch: one exchange with the server, which runs
// a batch as one implicit transaction, where database/sql would wait for an answer to BEGIN, to
// each statement and to COMMIT in turn. On SQLite, whose statements are calls in process, they
// run one after another in an ent transaction. The error of a statement that failed is a
// *StatementError naming it.
func (db *DB) ExecTogether(ctx context.Context, statements ...ent.Statement) error {
	if db.Dialect != dialect.Postgres {
		return db.execInTx(ctx, statements)
	}
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		// pgx's connection under database/sql: stdlib.Conn, or the round-trip counter over it.
		native, ok := driverConn.(interface{ Conn() *pgx.Conn })
		if !ok {
			return fmt.Errorf("database: %T is not pgx's connection", driverConn)
		}
		batch := &pgx.Batch{}
		for _, s := range statements {
			batch.Queue(s.Query, inUTC(s.Args).([]any)...)
		}
		if db.roundTrips != nil {
			db.roundTrips.Add(1)
		}
		results := native.Conn().SendBatch(ctx, batch)
		for i := range statements {
			if _, err := results.Exec(); err != nil {
				results.Close()
				return &StatementError{Index: i, Err: err}
			}
		}
		return results.Close()
	})
}

func (db *DB) execInTx(ctx context.Context, statements []ent.Statement) error {
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		return err
	}
	for i, s := range statements {
		if _, err := tx.ExecContext(ctx, s.Query, s.Args...); err != nil {
			return errors.Join(&StatementError{Index: i, Err: err}, tx.Rollback())
		}
	}
	return tx.Commit()
}

// StatementError is the error of the statement at Index among those run together; nothing of
// them was written.
type StatementError struct {
	Index int
	Err   error
}

func (e *StatementError) Error() string { return fmt.Sprintf("statement %d: %v", e.Index+1, e.Err) }
func (e *StatementError) Unwrap() error { return e.Err }

// IsUniqueViolation reports whether err is a unique index refusing a row, on SQLite or
// PostgreSQL, as ent.IsConstraintError does for the statements ent runs itself.
func IsUniqueViolation(err error) bool { return err != nil && sqlgraph.IsUniqueConstraintError(err) }
