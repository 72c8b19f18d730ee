package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// traceOperations gives each GraphQL operation a span within its request's, named and described
// by the operation's type and name as OpenTelemetry's GraphQL conventions say, and never by its
// document or variables, whose values may be a card's number. What the operation does (the
// database, the providers) is traced within it. A subscription's span lasts as long as it does.
//
// It is written here rather than taken from otelgqlgen, gqlgen's OpenTelemetry tracer, which
// records the document and the variables and names neither attribute as the conventions do.
func traceOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	kind := string(oc.Operation.Operation)
	name := kind
	attributes := []attribute.KeyValue{attribute.String("graphql.operation.type", kind)}
	if oc.Operation.Name != "" {
		name += " " + oc.Operation.Name
		attributes = append(attributes, attribute.String("graphql.operation.name", oc.Operation.Name))
	}
	ctx, span := otel.Tracer("github.com/paygate/paygate/graph").Start(ctx, name, trace.WithAttributes(attributes...))
	var once sync.Once
	end := func() { once.Do(func() { span.End() }) }
	// A transport that stops reading (an HTTP answer takes a deferred query's first part) ends
	// the span with the request.
	context.AfterFunc(ctx, end)
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		response := responses(ctx)
		if response != nil && len(response.Errors) > 0 {
			span.SetStatus(codes.Error, response.Errors[0].Message)
		}
		// A query or a mutation ends with its last part; a subscription when it ends (nil).
		if response == nil || oc.Operation.Operation != ast.Subscription && (response.HasNext == nil || !*response.HasNext) {
			end()
		}
		return response
	}
}
