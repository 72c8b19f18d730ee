package database

import (
	"context"
	stdsql "database/sql"
	"errors"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgxpool"
)

// utcDriver hands every time argument to the database in UTC. SQLite keeps times as text and
// compares them as text, so a time in another zone (a filter's offset, a cursor decoded into the
// server's local zone) would compare wrongly against the UTC times stored; PostgreSQL compares
// instants either way.
//
// It also hands pgx's own rows to a read outside a transaction that scans into pgx's own types,
// when it has a pool of them (rows.go).
type utcDriver struct {
	dialect.Driver
	pgxRows *pgxpool.Pool
}

func (d utcDriver) Exec(ctx context.Context, query string, args, v any) error {
	return d.Driver.Exec(ctx, query, inUTC(args), v)
}

func (d utcDriver) Query(ctx context.Context, query string, args, v any) error {
	args = inUTC(args)
	if queried, err := queryPgxRows(ctx, d.pgxRows, query, args, v); queried {
		return err
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d utcDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return utcTx{tx}, nil
}

type utcTx struct{ dialect.Tx }

func (t utcTx) Exec(ctx context.Context, query string, args, v any) error {
	return t.Tx.Exec(ctx, query, inUTC(args), v)
}

func (t utcTx) Query(ctx context.Context, query string, args, v any) error {
	return t.Tx.Query(ctx, query, inUTC(args), v)
}

// inUTC converts the time arguments of a query in place; ent builds a fresh slice per query.
func inUTC(args any) any {
	list, ok := args.([]any)
	if !ok {
		return args
	}
	for i, arg := range list {
		switch t := arg.(type) {
		case time.Time:
			list[i] = t.UTC()
		case *time.Time:
			if t != nil {
				list[i] = t.UTC()
			}
		}
	}
	return args
}

// ExecContext runs a statement ent does not build (PostgreSQL's advisory locks) in the
// transaction, when the driver under it can.
func (t utcTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	exec, ok := t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	})
	if !ok {
		return nil, errors.New("the transaction cannot run a statement of its own")
	}
	return exec.ExecContext(ctx, query, inUTC(args).([]any)...)
}
