package payment

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/tenant"
)

// byIDRead is a read of one payment by id, written out once with ent's builder from the schema's
// columns (and changed by a modifier, as GetWithHistory's adds the history) and run as written,
// its rows read into payments by the code ent generates for its own queries. Reading a payment by id is most of the API's traffic, and ent's
// query would build and render this same statement, through its interceptors, for every read:
// more CPU than PostgreSQL spends running it. Run as written, the read does not pass ent's
// interceptors, so it holds the merchant rule itself: in a merchant's scope its statement has the
// merchant's condition; in the system's scope, which sees every merchant's payments, it has none.
type byIDRead struct {
	// forMerchant takes the id and the merchant; forSystem the id alone.
	forMerchant, forSystem string
}

// newByIDRead writes the read by id in the dialect, its selection changed by modify when that
// is not nil.
func newByIDRead(dialectName string, modify func(*sql.Selector)) byIDRead {
	statement := func(forMerchant bool) string {
		table := sql.Table(payment.Table)
		selector := sql.Dialect(dialectName).Select(table.Columns(payment.Columns...)...).From(table)
		// The values are placeholders' only: the arguments are the read's own, in this order.
		selector.Where(sql.EQ(table.C(payment.FieldID), ""))
		arguments := 1
		if forMerchant {
			selector.Where(sql.EQ(table.C(tenant.Field), ""))
			arguments++
		}
		if modify != nil {
			modify(selector)
		}
		query, args := selector.Query()
		if len(args) != arguments {
			panic(fmt.Sprintf("payment: the read by id has %d arguments, want %d: its modifier adds arguments", len(args), arguments))
		}
		return query
	}
	return byIDRead{forMerchant: statement(true), forSystem: statement(false)}
}

// read returns the payments with the id in ctx's scope (none or one), read from db.
func (r *byIDRead) read(ctx context.Context, db *database.DB, id string) ([]*ent.Payment, error) {
	query, args := r.forMerchant, []any{id, ""}
	merchant, forMerchant := tenant.Merchant(ctx)
	switch {
	case forMerchant:
		args[1] = merchant
	case tenant.IsSystem(ctx):
		query, args = r.forSystem, args[:1]
	default:
		return nil, tenant.ErrNoMerchant
	}
	var nodes []*ent.Payment
	err := db.QueryRows(ctx, query, args, func(columns []string, rows ent.RowScanner) (err error) {
		nodes, err = db.Ent.Payment.ScanRows(columns, rows)
		return err
	})
	return nodes, err
}
