package payment

import (
	"context"
	"errors"
	"sync/atomic"

	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/tenant"
)

// byIDRead reads one payment by id, its query changed by modify when that is not nil. Reading a
// payment by id is most of the API's traffic, and ent spends more CPU on making its query (the
// interceptors, the predicates, rendering the statement) than PostgreSQL spends on running it.
// So the first read in a merchant's scope has ent render its statement, through every interceptor,
// with stand-ins for the id and the merchant; later reads in any merchant's scope run that
// statement with their own id and merchant, and likewise for the system's scope, which sees every
// merchant's payments. That holds while the interceptors of payment queries are the tenant filter
// alone, whose predicate depends on the scope and nothing else (tenant.IsFilter), besides ent's
// short path for payments, which renders the statement: with any other interceptor, even one
// registered after the statement was kept (before the reads after it: ent's clients take no
// interceptor while they serve queries), or where reads are not native (SQLite, a service made on
// a transaction's client), every read takes ent's path.
type byIDRead struct {
	client *ent.Client
	modify func(*sql.Selector)
	// kept holds, for each kind of scope, the statement kept once made: one without a statement
	// is a kind whose reads take ent's path.
	kept [2]atomic.Pointer[keptStatement]
}

// The kinds of scope a statement is kept for.
const (
	merchantScope = iota
	systemScope
)

// keptStatement is a statement kept for a kind of scope, with where its arguments go.
type keptStatement struct {
	statement *ent.PaymentStatement
	// idAt and merchantAt are the positions of the id and the merchant among its arguments;
	// merchantAt is -1 in the system's scope.
	idAt, merchantAt int
}

// The stand-ins a statement is rendered with, told apart from anything else among its arguments.
const (
	idStandIn       = "pay_\x00id-of-a-kept-statement"
	merchantStandIn = "mer_\x00merchant-of-a-kept-statement"
)

// read returns the payments the statement kept for ctx's kind of scope reads (none or one), and
// whether there is one: when not, the read is ent's to make.
func (r *byIDRead) read(ctx context.Context, id string) ([]*ent.Payment, bool, error) {
	merchant, forMerchant := tenant.Merchant(ctx)
	kind := merchantScope
	switch {
	case forMerchant:
	case tenant.IsSystem(ctx):
		kind = systemScope
	default:
		return nil, false, nil // ent's path refuses a read that says neither whose nor the system's
	}
	kept := r.kept[kind].Load()
	if kept == nil {
		kept = r.keep(kind)
		r.kept[kind].Store(kept)
	}
	if kept.statement == nil {
		return nil, false, nil
	}
	args := make([]any, len(kept.statement.Args()))
	args[kept.idAt] = id
	if kept.merchantAt >= 0 {
		args[kept.merchantAt] = merchant
	}
	nodes, err := r.client.Payment.ReadPaymentStatement(ctx, kept.statement, args)
	if errors.Is(err, ent.ErrPaymentStatementStale) {
		// An interceptor was registered since the statement was kept: the next read keeps afresh.
		r.kept[kind].CompareAndSwap(kept, nil)
		return nil, false, nil
	}
	return nodes, true, err
}

// keep has ent render the read's statement for a kind of scope, with stand-ins for the id and the
// merchant, and returns it kept, or without a statement when it cannot be kept: an interceptor
// other than the tenant filter, no native reads, or arguments other than the stand-ins. It renders
// in a context of its own, which holds the scope and nothing of the request's.
func (r *byIDRead) keep(kind int) *keptStatement {
	if !r.client.Payment.PaymentStatementsKeepable(tenant.IsFilter) {
		return &keptStatement{}
	}
	ctx := tenant.System(context.Background())
	if kind == merchantScope {
		ctx = tenant.For(context.Background(), merchantStandIn)
	}
	ctx, statement := ent.RenderPaymentStatement(ctx)
	query := r.client.Payment.Query().Where(payment.ID(idStandIn))
	if r.modify != nil {
		query.Modify(r.modify)
	}
	// Rendered, the statement is not run: Only finds nothing, and its error says no more.
	_, _ = query.Only(ctx)
	// An interceptor registered while rendering may be in the statement unchecked: checked again.
	if !statement.Rendered() || !r.client.Payment.PaymentStatementsKeepable(tenant.IsFilter) ||
		!r.client.Payment.PaymentStatementCurrent(statement) {
		return &keptStatement{}
	}
	kept := &keptStatement{statement: statement, idAt: -1, merchantAt: -1}
	for i, arg := range statement.Args() {
		switch {
		case arg == idStandIn && kept.idAt < 0:
			kept.idAt = i
		case arg == merchantStandIn && kind == merchantScope && kept.merchantAt < 0:
			kept.merchantAt = i
		default:
			return &keptStatement{}
		}
	}
	if kept.idAt < 0 || (kind == merchantScope) != (kept.merchantAt >= 0) {
		return &keptStatement{}
	}
	return kept
}
