package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
)

// keyedMutations carries idempotency keys over GraphQL; the services keep and replay outcomes.
// A key is input.idempotencyKey, else the Idempotency-Key header, and one key names one call:
// a request sent with one must hold exactly one root field, an idempotent mutation. With a
// sibling, a retry would run the sibling again (a second login, another refresh) beside a replay,
// so such a request is refused before anything runs, as a request error. A replayed answer says
// so in extensions.idempotentReplayed.
type keyedMutations struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.RootFieldInterceptor
} = keyedMutations{}

func (keyedMutations) ExtensionName() string { return "KeyedMutations" }

func (keyedMutations) Validate(graphql.ExecutableSchema) error { return nil }

func (keyedMutations) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation.Operation != ast.Mutation || oneKeyedField(oc) {
		return nil
	}
	return requestError(apierror.InvalidRequest, "an idempotency key applies to a request holding exactly one idempotent mutation (createPayment, refundPayment) and nothing else")
}

// oneKeyedField reports whether a mutation request is fit for the key it carries: it carries
// none, or holds exactly one root field. Fields are collected as the executor runs them
// (fragments included, __typename aside).
func oneKeyedField(oc *graphql.OperationContext) bool {
	fields, keyed := 0, oc.Headers.Get("Idempotency-Key") != ""
	for _, field := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		if field.Name == "__typename" {
			continue
		}
		fields++
		if op, ok := auth.OperationNamed(field.Name); ok && op.Idempotent {
			input, _ := field.ArgumentMap(oc.Variables)["input"].(map[string]any)
			_, hasKey := input["idempotencyKey"]
			keyed = keyed || hasKey
		}
	}
	return !keyed || fields == 1
}

// InterceptRootField watches an idempotent mutation's call for a replay and says so in the
// answer. It wraps root fields only, so the fields below pay nothing for it.
func (keyedMutations) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	// The executor names the root type in the field context and the field in the root's.
	if fc := graphql.GetFieldContext(ctx); fc == nil || fc.Object != "Mutation" {
		return next(ctx)
	}
	if op, ok := auth.OperationNamed(graphql.GetRootFieldContext(ctx).Field.Name); !ok || !op.Idempotent {
		return next(ctx)
	}
	watched, replayed := idempotency.WatchReplays(ctx)
	result := next(watched)
	if replayed() {
		graphql.RegisterExtension(ctx, "idempotentReplayed", true)
	}
	return result
}

// idempotencyKey is a mutation's key: its input's, else the Idempotency-Key header of a GraphQL
// request (the REST shim passes its header as the input's).
func idempotencyKey(ctx context.Context, inputKey *string) *string {
	if inputKey != nil || !graphql.HasOperationContext(ctx) {
		return inputKey
	}
	if header := graphql.GetOperationContext(ctx).Headers.Get("Idempotency-Key"); header != "" {
		return &header
	}
	return nil
}
