package database

import (
	"context"
	"database/sql/driver"
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
		return db.execCheckedInTx(ctx, statements, func([]int64) error { return nil })
	}
	return db.onPgxConn(ctx, func(conn *pgx.Conn) error {
		batch := &pgx.Batch{}
		for _, s := range statements {
			batch.Queue(s.Query, inUTC(s.Args).([]any)...)
		}
		db.countRoundTrip()
		results := conn.SendBatch(ctx, batch)
		for i := range statements {
			if _, err := results.Exec(); err != nil {
				results.Close()
				return &StatementError{Index: i, Err: err}
			}
		}
		return results.Close()
	})
}

// onPgxConn runs fn on pgx's own connection under one of the pool's (stdlib's, or the
// round-trip counter over it), held for fn alone. An error of fn's that is driver.ErrBadConn
// has database/sql close the connection rather than pool it.
func (db *DB) onPgxConn(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		native, ok := driverConn.(interface{ Conn() *pgx.Conn })
		if !ok {
			return fmt.Errorf("database: %T is not pgx's connection", driverConn)
		}
		return fn(native.Conn())
	})
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

// ExecChecked runs statements as one transaction that check, handed the rows each statement
// affected, decides the end of: committed when check returns nil, rolled back, with nothing
// written, when it returns an error (which ExecChecked returns) or a statement fails (a
// *StatementError naming it). On PostgreSQL it takes two exchanges with the server where
// database/sql takes one for BEGIN, one per statement and one for COMMIT: BEGIN and the
// statements in one pgx.Batch, then COMMIT or ROLLBACK, the statements' locks held in between.
// On SQLite, whose statements are calls in process, they run one after another in an ent
// transaction.
func (db *DB) ExecChecked(ctx context.Context, statements []ent.Statement, check func(affected []int64) error) error {
	if db.Dialect != dialect.Postgres {
		return db.execCheckedInTx(ctx, statements, check)
	}
	return db.onPgxConn(ctx, func(pgxConn *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		for _, s := range statements {
			batch.Queue(s.Query, inUTC(s.Args).([]any)...)
		}
		db.countRoundTrip()
		err := readChecked(pgxConn.SendBatch(ctx, batch), len(statements), check)
		if pgxConn.IsClosed() {
			// The batch broke the connection (its context ended, the network failed): the
			// server rolls back what it ran.
			return errors.Join(err, driver.ErrBadConn)
		}
		end := "COMMIT"
		if err != nil {
			end = "ROLLBACK"
		}
		// The transaction ends even when its caller's context has ended: the connection must not
		// go back to the pool inside it.
		db.countRoundTrip()
		tag, endErr := pgxConn.Exec(context.WithoutCancel(ctx), end)
		if pgxConn.IsClosed() || pgxConn.PgConn().TxStatus() != 'I' || (endErr != nil && end == "ROLLBACK") {
			// Not known to have ended: the connection is closed rather than reused, and the
			// server rolls back what it holds.
			return errors.Join(err, fmt.Errorf("database: %s did not end the transaction: %v", end, endErr), driver.ErrBadConn)
		}
		switch {
		case endErr != nil: // a COMMIT refused, which ends the transaction
			return fmt.Errorf("database: COMMIT: %w", endErr)
		case err == nil && tag.String() != "COMMIT":
			return fmt.Errorf("database: the transaction was rolled back at its commit (%s)", tag)
		}
		return err
	})
}

// readChecked reads the answers of a batch of BEGIN and n statements, and hands the rows each
// statement affected to check.
func readChecked(results pgx.BatchResults, n int, check func(affected []int64) error) error {
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return fmt.Errorf("database: BEGIN: %w", err)
	}
	affected := make([]int64, n)
	for i := range affected {
		tag, err := results.Exec()
		if err != nil {
			return &StatementError{Index: i, Err: err}
		}
		affected[i] = tag.RowsAffected()
	}
	if err := results.Close(); err != nil {
		return err
	}
	return check(affected)
}

func (db *DB) execCheckedInTx(ctx context.Context, statements []ent.Statement, check func(affected []int64) error) error {
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// A panic in check must not leave the transaction, and SQLite's lock, open.
		if v := recover(); v != nil {
			tx.Rollback()
			panic(v)
		}
	}()
	affected := make([]int64, len(statements))
	for i, s := range statements {
		result, err := tx.ExecContext(ctx, s.Query, s.Args...)
		if err == nil {
			affected[i], err = result.RowsAffected()
		}
		if err != nil {
			return errors.Join(&StatementError{Index: i, Err: err}, tx.Rollback())
		}
	}
	if err := check(affected); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// countRoundTrip counts an exchange made on pgx's connection itself, which the pool's counter
// does not see, when the pool counts its round trips.
func (db *DB) countRoundTrip() {
	if db.roundTrips != nil {
		db.roundTrips.Add(1)
	}
}
