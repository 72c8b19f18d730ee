package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/paygate/paygate/ent"
)

// QueryRows runs a read outside a transaction with pgx itself, on a connection of the pool, and
// hands its rows to read (ent.LeanPaymentReads reads payments so). database/sql has pgx turn every
// value of a row into a value of its own (an allocation for most columns) before converting it
// into the destination: scanned by pgx into its own types, a page of payments allocates a third
// fewer objects.
func (d nativeDriver) QueryRows(ctx context.Context, query string, args []any, read func(ent.NativeRows) error) error {
	conn, err := d.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		conn, ok := nativeQuerierOf(driverConn)
		if !ok {
			return errors.New("reading rows natively needs pgx under database/sql")
		}
		rows, err := conn.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		native := takeNativeRows(rows)
		defer native.release()
		if err := read(native); err != nil {
			return err
		}
		return rows.Err()
	})
}

// nativeRowsKept keeps a read's nativeRows, their column names' and destinations' slices with
// them, for the next read: three allocations and some 1.3 KB a read of a payment, a twentieth of
// what it allocates.
var nativeRowsKept = sync.Pool{New: func() any { return new(nativeRows) }}

// takeNativeRows returns nativeRows over rows, kept from an earlier read when there is one.
func takeNativeRows(rows pgx.Rows) *nativeRows {
	native := nativeRowsKept.Get().(*nativeRows)
	native.Rows = rows
	return native
}

// release gives r back for another read, holding nothing of this one's: not its rows, nor
// its destinations.
func (r *nativeRows) release() {
	clear(r.columns)
	clear(r.scan)
	*r = nativeRows{columns: r.columns[:0], scan: r.scan[:0]}
	nativeRowsKept.Put(r)
}

// nativeDriver is ent's driver over PostgreSQL, which also reads rows natively (QueryRows).
type nativeDriver struct{ *entsql.Driver }

// nativeQuerier is what a native read asks of pgx's connection under database/sql: pgx's own, or
// the round-trip counting one over it (roundtrips.go).
type nativeQuerier interface {
	Query(ctx context.Context, query string, args ...any) (pgx.Rows, error)
}

// nativeQuerierOf returns pgx's connection under database/sql's driverConn, if it is pgx's.
func nativeQuerierOf(driverConn any) (nativeQuerier, bool) {
	switch c := driverConn.(type) {
	case nativeQuerier:
		return c, true
	case interface{ Conn() *pgx.Conn }:
		return c.Conn(), true
	}
	return nil, false
}

// nativeUTCDriver is utcDriver over PostgreSQL's driver, which reads natively too.
type nativeUTCDriver struct{ utcDriver }

func (d nativeUTCDriver) QueryRows(ctx context.Context, query string, args []any, read func(ent.NativeRows) error) error {
	return d.Driver.(nativeDriver).QueryRows(ctx, query, inUTC(args).([]any), read)
}

// nativeRows are pgx's rows as ent.NativeRows. A destination of type *any (a column a modifier
// adds) gets what pgx under database/sql gives, so a read has the same answer in a transaction
// and out of one: JSON as bytes, integers as int64, floats as float64, booleans, times and bytes
// as themselves, anything else (text, numeric, uuid) as a string; NULL as nil.
type nativeRows struct {
	pgx.Rows
	columns []string
	// scan are the destinations handed to pgx, made once from the first row's.
	scan []any
}

func (r *nativeRows) Columns() []string {
	if len(r.columns) == 0 {
		for _, field := range r.FieldDescriptions() {
			r.columns = append(r.columns, field.Name)
		}
	}
	return r.columns
}

func (r *nativeRows) Scan(dest ...any) error {
	if len(r.scan) == 0 {
		r.scan = append(r.scan, dest...)
		fields := r.FieldDescriptions()
		for i, d := range dest {
			if _, unknown := d.(*any); unknown && i < len(fields) {
				switch fields[i].DataTypeOID {
				case pgtype.JSONOID, pgtype.JSONBOID:
					r.scan[i] = new([]byte)
				case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
					r.scan[i] = new(pgtype.Int8)
				case pgtype.Float4OID, pgtype.Float8OID:
					r.scan[i] = new(pgtype.Float8)
				case pgtype.BoolOID, pgtype.TimestamptzOID, pgtype.DateOID, pgtype.ByteaOID:
				default:
					r.scan[i] = new(pgtype.Text)
				}
			}
		}
	}
	if err := r.Rows.Scan(r.scan...); err != nil {
		return err
	}
	for i, d := range dest {
		unknown, ok := d.(*any)
		if !ok {
			continue
		}
		switch value := r.scan[i].(type) {
		case *[]byte:
			if *value == nil {
				*unknown = nil
			} else {
				*unknown = *value
			}
		case driver.Valuer: // pgtype's Text, Int8 and Float8: a string, int64 or float64, or nil
			v, err := value.Value()
			if err != nil {
				return err
			}
			*unknown = v
		}
	}
	return nil
}
