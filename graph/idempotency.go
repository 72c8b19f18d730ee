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

// idempotentMutations applies idempotency keys to GraphQL: a request holding one money mutation
// (createPayment, refundPayment), with input.idempotencyKey or else the Idempotency-Key header,
// gets its first response stored and replayed (extensions.idempotentReplayed), in the same key
// space as REST. Other mutations (login, refreshToken) are never stored: their answers are secrets.
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

// moneyMutations are the mutations idempotency keys apply to.
var moneyMutations = map[string]bool{"createPayment": true, "refundPayment": true}

// idempotencyKey finds the key of a request: input.idempotencyKey of its money mutation, else the
// header. Fields are collected as the executor will run them (fragments included). A key that
// cannot be applied to exactly one money mutation is refused rather than ignored, since ignoring
// it would let a retry charge again.
func idempotencyKey(oc *graphql.OperationContext) (string, error) {
	header := oc.Headers.Get("Idempotency-Key")
	var money []*ast.Field
	keyed := header != ""
	for _, collected := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Mutation"}) {
		if !moneyMutations[collected.Name] {
			continue
		}
		money = append(money, collected.Field)
		input, _ := collected.ArgumentMap(oc.Variables)["input"].(map[string]any)
		if _, ok := input["idempotencyKey"]; ok {
			keyed = true
		}
	}
	switch {
	case !keyed || len(money) == 0:
		return "", nil
	case len(money) > 1:
		return "", apierror.New(apierror.InvalidRequest, "an idempotency key applies to a request holding exactly one createPayment or refundPayment")
	}
	input, _ := money[0].ArgumentMap(oc.Variables)["input"].(map[string]any)
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
