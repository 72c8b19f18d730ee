// Written by hand, beside the code ent generates: ent leaves files it did not write alone.

package ent

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/paygate/paygate/ent/payment"
)

// LeanPaymentReads is the query interceptor that reads payments through a shorter path than ent's
// general one, where a query loads nothing beside the payments: reading a payment by id or a page
// of them is most of the API's traffic, and ent's general path spends more CPU building the
// statement than decoding its rows. Four things differ:
//
//   - the list of the payment's columns, quoted and qualified, is rendered once per dialect
//     rather than for every query;
//   - a column a modifier adds is read as the driver gives it (PostgreSQL's text as a string,
//     its JSON as bytes, its numeric as a string), rather than converted to the type the driver
//     names for it, which would have the driver describe every column of the statement
//     for every row: Payment.Value's answer for such a column depends on the path that read it;
//   - on PostgreSQL, outside a transaction, the rows are read by pgx itself (NativeQuerier),
//     into its own types, rather than through database/sql, which has pgx make a value of each
//     column (an allocation for most) before converting it again;
//   - the two columns kept as JSON (routing, metadata) are decoded by Go's second JSON decoder.
//
// Everything else is ent's own: the traversers run before it (the tenant rule among them: it adds
// its predicate to the query), the interceptors registered on the client before it wrap it, and
// the rows' other columns are assigned by the generated code. A query that loads edges, reads
// selected fields, counts, or is nested in another query's loading takes ent's general path,
// unchanged, as does every query while the schema gives payments an interceptor that is not a
// traverser: a client's interceptors wrap the schema's, so the short path would leave it out.
//
// A modifier sees the payment's columns as one selection, the column list; one that reads the
// selected columns one by one (ent's LimitNeighbors) is for edges, whose queries take ent's path.
func LeanPaymentReads() Interceptor {
	for _, inter := range payment.Interceptors {
		if _, traverses := inter.(Traverser); !traverses {
			return leanPaymentReads{}
		}
	}
	return leanPaymentReads{lean: true}
}

// leanPaymentReads is LeanPaymentReads' interceptor, a type of its own so that
// PaymentStatementsKeepable can tell it from others; without lean, it passes every query on.
type leanPaymentReads struct{ lean bool }

