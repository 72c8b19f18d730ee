package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// wantsStatusHistory says whether the payment being resolved is read with its status history,
// so that it comes in the payment's own statement: when the query selects statusHistory, and
// always for the REST shim, which calls without a selection and answers the whole payment.
func wantsStatusHistory(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return true
	}
	for _, field := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, []string{"Payment", "Node"}) {
		if field.Name == "statusHistory" {
			return true
		}
	}
	return false
}
