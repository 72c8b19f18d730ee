package database

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/paygate/paygate/ent"
)

// QueryRows runs a read outside a transaction with pgx itself, on a connection of the pool, and
// hands its rows to read (ent.LeanPaymentReads reads payments so). database/sql has pgx turn every
// value of a row into a value of its own (an allocation for most columns) before converting it
// into the destination: scanned by pgx into its own types, a page of payments allocates a third
// fewer objects.
func (d pipeliningDriver) QueryRows(ctx context.Context, query string, args []any, read func(ent.NativeRows) error) error {
	conn, err := d.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		conn, ok := pgxConnectionOf(driverConn)
		if !ok {
			return errors.New("reading rows natively needs pgx under database/sql")
		}
		rows, err := conn.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := read(&nativeRows{Rows: rows}); err != nil {
			return err
		}
		return rows.Err()
	})
}

// nativeUTCDriver is utcDriver over PostgreSQL's driver, which reads natively too.
type nativeUTCDriver struct{ utcDriver }

func (d nativeUTCDriver) QueryRows(ctx context.Context, query string, args []any, read func(ent.NativeRows) error) error {
	return d.Driver.(pipeliningDriver).QueryRows(ctx, query, inUTC(args).([]any), read)
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
	if r.columns == nil {
		fields := r.FieldDescriptions()
		r.columns = make([]string, len(fields))
		for i, field := range fields {
			r.columns[i] = field.Name
		}
	}
	return r.columns
}

func (r *nativeRows) Scan(dest ...any) error {
	if r.scan == nil {
		r.scan = make([]any, len(dest))
		fields := r.FieldDescriptions()
		for i, d := range dest {
			r.scan[i] = d
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
		case *pgtype.Text:
			*unknown = nil
			if value.Valid {
				*unknown = value.String
			}
		case *pgtype.Int8:
			*unknown = nil
			if value.Valid {
				*unknown = value.Int64
			}
		case *pgtype.Float8:
			*unknown = nil
			if value.Valid {
				*unknown = value.Float64
			}
		}
	}
	return nil
}
