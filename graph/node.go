package graph

import (
	"context"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/prefixid"
)

// nodeTypes maps an ID prefix to the table holding it and the scope that reads it.
var nodeTypes = map[string]struct{ table, scope string }{
	"pay": {payment.Table, auth.ScopePaymentsRead},
	"re":  {refund.Table, auth.ScopePaymentsRead},
}

// node resolves any ID to its object, or nil when no object has it.
func (r *Resolver) node(ctx context.Context, id string) (ent.Noder, error) {
	nodeType, ok := nodeTypes[prefixid.Prefix(id)]
	if !ok {
		return nil, nil
	}
	if err := auth.RequireScope(ctx, nodeType.scope); err != nil {
		return nil, err
	}
	node, err := r.Ent.Noder(ctx, id, ent.WithNodeType(func(context.Context, string) (string, error) {
		return nodeType.table, nil
	}))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return node, err
}
