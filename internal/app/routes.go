package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rs/cors"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/graph/rest"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/ops"
	"github.com/paygate/paygate/internal/playground"
	"github.com/paygate/paygate/internal/tracing"
	"github.com/paygate/paygate/internal/web"
)

// maxBodyBytes is the largest request body accepted.
const maxBodyBytes = 1 << 20

// ServerDeps is everything the HTTP handler needs.
type ServerDeps struct {
	Logger          *slog.Logger
	DB              *database.DB
	LatestMigration uint
	Resolver        *graph.Resolver
	// Authenticate says who a request's credential (access token or API key) is, acting for the
	// merchant its Paygate-Merchant header names ("" for its own), calling pay before a check
	// memory cannot answer.
	Authenticate func(ctx context.Context, credential, merchant string, pay func() error) (auth.Principal, error)
	// Inbox takes the providers' webhooks.
	Inbox       *inbound.Inbox
	Production  bool
	CORSOrigins []string
	// Metrics are served at /metrics, to holders of monitoring:read unless MetricsPublic.
	Metrics       *metrics.Metrics
	MetricsPublic bool
	// RateLimiting spends the API requests' tokens.
	RateLimiting web.RateLimiting
	// Playground, when set (in development), serves GraphiQL at /.
	Playground *playground.Handler
	// SandboxPages serves the built-in sandboxes' pages for shoppers, when set.
	SandboxPages func(mux *http.ServeMux)
	// SigningKeys are the public keys of the access tokens, served at /.well-known/jwks.json.
	SigningKeys *auth.PublishedKeys
	// Streams are the WebSockets and event streams of /query, aborted when the server stops.
	Streams *graph.Streams
}

// apiRoute is one REST route: the operation it performs, which says what the caller must hold,
// and its handler, which calls the resolver the operation's GraphQL twin calls.
type apiRoute struct {
	method, path string
	op           auth.Operation
	handle       func(*rest.Handlers, http.ResponseWriter, *http.Request)
}

