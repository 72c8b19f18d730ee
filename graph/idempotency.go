package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/web"
)

// idempotentMutations applies idempotency keys to GraphQL: a request holding one mutation, with
// input.idempotencyKey or else the Idempotency-Key header, gets its first response stored and
// replayed (extensions.idempotentReplayed), in the same key space as REST.
type idempotentMutations struct {
	store  *idempotency.Store
	logger *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = idempotentMutations{}

func (idempotentMutations) ExtensionName() string { return "IdempotentMutations" }

func (idempotentMutations) Validate(graphql.ExecutableSchema) error { return nil }

func (m idempotentMutations) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	principal, authenticated := auth.PrincipalFrom(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation || !authenticated {
		return next(ctx)
	}
	key, err := idempotencyKey(oc)
	if err != nil {
		return errorResponse(err)
	}
	if key == "" {
		return next(ctx)
	}
	variables, _ := json.Marshal(oc.Variables)
	fingerprint := idempotency.Fingerprint([]byte("graphql"), []byte(oc.RawQuery), []byte(oc.OperationName), variables)
	stored, err := m.store.Begin(ctx, principal.Subject, key, fingerprint)
	if err != nil {
		return errorResponse(err)
	}
	if stored != nil {
		var replay graphql.Response
		if err := json.Unmarshal(stored.Body, &replay); err != nil {
			return errorResponse(err)
		}
		if replay.Extensions == nil {
			replay.Extensions = map[string]any{}
		}
		replay.Extensions["idempotentReplayed"] = true
		return &replay
	}
	resp := next(ctx)
	body, err := json.Marshal(resp)
	if err == nil {
		err = m.store.Finish(ctx, principal.Subject, key, idempotency.Response{Status: responseStatus(resp), Body: body})
	}
	if err != nil {
		m.logger.ErrorContext(ctx, "storing an idempotent response failed", "request_id", web.RequestID(ctx), "error", err)
	}
	return resp
}

// idempotencyKey finds the key of a single-mutation request: input.idempotencyKey, else the header.
func idempotencyKey(oc *graphql.OperationContext) (string, error) {
	header := oc.Headers.Get("Idempotency-Key")
	var fields []*ast.Field
	for _, selection := range oc.Operation.SelectionSet {
		if field, ok := selection.(*ast.Field); ok {
			fields = append(fields, field)
		}
	}
	if len(fields) != 1 {
		if header != "" {
			return "", apierror.New(apierror.InvalidRequest, "an Idempotency-Key applies to a request holding exactly one mutation")
		}
		return "", nil
	}
	input, _ := fields[0].ArgumentMap(oc.Variables)["input"].(map[string]any)
	if key, ok := input["idempotencyKey"].(string); ok {
		return key, nil
	}
	return header, nil
}

// responseStatus is the HTTP status a REST twin would have answered, which decides whether the
// response is kept for replay: 200 without errors, else the status of the first error's code.
func responseStatus(resp *graphql.Response) int {
	if len(resp.Errors) == 0 {
		return http.StatusOK
	}
	return apierror.Code(fmt.Sprint(resp.Errors[0].Extensions["code"])).HTTPStatus()
}

func errorResponse(err error) *graphql.Response {
	apiErr := apierror.From(err)
	return &graphql.Response{Errors: gqlerror.List{{
		Message:    apiErr.Message,
		Extensions: map[string]any{"code": apiErr.Code},
	}}}
}