func (l leanPaymentReads) Intercept(next Querier) Querier {
	if !l.lean {
		return next
	}
	return QuerierFunc(func(ctx context.Context, q Query) (Value, error) {
		if pq, ok := q.(*PaymentQuery); ok && pq.leanReadable(ctx) {
			return pq.leanAll(ctx)
		}
		return next.Query(ctx, q)
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

// paymentColumnsIn returns the payment's columns as qualifiedColumns gives them for every query
// of ent's path, joined into one selection: ent writes a quoted name as it is.
func paymentColumnsIn(dialectName string) string {
	if columns, ok := paymentColumnsByDialect.Load(dialectName); ok {
		return columns.(string)
	}
	columns := strings.Join(qualifiedColumns(dialectName, payment.Table, payment.Columns), ", ")
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
	native, isNative := _q.driver.(NativeQuerier)
	if statement, rendering := ctx.Value(paymentStatementKey{}).(*PaymentStatement); rendering {
		if isNative {
			statement.query, statement.args, statement.interceptors = query, args, len(_q.inters)
		}
		return nil, nil
	}
	if isNative {
		var nodes []*Payment
		err := native.QueryRows(ctx, query, args, func(rows NativeRows) (err error) {
			nodes, err = _q.leanScan(rows, rows.Columns(), true)
			return err
		})
		return nodes, err
	}
	rows := &sql.Rows{}
	if err := _q.driver.Query(ctx, query, args, rows); err != nil {
		return nil, err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	nodes, err := _q.leanScan(rows, columns, false)
	if err != nil {
		return nil, err
	}
	return nodes, rows.Err()
}

// A PaymentStatement is a statement the short path rendered for a read of payments, every
// interceptor's predicates in it, kept to be run again with other arguments: for a read whose
// statement differs from one time to the next only in its arguments, ent's rendering it anew costs
// more than PostgreSQL's running it.
type PaymentStatement struct {
	query string
	args  []any
	// interceptors is how many interceptors payment queries had when it was rendered.
	interceptors int
}

// Rendered says whether the read rendered its statement: it took the short path, natively.
func (st *PaymentStatement) Rendered() bool { return st.query != "" }

// Args are the arguments the statement was rendered with, in order.
func (st *PaymentStatement) Args() []any { return st.args }

type paymentStatementKey struct{}

// ErrPaymentStatementStale is ReadPaymentStatement's refusal of a statement rendered before an
// interceptor was registered: the read is to be made by ent.
var ErrPaymentStatementStale = errors.New("reading a statement rendered before an interceptor was registered")

// RenderPaymentStatement returns a context in which a read of payments that takes the short path
// is not run, and reads no payment: natively, it renders its statement into the PaymentStatement
// returned; otherwise (through database/sql) it leaves it unrendered. A read that takes ent's
// general path runs as usual, and leaves it unrendered.
func RenderPaymentStatement(ctx context.Context) (context.Context, *PaymentStatement) {
	statement := &PaymentStatement{}
	return context.WithValue(ctx, paymentStatementKey{}, statement), statement
}

// ReadPaymentStatement runs a rendered statement natively, with args in place of the arguments it
// was rendered with, and returns its payments. It runs no interceptor: those of the read that
// rendered it are in the statement already, with the arguments they added then. So the caller
// must know that those interceptors would add the same to this read (PaymentStatementsKeepable),
// and give the arguments they would. A statement rendered before an interceptor was registered
// is refused with ErrPaymentStatementStale (PaymentStatementCurrent).
func (c *PaymentClient) ReadPaymentStatement(ctx context.Context, statement *PaymentStatement, args []any) ([]*Payment, error) {
	native, ok := c.driver.(NativeQuerier)
	switch {
	case !ok:
		return nil, fmt.Errorf("reading a rendered statement needs a native driver, not %T", c.driver)
	case !statement.Rendered():
		return nil, fmt.Errorf("reading a statement never rendered")
	case !c.PaymentStatementCurrent(statement):
		return nil, ErrPaymentStatementStale
	case len(args) != len(statement.args):
		return nil, fmt.Errorf("a statement rendered with %d arguments given %d", len(statement.args), len(args))
	}
	reader := &PaymentQuery{config: c.config}
	var nodes []*Payment
	err := native.QueryRows(ctx, statement.query, args, func(rows NativeRows) (err error) {
		nodes, err = reader.leanScan(rows, rows.Columns(), true)
		return err
	})
	return nodes, err
}

// PaymentStatementsKeepable says whether a statement rendered for a read of payments by the
// client may be kept: the short path serves its reads (so rendering one runs nothing), and every
// other interceptor of payment queries, the client's and the schema's alike, is one that known
// accepts.
func (c *PaymentClient) PaymentStatementsKeepable(known func(Interceptor) bool) bool {
	shortPath := false
	for _, inter := range c.Interceptors() {
		if lean, is := inter.(leanPaymentReads); is {
			shortPath = shortPath || lean.lean
		} else if !known(inter) {
			return false
		}
	}
	return shortPath
}

// PaymentStatementCurrent says whether statement was rendered with every interceptor payment
// queries have now: interceptors are only ever added, and one added since is not in it.
func (c *PaymentClient) PaymentStatementCurrent(statement *PaymentStatement) bool {
	return statement.interceptors == len(c.inters.Payment)+len(payment.Interceptors)
}

// NativeQuerier is a driver that can run a read with the database's own driver, outside
// database/sql, and hand its rows to read before it returns (on PostgreSQL, pgx's).
type NativeQuerier interface {
	QueryRows(ctx context.Context, query string, args []any, read func(NativeRows) error) error
}

// NativeRows are a read's rows as a NativeQuerier hands them over. Scan takes the same
// destinations for every row; pgx's own types among them (pgtype.Text, pgtype.Int8, ...), and
// *any for a column a modifier adds, which it sets as database/sql would.
type NativeRows interface {
	Columns() []string
	Next() bool
	Scan(dest ...any) error
}

// scannedRows are rows to scan payments from.
type scannedRows interface {
	Next() bool
	Scan(dest ...any) error
}

// leanScan reads the payments of rows, whose columns are columns: into the destinations ent's
// generated scanValues makes, or, native, into pgx's own types, then copied into those.
func (_q *PaymentQuery) leanScan(rows scannedRows, columns []string, native bool) ([]*Payment, error) {
	set, err := takeLeanScanSet(columns, native)
	if err != nil {
		return nil, err
	}
	defer set.release()
	nodes := []*Payment{}
	for rows.Next() {
		if err := rows.Scan(set.scanned...); err != nil {
			return nil, err
		}
		if native {
			if err := copyNative(set.values, set.scanned); err != nil {
				return nil, err
			}
		}
		node := &Payment{config: _q.config}
		if err := node.assignValues(set.assigned, set.assignedValues); err != nil {
			return nil, err
		}
		if err := node.decodeJSONColumns(set.routing, set.metadata); err != nil {
			return nil, err
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// leanScanSet is the destinations a read scans its rows into. One set serves every row of a read,
// and then the next read of the same columns: the generated assignValues copies each value out of
// its destination, a destination of bytes gets a new slice on each scan, and ent's
// SelectValues.Set keeps a column's value, not its destination. Kept for the next read, they cost
// a read of one payment none of the 90 or so allocations they took, a quarter of its own.
type leanScanSet struct {
	columns []string
	native  bool
	// values are scanValues' destinations; scanned those the rows are scanned into: the same, or
	// pgx's own types.
	values, scanned []any
	// routing and metadata are decoded apart; assigned are the other columns, with their values.
	routing, metadata *[]byte
	assigned          []string
	assignedValues    []any
	pool              *sync.Pool
}

// leanScanSets holds, for each hash of the columns read and whether natively, a pool of sets.
var leanScanSets sync.Map

func takeLeanScanSet(columns []string, native bool) (*leanScanSet, error) {
	key := columnsHash(columns, native)
	pool, ok := leanScanSets.Load(key)
	if !ok {
		pool, _ = leanScanSets.LoadOrStore(key, &sync.Pool{})
	}
	if set, ok := pool.(*sync.Pool).Get().(*leanScanSet); ok && set.native == native && slices.Equal(set.columns, columns) {
		return set, nil
	}
	values, err := (*Payment).scanValues(nil, columns)
	if err != nil {
		return nil, err
	}
	set := &leanScanSet{columns: slices.Clone(columns), native: native, values: values, scanned: values, pool: pool.(*sync.Pool)}
	for i, value := range values {
		switch column := columns[i]; {
		case column == payment.FieldRouting:
			set.routing = value.(*[]byte)
		case column == payment.FieldMetadata:
			set.metadata = value.(*[]byte)
		default:
			if _, unknown := value.(*sql.UnknownType); unknown {
				values[i] = new(any) // ent's SelectValues.Set keeps the value, not the pointer
			}
			set.assigned, set.assignedValues = append(set.assigned, column), append(set.assignedValues, values[i])
		}
	}
	if native {
		set.scanned = make([]any, len(values))
		for i, value := range values {
			set.scanned[i] = nativeDestination(value)
		}
	}
	return set, nil
}

// release gives the set back for the next read of its columns.
func (set *leanScanSet) release() { set.pool.Put(set) }

// columnsSeed seeds columnsHash for the life of the process.
var columnsSeed = maphash.MakeSeed()

// columnsHash hashes the columns' names, and whether they are read natively: the runtime's own
// string hash, some thirty names a read, where a byte at a time cost a read by id 1% of its
// instructions.
func columnsHash(columns []string, native bool) uint64 {
	var h maphash.Hash
	h.SetSeed(columnsSeed)
	if native {
		h.WriteByte(1)
	}
	for _, column := range columns {
		h.WriteString(column)
		h.WriteByte(',')
	}
	return h.Sum64()
}

// nativeDestination is the destination pgx scans natively for one of scanValues' destinations:
// one of its own types for each of database/sql's, the same one for bytes and *any.
func nativeDestination(value any) any {
	switch value.(type) {
	case *sql.NullString:
		return new(pgtype.Text)
	case *sql.NullInt64:
		return new(pgtype.Int8)
	case *sql.NullTime:
		return new(pgtype.Timestamptz)
	case *sql.NullBool:
		return new(pgtype.Bool)
	case *sql.NullFloat64:
		return new(pgtype.Float8)
	}
	return value
}

// copyNative copies a row scanned into nativeDestination's destinations into scanValues' own.
func copyNative(values, scanned []any) error {
	for i, value := range values {
		switch value := value.(type) {
		case *sql.NullString:
			*value = sql.NullString(*scanned[i].(*pgtype.Text))
		case *sql.NullInt64:
			*value = sql.NullInt64(*scanned[i].(*pgtype.Int8))
		case *sql.NullTime:
			scannedTime := scanned[i].(*pgtype.Timestamptz)
			if scannedTime.InfinityModifier != pgtype.Finite {
				return fmt.Errorf("an infinite time in a payment's column")
			}
			*value = sql.NullTime{Time: scannedTime.Time, Valid: scannedTime.Valid}
		case *sql.NullBool:
			*value = sql.NullBool(*scanned[i].(*pgtype.Bool))
		case *sql.NullFloat64:
			*value = sql.NullFloat64(*scanned[i].(*pgtype.Float8))
		}
	}
	return nil
}

// decodeJSONColumns sets the payment's fields kept as JSON from their columns as read, as the
// generated assignValues would, through the second version of Go's JSON decoder (to become
// encoding/json/v2): decoding them with encoding/json took a tenth of a page's CPU. What it reads
// was written by encoding/json from these same types, so the two decoders' differences (names
// matched by case, duplicate names, invalid UTF-8) never arise.
func (_m *Payment) decodeJSONColumns(routing, metadata *[]byte) error {
	if routing != nil && len(*routing) > 0 {
		if err := jsonv2.Unmarshal(*routing, &_m.Routing); err != nil {
			return fmt.Errorf("unmarshal field routing: %w", err)
		}
	}
	if metadata != nil && len(*metadata) > 0 {
		if err := jsonv2.Unmarshal(*metadata, &_m.Metadata); err != nil {
			return fmt.Errorf("unmarshal field metadata: %w", err)
		}
	}
	return nil
}
