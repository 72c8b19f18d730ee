// Written by hand, beside the code ent generates: ent leaves files it did not write alone.

package ent

import (
	"context"
	"math"
	"strings"
	"sync"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent/payment"
)

// LeanPaymentReads is the query interceptor that reads payments through a shorter path than ent's
// general one, where a query loads nothing beside the payments: reading a payment by id or a page
// of them is most of the API's traffic, and ent's general path spends more CPU building the
// statement than decoding its rows. Two things differ:
//
//   - the list of the payment's columns, quoted and qualified, is rendered once per dialect
//     rather than for every query;
//   - a column a modifier adds is read as the driver gives it (PostgreSQL's text as a string,
//     its JSON as bytes, its numeric as a string), rather than converted to the type the driver
//     names for it, which would have the driver describe every column of the statement for
//     every row: Payment.Value's answer for such a column depends on the path that read it.
//
// Everything else is ent's own: the traversers run before it (the tenant rule among them: it adds
// its predicate to the query), the interceptors registered on the client before it wrap it, and
// the rows are scanned and assigned by the generated code. A query that loads edges, reads
// selected fields, counts, or is nested in another query's loading takes ent's general path,
// unchanged, as does every query while the schema gives payments an interceptor that is not a
// traverser: a client's interceptors wrap the schema's, so the short path would leave it out.
//
// A modifier sees the payment's columns as one selection, the column list; one that reads the
// selected columns one by one (ent's LimitNeighbors) is for edges, whose queries take ent's path.
func LeanPaymentReads() Interceptor {
	for _, inter := range payment.Interceptors {
		if _, traverses := inter.(Traverser); !traverses {
			return InterceptFunc(func(next Querier) Querier { return next })
		}
	}
	return InterceptFunc(func(next Querier) Querier {
		return QuerierFunc(func(ctx context.Context, q Query) (Value, error) {
			if pq, ok := q.(*PaymentQuery); ok && pq.leanReadable(ctx) {
				return pq.leanAll(ctx)
			}
			return next.Query(ctx, q)
		})
	})
}

// leanReadable says whether the query returns payments alone, every column, as the outermost
// query of its context: its own QueryContext is the context's, so its operation is the one
// the context names, and that is one whose value is a slice of payments.
func (_q *PaymentQuery) leanReadable(ctx context.Context) bool {
	if ent.QueryFromContext(ctx) != _q.ctx {
		return false
	}
	switch _q.ctx.Op {
	case ent.OpQueryAll, ent.OpQueryOnly, ent.OpQueryFirst:
	default:
		return false
	}
	return len(_q.ctx.Fields) == 0 && _q.ctx.Unique == nil && _q.sql == nil && _q.path == nil &&
		_q.withRefunds == nil && _q.withStatusHistory == nil &&
		len(_q.withNamedRefunds) == 0 && len(_q.withNamedStatusHistory) == 0 && len(_q.loadTotal) == 0
}

// paymentColumnsByDialect holds each dialect's rendering of the payment's columns.
var paymentColumnsByDialect sync.Map

// paymentColumnsIn returns the payment's columns, quoted and qualified by its table, as ent
// renders them in the dialect, joined into one selection: ent writes a quoted name as it is.
func paymentColumnsIn(dialectName string) string {
	if columns, ok := paymentColumnsByDialect.Load(dialectName); ok {
		return columns.(string)
	}
	columns := strings.Join(sql.Dialect(dialectName).Table(payment.Table).Columns(payment.Columns...), ", ")
	paymentColumnsByDialect.Store(dialectName, columns)
	return columns
}

// leanAll is what ent's sqlAll does for a query that loads no edges, the statement built in the
// same order as ent's graph query builds it.
func (_q *PaymentQuery) leanAll(ctx context.Context) ([]*Payment, error) {
	builder := sql.Dialect(_q.driver.Dialect())
	selector := builder.Select(paymentColumnsIn(_q.driver.Dialect())).From(builder.Table(payment.Table)).WithContext(ctx)
	for _, order := range _q.order {
		order(selector)
	}
	for _, predicate := range _q.predicates {
		predicate(selector)
	}
	// As ent does, a zero offset or limit is none, and an offset needs a limit.
	if offset := _q.ctx.Offset; offset != nil && *offset != 0 {
		selector.Offset(*offset).Limit(math.MaxInt32)
	}
	if limit := _q.ctx.Limit; limit != nil && *limit != 0 {
		selector.Limit(*limit)
	}
	for _, modify := range _q.modifiers {
		modify(selector)
	}
	if err := selector.Err(); err != nil {
		return nil, err
	}
	query, args := selector.Query()
	rows := &sql.Rows{}
	if err := _q.driver.Query(ctx, query, args, rows); err != nil {
		return nil, err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	// One set of scan destinations serves every row: the generated assignValues copies each
	// value out of its destination, and a destination of bytes gets a new slice on each scan.
	values, err := (*Payment).scanValues(nil, columns)
	if err != nil {
		return nil, err
	}
	for i, value := range values {
		if _, unknown := value.(*sql.UnknownType); unknown {
			values[i] = new(any) // ent's SelectValues.Set keeps the value, not the pointer
		}
	}
	nodes := []*Payment{}
	for rows.Next() {
		if err := rows.Scan(values...); err != nil {
			return nil, err
		}
		node := &Payment{config: _q.config}
		if err := node.assignValues(columns, values); err != nil {
			return nil, err
		}
		nodes = append(nodes, node)
	}
	return nodes, rows.Err()
}
