package graph

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/web"
)

// HandlerOptions configure the GraphQL endpoint.
type HandlerOptions struct {
	// Production turns introspection off and leaves "did you mean" hints out of validation errors,
	// which would name fields to someone guessing at the schema.
	Production bool
	Logger     *slog.Logger
	// CORSOrigins are the origins, besides its own, a browser may open a WebSocket from.
	CORSOrigins []string
	// Streams are the server's WebSockets and event streams, which the endpoint keeps.
	Streams *Streams
	// Traced gives each operation a span, when traces are exported.
	Traced bool
}

// Bounds of the streams.
const (
	// maxMessage bounds a message a WebSocket client sends: a subscription's document and
	// variables, within the bounds of any request's.
	maxMessage = 64 << 10
	// keepAlive is how often an idle stream is pinged, so a dead peer is found and proxies keep it.
	keepAlive = 15 * time.Second
)

// maxErrors bounds the errors of one answer: a document within its limits may still hold
// thousands of mistakes, and the first few say what to fix.
const maxErrors = 20

// NewHandler returns the GraphQL endpoint: POST and GET per GraphQL over HTTP, subscriptions over
// WebSockets and Server-Sent Events (kept in opts.Streams), with documents bounded before they are
// validated, parsed documents cached, costs limited, scopes enforced by @hasScope and errors
// rendered from the API error table.
func NewHandler(r *Resolver, opts HandlerOptions) http.Handler {
	cfg := generated.Config{Resolvers: r}
	cfg.Directives.HasScope = func(ctx context.Context, _ any, next graphql.Resolver, scope string) (any, error) {
		if err := auth.RequireScope(ctx, scope); err != nil {
			return nil, err
		}
		return next(ctx)
	}
	listCosts(&cfg.Complexity)
	srv := handler.New(generated.NewExecutableSchema(cfg))
	readLimit := int64(maxMessage)
	srv.AddTransport(transport.Websocket{
		Implementation: sockets{transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{
			OriginPatterns: originPatterns(opts.CORSOrigins),
		}}},
		InitFunc:              r.authenticateConnection,
		InitTimeout:           10 * time.Second,
		KeepAlivePingInterval: keepAlive,
		PayloadReadLimit:      &readLimit,
	})
	srv.AddTransport(overEventStream{keepAlive: keepAlive})
	srv.AddTransport(overHTTP{})
	cache := newDocumentCache(1000)
	srv.SetQueryCache(cache)
	// Without suggestions gqlgen also skips computing them; the presenter removes the hints of
	// the rules this does not reach.
	srv.SetDisableSuggestion(opts.Production)
	srv.Use(documentBounds{limits: defaultDocumentLimits, cache: cache, noIntrospection: opts.Production})
	if !opts.Production {
		srv.Use(extension.Introspection{})
	}
	srv.Use(&costLimit{limit: MaxQueryCost})
	srv.Use(keyedMutations{})
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp != nil && len(resp.Errors) > maxErrors {
			resp.Errors = resp.Errors[:maxErrors]
		}
		return resp
	})
	srv.AroundOperations(subscriptionsOnlyOverWebSockets)
	if opts.Traced {
		srv.AroundOperations(traceOperations)
	}
	srv.AroundOperations(everyMerchantSubscriptions)
	srv.AroundRootFields(authorizeRootFields)
	srv.AroundRootFields(batchEventObjects)
	srv.AroundRootFields(batchPeople(r.AuthService))
	srv.AroundFields(markInternalErrors)
	srv.SetErrorPresenter(presentError(opts.Logger, opts.Production))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		opts.Logger.ErrorContext(ctx, "panic in resolver", "request_id", web.RequestID(ctx), "panic", v)
		// Rendered as it is, by the WebSocket transport too, which presents no error it recovers.
		internal := apierror.From(errors.New("panic"))
		return &gqlerror.Error{Message: internal.Message, Extensions: map[string]any{"code": internal.Code}}
	})
	return opts.Streams.Middleware(srv)
}

// authorizeRootFields authorises each root field by its operation before gqlgen reads the field's
// arguments, so a request without the scope answers 401 or 403, as over REST, never a 400 about
// input it may not send. (@hasScope, and the service, check again.)
func authorizeRootFields(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	root := graphql.GetRootFieldContext(ctx).Field
	op, ok := auth.OperationNamed(root.Name)
	if ok {
		if err := auth.Authorize(ctx, op); err != nil {
			graphql.AddError(ctx, err)
			return graphql.Null
		}
	}
	// A field below the root that needs a scope of its own (Event.object) is checked here too,
	// once: checked only by @hasScope, it would fail on each item of a page, and its non-null
	// type would carry each failure up to the root field.
	if err := nestedScopes(ctx, root.Selections); err != nil {
		graphql.AddError(ctx, err)
		return graphql.Null
	}
	// Every merchant's payments are read across merchants, and so is all below them (a payment's
	// refunds, its history): the operation is platform staff's alone, authorised above.
	if ok && op.EveryMerchant {
		ctx = tenant.System(ctx)
	}
	return next(ctx)
}