// apiRoutes are the REST routes under /api/v1, but for the OpenAPI document that describes them.
var apiRoutes = []apiRoute{
	{http.MethodPost, "/api/v1/auth/login", auth.Login, (*rest.Handlers).Login},
	{http.MethodPost, "/api/v1/auth/refresh", auth.RefreshToken, (*rest.Handlers).Refresh},
	{http.MethodPost, "/api/v1/auth/logout", auth.Logout, (*rest.Handlers).Logout},
	{http.MethodPost, "/api/v1/auth/revoke", auth.RevokeToken, (*rest.Handlers).RevokeToken},
	{http.MethodPost, "/api/v1/auth/password", auth.ChangePassword, (*rest.Handlers).ChangePassword},
	{http.MethodPost, "/api/v1/merchants", auth.CreateMerchant, (*rest.Handlers).CreateMerchant},
	{http.MethodGet, "/api/v1/merchants", auth.ListMerchants, (*rest.Handlers).ListMerchants},
	{http.MethodPatch, "/api/v1/merchants/{id}", auth.UpdateMerchant, (*rest.Handlers).UpdateMerchant},
	{http.MethodPost, "/api/v1/users", auth.CreateUser, (*rest.Handlers).CreateUser},
	{http.MethodGet, "/api/v1/users", auth.ListUsers, (*rest.Handlers).ListUsers},
	{http.MethodPatch, "/api/v1/users/{id}", auth.UpdateUser, (*rest.Handlers).UpdateUser},
	{http.MethodPost, "/api/v1/users/{id}/password", auth.ResetPassword, (*rest.Handlers).ResetPassword},
	{http.MethodPost, "/api/v1/api-keys", auth.CreateAPIKey, (*rest.Handlers).CreateAPIKey},
	{http.MethodGet, "/api/v1/api-keys", auth.ListAPIKeys, (*rest.Handlers).ListAPIKeys},
	{http.MethodDelete, "/api/v1/api-keys/{id}", auth.RevokeAPIKey, (*rest.Handlers).RevokeAPIKey},
	{http.MethodPost, "/api/v1/payments", auth.CreatePayment, (*rest.Handlers).CreatePayment},
	{http.MethodGet, "/api/v1/payments", auth.ListPayments, (*rest.Handlers).ListPayments},
	{http.MethodGet, "/api/v1/payments/{id}", auth.GetPayment, (*rest.Handlers).GetPayment},
	{http.MethodPost, "/api/v1/payments/{id}/refunds", auth.RefundPayment, (*rest.Handlers).RefundPayment},
	{http.MethodPost, "/api/v1/payments/{id}/capture", auth.CapturePayment, (*rest.Handlers).CapturePayment},
	{http.MethodPost, "/api/v1/payments/{id}/cancel", auth.CancelPayment, (*rest.Handlers).CancelPayment},
	{http.MethodGet, "/api/v1/payments/{id}/refunds", auth.GetPayment, (*rest.Handlers).ListRefunds},
	{http.MethodGet, "/api/v1/payments/{id}/return", auth.ShopperReturn, (*rest.Handlers).ShopperReturned},
	{http.MethodGet, "/api/v1/monitoring/metrics", auth.SystemMetrics, (*rest.Handlers).SystemMetrics},
	{http.MethodGet, "/api/v1/monitoring/overview", auth.Overview, (*rest.Handlers).Overview},
	{http.MethodGet, "/api/v1/monitoring/alerts", auth.ListAlerts, (*rest.Handlers).ListAlerts},
	{http.MethodPost, "/api/v1/monitoring/alerts/{id}/acknowledge", auth.AcknowledgeAlert, (*rest.Handlers).AcknowledgeAlert},
	{http.MethodPost, "/api/v1/monitoring/alerts/{id}/resolve", auth.ResolveAlert, (*rest.Handlers).ResolveAlert},
	{http.MethodGet, "/api/v1/monitoring/providers", auth.ProviderStatus, (*rest.Handlers).ProviderStatus},
	{http.MethodGet, "/api/v1/admin/config", auth.GetConfig, (*rest.Handlers).GetConfig},
	{http.MethodPut, "/api/v1/admin/config", auth.UpdateConfig, (*rest.Handlers).UpdateConfig},
	{http.MethodGet, "/api/v1/admin/config/history", auth.ConfigHistory, (*rest.Handlers).ConfigHistory},
	{http.MethodPost, "/api/v1/webhooks/simulate", auth.SimulateEvent, (*rest.Handlers).SimulateEvent},
	{http.MethodPost, "/api/v1/webhooks/test", auth.SendTestWebhook, (*rest.Handlers).SendTestWebhook},
	{http.MethodGet, "/api/v1/webhooks/logs", auth.ListWebhookEvents, (*rest.Handlers).ListWebhookEvents},
	{http.MethodGet, "/api/v1/webhooks/logs/{id}", auth.GetWebhookEvent, (*rest.Handlers).GetWebhookEvent},
	{http.MethodPost, "/api/v1/webhooks/logs/{id}/retry", auth.RetryWebhookEvent, (*rest.Handlers).RetryWebhookEvent},
	{http.MethodGet, "/api/v1/webhooks/metrics", auth.WebhookMetrics, (*rest.Handlers).WebhookMetrics},
	{http.MethodGet, "/api/v1/events", auth.ListEvents, (*rest.Handlers).ListEvents},
	{http.MethodGet, "/api/v1/events/{id}", auth.GetEvent, (*rest.Handlers).GetEvent},
	{http.MethodPost, "/api/v1/webhook-endpoints", auth.CreateWebhookEndpoint, (*rest.Handlers).CreateWebhookEndpoint},
	{http.MethodGet, "/api/v1/webhook-endpoints", auth.ListWebhookEndpoints, (*rest.Handlers).ListWebhookEndpoints},
	{http.MethodGet, "/api/v1/webhook-endpoints/{id}", auth.GetWebhookEndpoint, (*rest.Handlers).GetWebhookEndpoint},
	{http.MethodPatch, "/api/v1/webhook-endpoints/{id}", auth.UpdateWebhookEndpoint, (*rest.Handlers).UpdateWebhookEndpoint},
	{http.MethodDelete, "/api/v1/webhook-endpoints/{id}", auth.DeleteWebhookEndpoint, (*rest.Handlers).DeleteWebhookEndpoint},
	{http.MethodPost, "/api/v1/webhook-endpoints/{id}/rotate-secret", auth.RotateWebhookEndpointSecret, (*rest.Handlers).RotateWebhookEndpointSecret},
	{http.MethodGet, "/api/v1/webhook-endpoints/{id}/deliveries", auth.ListWebhookDeliveries, (*rest.Handlers).ListWebhookDeliveries},
	{http.MethodGet, "/api/v1/webhook-endpoints/{id}/deliveries/{delivery}", auth.ListWebhookDeliveries, (*rest.Handlers).GetWebhookDelivery},
	{http.MethodPost, "/api/v1/webhook-endpoints/{id}/deliveries/{delivery}/retry", auth.RetryWebhookDelivery, (*rest.Handlers).RetryWebhookDelivery},
}

