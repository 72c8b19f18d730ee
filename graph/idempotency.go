package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/web"
)

// idempotentMutations applies idempotency keys to GraphQL: a request holding one mutation whose
// operation is idempotent (createPayment, refundPayment), with input.idempotencyKey or else the
// Idempotency-Key header, gets its first response stored and replayed
// (extensions.idempotentReplayed), in the same key space as REST. Other mutations (login, refreshToken) are never stored: their answers are secrets.
// A request refused before the mutation's resolver ran (invalid variables, the complexity limit)
// did nothing, so its key is released for the corrected retry, as REST does for a bad request.
type idempotentMutations struct {
	store  *idempotency.Store
	logger *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
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
	field, key, err := keyedMutation(oc)
	if err != nil {
		return errorResponse(err)
	}
	if key == "" {
		return next(ctx)
	}
	// The operation is authorised here, before a replay could answer a principal without the
	// scope what one holding it stored.
	op, _ := auth.OperationNamed(field.Name)
	if err := auth.Authorize(ctx, op); err != nil {
		return errorResponse(err)
	}
	variables, _ := json.Marshal(oc.Variables)
	fingerprint := m.store.Fingerprint([]byte("graphql"), []byte(oc.RawQuery), []byte(oc.OperationName), variables)
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
	run := &keyedRun{alias: field.Alias}
	resp := next(context.WithValue(ctx, keyedRunKey{}, run))
	if run.started.Load() {
		err = m.finish(ctx, principal.Subject, key, resp, field)
	} else {
		err = m.store.Release(ctx, principal.Subject, key)
	}
	if err != nil {
		m.logger.ErrorContext(ctx, "storing an idempotent response failed", "request_id", web.RequestID(ctx), "error", err)
	}
	return resp
}

// finish stores the response of a request whose mutation ran, for replay.
func (m idempotentMutations) finish(ctx context.Context, principal, key string, resp *graphql.Response, field graphql.CollectedField) error {
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	return m.store.Finish(ctx, principal, key, idempotency.Response{Status: responseStatus(resp, field), Body: body})
}

// keyedRun follows the keyed mutation through execution: whether its resolver started tells a
// request that may have done something (whose answer, even data: null, is kept) from one refused
// before anything ran.
type keyedRun struct {
	alias   string
	started atomic.Bool
}

type keyedRunKey struct{}

// InterceptField marks the keyed mutation's resolver as started. It runs once the field's
// arguments are decoded, before its directives and resolver.
func (idempotentMutations) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if run, ok := ctx.Value(keyedRunKey{}).(*keyedRun); ok {
		if fc := graphql.GetFieldContext(ctx); fc.Object == "Mutation" && fc.Field.Alias == run.alias {
			run.started.Store(true)
		}
	}
	return next(ctx)
}

// keyedMutation finds the idempotent mutation of a request and its key: input.idempotencyKey,
// else the header. Fields are collected as the executor will run them (fragments included). A key
// applies only to a request whose sole field is one idempotent mutation: with siblings, a replay
// would run them again (a second charge) or store their answers (tokens), so such a key is
// refused rather than ignored. A request without one has nothing to keep and runs as is.
func keyedMutation(oc *graphql.OperationContext) (field graphql.CollectedField, key string, err error) {
	header := oc.Headers.Get("Idempotency-Key")
	var fields []graphql.CollectedField
	money, keyed := 0, header != ""
	for _, collected := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		if collected.Name == "__typename" {
			continue
		}
		fields = append(fields, collected)
		if op, ok := auth.OperationNamed(collected.Name); !ok || !op.Idempotent {
			continue
		}
		money++
		input, _ := collected.ArgumentMap(oc.Variables)["input"].(map[string]any)
		switch inputKey, present := input["idempotencyKey"]; {
		case inputKey == "" && present:
			return field, "", apierror.ForParam(apierror.InvalidRequest, "idempotencyKey", "idempotencyKey must not be empty; omit it to send no key")
		case inputKey != nil:
			keyed = true
		}
	}
	if !keyed || money == 0 {
		return field, "", nil
	}
	if len(fields) != 1 {
		return field, "", apierror.New(apierror.InvalidRequest, "an idempotency key applies to a request holding exactly one idempotent mutation (createPayment, refundPayment) and nothing else")
	}
	field = fields[0]
	input, _ := field.ArgumentMap(oc.Variables)["input"].(map[string]any)
	if inputKey, ok := input["idempotencyKey"].(string); ok {
		return field, inputKey, nil
	}
	return field, header, nil
}

// responseStatus is the HTTP status a REST twin would have answered, which decides whether the
// response is kept for replay: 200 unless the mutation's own field failed, else the status of
// its first error's code.
func responseStatus(resp *graphql.Response, field graphql.CollectedField) int {
	for _, gqlErr := range resp.Errors {
		if len(gqlErr.Path) == 0 || gqlErr.Path[0] == ast.PathName(field.Alias) {
			return web.Status(apierror.Code(fmt.Sprint(gqlErr.Extensions["code"])))
		}
	}
	return http.StatusOK
}

func errorResponse(err error) *graphql.Response {
	apiErr := apierror.From(err)
	return &graphql.Response{Errors: gqlerror.List{{
		Message:    apiErr.Message,
		Extensions: map[string]any{"code": apiErr.Code},
	}}}
}