// everyMerchantSubscriptions reads a subscription to every merchant's changes, and all below each
// change's object, across merchants, as authorizeRootFields does a query's root field: gqlgen
// runs no root-field middleware for subscriptions, and a subscription has one root field. The
// subscription's resolver authorises it again before it subscribes.
func everyMerchantSubscriptions(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	for _, field := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"}) {
		if op, ok := auth.OperationNamed(field.Name); ok && op.EveryMerchant && auth.Authorize(ctx, op) == nil {
			ctx = tenant.System(ctx)
		}
	}
	return next(ctx)
}

// nestedScopes checks the scope of each field in selections, at any depth, that names one.
func nestedScopes(ctx context.Context, selections ast.SelectionSet) error {
	for _, selection := range selections {
		var err error
		switch s := selection.(type) {
		case *ast.Field:
			if s.Definition != nil {
				if hasScope := s.Definition.Directives.ForName("hasScope"); hasScope != nil {
					if err = auth.RequireScope(ctx, hasScope.Arguments.ForName("scope").Value.Raw); err != nil {
						return err
					}
				}
			}
			err = nestedScopes(ctx, s.SelectionSet)
		case *ast.InlineFragment:
			err = nestedScopes(ctx, s.SelectionSet)
		case *ast.FragmentSpread:
			err = nestedScopes(ctx, s.Definition.SelectionSet)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// internalError is a resolver failure that is not an API error: a bug or an outage, whose
// detail is logged and never shown.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// markInternalErrors tells resolver failures apart from the errors gqlgen raises itself while
// reading arguments (a malformed cursor, a bad Decimal), which are the client's.
func markInternalErrors(ctx context.Context, next graphql.Resolver) (any, error) {
	result, err := next(ctx)
	if err != nil {
		if _, ok := errors.AsType[*apierror.Error](err); !ok {
			err = internalError{err}
		}
	}
	return result, err
}

// presentError renders every error with a code of the API error table in extensions.code,
// except parse and validation errors, which keep gqlgen's GRAPHQL_* codes. In production,
// validation messages lose their "did you mean" hints.
func presentError(logger *slog.Logger, production bool) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if _, generated := gqlErr.Extensions["code"]; generated {
			gqlErr.Message = withoutEchoedValue(gqlErr.Message)
			if production {
				gqlErr.Message = suggestion.ReplaceAllString(gqlErr.Message, "")
			}
			return gqlErr
		}
		apiErr, isAPIError := errors.AsType[*apierror.Error](err)
		_, isInternal := errors.AsType[internalError](err)
		switch {
		case isAPIError:
		case isInternal:
			apiErr = web.APIError(err)
			if web.IsDatabaseUnavailable(apiErr) {
				logger.WarnContext(ctx, "resolver failed: the database is unavailable", "request_id", web.RequestID(ctx), "error", err)
			} else {
				logger.ErrorContext(ctx, "resolver failed", "request_id", web.RequestID(ctx), "error", err)
			}
		default:
			apiErr = apierror.New(apierror.InvalidRequest, gqlErr.Message)
		}
		gqlErr.Message = apiErr.Message
		gqlErr.Extensions = map[string]any{"code": apiErr.Code}
		if apiErr.Param != "" {
			gqlErr.Extensions["param"] = camelCaseParam(apiErr.Param)
		}
		return gqlErr
	}
}

// echoedValues match parse and validation messages that quote a value of the request, which may
// be card data written as a literal (`number: 4242…` where a String is expected); the value is
// cut so that an error never repeats it to a client's logs.
var echoedValues = []struct {
	pattern *regexp.Regexp
	replace string
}{
	{regexp.MustCompile(`(?s)^(.* value): .*$`), "$1."},
	{regexp.MustCompile(`(?s)^(Expected value of type "[^"]*"), found .*$`), "$1."},
	{regexp.MustCompile(`(?s)^(Unexpected \w+) ".*"$`), "$1"},
	{regexp.MustCompile(`(?s)^.* (is not a valid \w+)$`), "the value $1"},
}

// suggestion matches gqlparser's hints at names the schema has ("Did you mean "amount"?").
var suggestion = regexp.MustCompile(`(?s)\s*Did you mean .*\?$`)

func withoutEchoedValue(message string) string {
	for _, echoed := range echoedValues {
		if echoed.pattern.MatchString(message) {
			return echoed.pattern.ReplaceAllString(message, echoed.replace)
		}
	}
	return message
}

// camelCaseParam turns a REST parameter name (card.exp_month) into its GraphQL one (card.expMonth).
func camelCaseParam(param string) string {
	parts := strings.Split(param, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// WriteError answers a request refused before GraphQL runs (a body too large) in GraphQL's error
// shape, with the HTTP status of its code.
func WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	apiErr := web.APIError(err)
	writeRequestError(w, web.Status(apiErr.Code), apiErr.Code, apiErr.Message)
}

func writeRequestError(w http.ResponseWriter, status int, code apierror.Code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": message, "extensions": map[string]any{"code": code}}}})
}