// registerAPIRoutes serves apiRoutes on mux and returns the methods each path takes, so that
// another method on the path is answered 405 with them.
func registerAPIRoutes(mux *http.ServeMux, api *rest.Handlers) map[string][]string {
	methods := map[string][]string{}
	for _, route := range apiRoutes {
		mux.Handle(route.method+" "+route.path, api.Operation(route.op, func(w http.ResponseWriter, r *http.Request) {
			route.handle(api, w, r)
		}))
		methods[route.path] = append(methods[route.path], route.method)
	}
	for _, list := range methods {
		slices.Sort(list)
	}
	return methods
}

// NewServer returns Paygate's HTTP handler: every route, behind every middleware.
func NewServer(deps ServerDeps) (http.Handler, error) {
	mux := http.NewServeMux()
	api := rest.New(deps.Resolver)
	for path, methods := range registerAPIRoutes(mux, api) {
		mux.Handle(path, rest.Allow(methods...))
	}
	mux.HandleFunc("GET /api/v1/openapi.json", rest.OpenAPIDocument(providerNames()))
	mux.Handle("/api/v1/openapi.json", rest.Allow(http.MethodGet))
	mux.Handle("POST /webhooks/{provider}", receiveWebhook(deps.Inbox))
	if deps.MetricsPublic {
		mux.Handle("GET /metrics", deps.Metrics.Handler())
	} else {
		mux.Handle("GET /metrics", api.Operation(auth.ScrapeMetrics, deps.Metrics.Handler().ServeHTTP))
	}
	mux.Handle("/metrics", rest.Allow(http.MethodGet))
	mux.Handle("/webhooks/{provider}", rest.Allow(http.MethodPost))
	// Anyone may verify Paygate's tokens: the keys are public, and served from memory.
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Write(deps.SigningKeys.JWKS())
	})
	mux.Handle("/.well-known/jwks.json", rest.Allow(http.MethodGet))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	ready := &readiness{check: func(ctx context.Context) error { return deps.DB.Ready(ctx, deps.LatestMigration) }, now: deps.RateLimiting.Now}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready.answer(ctx); err != nil {
			// The cause names hosts and users: it goes to the log, not to whoever asks.
			deps.Logger.WarnContext(ctx, "not ready", "error", err)
			writeStatus(w, http.StatusServiceUnavailable, "unavailable")
			return
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	if deps.SandboxPages != nil {
		deps.SandboxPages(mux)
	}
	if deps.Playground != nil {
		mux.Handle("GET /{$}", web.Document(http.HandlerFunc(deps.Playground.Page)))
		mux.Handle("GET "+playground.Prefix, web.Document(http.HandlerFunc(deps.Playground.Asset)))
	}
	// The operations page, in production too: it holds no credential; its reader signs in.
	opsHandler, err := ops.New(rest.NotFound)
	if err != nil {
		return nil, err
	}
	opsPage := web.Document(opsHandler)
	mux.Handle("GET "+ops.Path, opsPage)
	mux.Handle("GET "+ops.Prefix, opsPage)
	mux.Handle(ops.Path, rest.Allow(http.MethodGet))
	mux.Handle(ops.Prefix, rest.Allow(http.MethodGet))
	mux.HandleFunc("/", rest.NotFound)

	// Each surface answers an oversized body and a spent rate limit in its own error shape.
	restError := func(w http.ResponseWriter, r *http.Request, err error) { web.WriteError(w, r, err, nil) }
	graphQL := web.Chain(graph.NewHandler(deps.Resolver, graph.HandlerOptions{
		Production:  deps.Production,
		Logger:      deps.Logger,
		CORSOrigins: deps.CORSOrigins,
		Streams:     deps.Streams,
		Traced:      tracing.Enabled(),
	}), deps.RateLimiting.Middleware(graph.WriteError), web.LimitBody(maxBodyBytes, graph.WriteError))
	restAPI := web.Chain(web.RefuseControlBytes(web.Routed(mux)),
		deps.RateLimiting.Middleware(restError), web.LimitBody(maxBodyBytes, restError))

	// rs/cors allows every origin when given none, so with no origins configured there is no CORS.
	allowOrigins := func(h http.Handler) http.Handler { return h }
	if len(deps.CORSOrigins) > 0 {
		allowOrigins = cors.New(cors.Options{
			AllowedOrigins: deps.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key", "Paygate-Merchant", "X-API-Key", "X-Request-Id"},
			ExposedHeaders: []string{"X-Request-Id", "Idempotent-Replayed", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"},
			MaxAge:         600,
		}).Handler
	}
	// With traces exported, a server span per request, continuing its caller's traceparent; the
	// access log names it by its route.
	traced := func(h http.Handler) http.Handler { return h }
	if tracing.Enabled() {
		traced = otelhttp.NewMiddleware("paygate")
	}
	return web.Chain(web.Fork("/query", graphQL, restAPI),
		traced,
		web.WithRequestID,
		web.WithLogger(deps.Logger),
		web.AccessLog(deps.Logger, deps.Metrics.Request),
		web.Recover(deps.Logger),
		web.SecurityHeaders(deps.Production),
		allowOrigins,
		// The address pays for a credential's check before it is made.
		web.Authenticate(deps.Authenticate, deps.RateLimiting.Gate, func(w http.ResponseWriter, r *http.Request, err error) {
			if r.URL.Path == "/query" {
				graph.WriteError(w, r, err)
				return
			}
			restError(w, r, err)
		}),
	), nil
}

// receiveWebhook is POST /webhooks/{provider}: a provider's delivery, authenticated by its
// signature alone. It answers as soon as the events are stored; the worker processes them after,
// so a provider's delivery never waits on a payment's row.
func receiveWebhook(inbox *inbound.Inbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body) // already read, and bounded, by LimitBody
		if err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		receipt, err := inbox.Receive(r.Context(), r.PathValue("provider"), r.Header, body)
		if err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		if receipt.Answer != "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, receipt.Answer)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"received": true, "stored": receipt.Stored, "duplicates": receipt.Duplicates})
	})
}

func writeStatus(w http.ResponseWriter, status int, state string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"status": state})
}

// readinessFor is how long a readiness check answers the probes that follow it: /readyz is open
// to anyone and unlimited, so a flood of probes costs one database check a second.
const readinessFor = time.Second

// readiness answers probes from the latest check, made at most once per readinessFor; probes
// arriving during a check wait for it rather than start their own.
type readiness struct {
	check func(context.Context) error
	now   func() time.Time

	mu  sync.Mutex
	at  time.Time
	err error
}

func (r *readiness) answer(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.at.IsZero() && now.Sub(r.at) < readinessFor && !now.Before(r.at) {
		return r.err
	}
	err := r.check(ctx)
	if !errors.Is(ctx.Err(), context.Canceled) { // a prober that left learnt nothing of the database
		r.err, r.at = err, now
	}
	return err
}
