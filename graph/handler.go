package graph

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/web"
)

// HandlerOptions configure the GraphQL endpoint.
type HandlerOptions struct {
	Introspection bool
	Logger        *slog.Logger
}

// NewHandler returns the GraphQL endpoint: POST and GET per GraphQL over HTTP, with parsed
// documents cached, scopes enforced by @hasScope and errors rendered from the API error table.
func NewHandler(r *Resolver, opts HandlerOptions) *handler.Server {
	cfg := generated.Config{Resolvers: r}
	cfg.Directives.HasScope = func(ctx context.Context, _ any, next graphql.Resolver, scope string) (any, error) {
		if err := auth.RequireScope(ctx, scope); err != nil {
			return nil, err
		}
		return next(ctx)
	}
	srv := handler.New(generated.NewExecutableSchema(cfg))
	srv.AddTransport(queriesOnlyGET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.FixedComplexityLimit(1000))
	srv.Use(decimalLiterals{})
	srv.SetErrorPresenter(presentError(opts.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		opts.Logger.ErrorContext(ctx, "panic in resolver", "request_id", web.RequestID(ctx), "panic", v)
		return errors.New("panic")
	})
	return srv
}

// presentError renders an error with the code of the API error table in extensions.code.
// Errors gqlgen raised itself (parsing, validation) keep their own code.
func presentError(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if _, ok := errors.AsType[*apierror.Error](err); !ok {
			if _, generated := gqlErr.Extensions["code"]; generated {
				return gqlErr
			}
			// The POST transport quotes the whole body in this message; it may hold a card number.
			if strings.HasPrefix(gqlErr.Message, "json request body could not be decoded") {
				gqlErr.Message = "the request body is not valid JSON"
				gqlErr.Extensions = map[string]any{"code": apierror.InvalidRequest}
				return gqlErr
			}
			if gqlErr.Path == nil && gqlErr.Rule != "" {
				return gqlErr
			}
			if unmarshalErr := inputError(err); unmarshalErr != nil {
				gqlErr.Extensions = map[string]any{"code": apierror.InvalidRequest}
				return gqlErr
			}
			logger.ErrorContext(ctx, "resolver failed", "request_id", web.RequestID(ctx), "error", err)
		}
		apiErr := apierror.From(err)
		gqlErr.Message = apiErr.Message
		gqlErr.Extensions = map[string]any{"code": apiErr.Code}
		if apiErr.Param != "" {
			gqlErr.Extensions["param"] = camelCaseParam(apiErr.Param)
		}
		return gqlErr
	}
}

// inputError finds an argument that failed to decode (a bad Decimal, an unknown enum value).
func inputError(err error) error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err != nil {
		return inputError(gqlErr.Err)
	}
	if strings.Contains(err.Error(), "must be") || strings.Contains(err.Error(), "is not a") {
		return err
	}
	return nil
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

// queriesOnlyGET is gqlgen's GET transport answering a mutation with 405 Method Not Allowed, as
// GraphQL over HTTP requires, where gqlgen answers 406.
type queriesOnlyGET struct{ transport.GET }

func (t queriesOnlyGET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.GET.Do(methodNotAllowedFor406{ResponseWriter: w}, r, exec)
}

type methodNotAllowedFor406 struct{ http.ResponseWriter }

func (w methodNotAllowedFor406) WriteHeader(status int) {
	if status == http.StatusNotAcceptable {
		w.Header().Set("Allow", http.MethodPost)
		status = http.StatusMethodNotAllowed
	}
	w.ResponseWriter.WriteHeader(status)
}
