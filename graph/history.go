package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

type wholePaymentKey struct{}

// WithStatusHistory returns ctx for reading a payment whole, its status history included, as the
// REST shim answers GET /api/v1/payments/{id}: the Payment resolver then reads the history in the
// payment's own statement.
func WithStatusHistory(ctx context.Context) context.Context {
	return context.WithValue(ctx, wholePaymentKey{}, true)
}

// wantsStatusHistory says whether the payment being resolved is read with its status history, so
// that it comes in the payment's own statement: when the query selects statusHistory, or the
// caller asked for it (WithStatusHistory).
func wantsStatusHistory(ctx context.Context) bool {
	if ctx.Value(wholePaymentKey{}) != nil {
		return true
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return false
	}
	for _, field := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, []string{"Payment", "Node"}) {
		if field.Name == "statusHistory" {
			return true
		}
	}
	return false
}
