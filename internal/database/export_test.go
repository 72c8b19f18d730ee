package database

import (
	"context"
	"errors"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/paygate/paygate/ent"
)

// QueryNatively reads query's rows on db as lean payment reads do.
func QueryNatively(ctx context.Context, db *DB, query string, args []any, read func(ent.NativeRows) error) error {
	return nativeDriver{entsql.OpenDB(dialect.Postgres, db.SQL)}.QueryRows(ctx, query, args, read)
}

// KeptScanPlans hands the plans a connection of db keeps for query to change, and returns how
// many statements that connection keeps plans for.
func KeptScanPlans(ctx context.Context, db *DB, query string, change func(plans []pgtype.ScanPlan, types []uint32)) (statements int, err error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	err = conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(interface{ Conn() *pgx.Conn })
		if !ok {
			return errors.New("not pgx")
		}
		kept := scanPlansOf(c.Conn(), query).columns
		plans, types := make([]pgtype.ScanPlan, len(kept)), make([]uint32, len(kept))
		for i, column := range kept {
			plans[i], types[i] = column.plan, column.oid
		}
		change(plans, types)
		for i := range kept {
			kept[i].plan, kept[i].oid = plans[i], types[i]
		}
		statements = len(c.Conn().PgConn().CustomData()[scanPlansKey].(map[string]*scanPlans))
		return nil
	})
	return statements, err
}
