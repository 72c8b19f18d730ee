package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/rs/cors"

	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/graph/rest"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/web"
	"github.com/paygate/paygate/internal/webhook"
)

// maxBodyBytes is the largest request body accepted.
const maxBodyBytes = 1 << 20

// ServerDeps is everything the HTTP handler needs.
type ServerDeps struct {
	Logger          *slog.Logger
	DB              *database.DB
	LatestMigration uint
	Resolver        *graph.Resolver
	// Authenticate says who a request's credential (access token or API key) is.
	Authenticate func(ctx context.Context, credential string) (auth.Principal, error)
	// Inbox takes the providers' webhooks.
	Inbox       *webhook.Inbox
	Production  bool
	CORSOrigins []string
	// Metrics are served at /metrics, to holders of monitoring:read unless MetricsPublic.
	Metrics       *metrics.Metrics
	MetricsPublic bool
	// RateLimiting spends the API requests' tokens.
	RateLimiting web.RateLimiting
}

// NewServer returns Paygate's HTTP handler: every route, behind every middleware.
func NewServer(deps ServerDeps) http.Handler {
	mux := http.NewServeMux()
	api := rest.New(deps.Resolver)
	mux.Handle("POST /api/v1/auth/login", api.Operation(auth.Login, api.Login))
	mux.Handle("POST /api/v1/auth/refresh", api.Operation(auth.RefreshToken, api.Refresh))
	mux.Handle("POST /api/v1/auth/logout", api.Operation(auth.Logout, api.Logout))
	mux.Handle("POST /api/v1/auth/revoke", api.Operation(auth.RevokeToken, api.RevokeToken))
	mux.Handle("POST /api/v1/users", api.Operation(auth.CreateUser, api.CreateUser))
	mux.Handle("GET /api/v1/users", api.Operation(auth.ListUsers, api.ListUsers))
	mux.Handle("PATCH /api/v1/users/{id}", api.Operation(auth.UpdateUser, api.UpdateUser))
	mux.Handle("POST /api/v1/api-keys", api.Operation(auth.CreateAPIKey, api.CreateAPIKey))
	mux.Handle("GET /api/v1/api-keys", api.Operation(auth.ListAPIKeys, api.ListAPIKeys))
	mux.Handle("DELETE /api/v1/api-keys/{id}", api.Operation(auth.RevokeAPIKey, api.RevokeAPIKey))
	mux.Handle("POST /api/v1/payments", api.Operation(auth.CreatePayment, api.CreatePayment))
	mux.Handle("GET /api/v1/payments", api.Operation(auth.ListPayments, api.ListPayments))
	mux.Handle("GET /api/v1/payments/{id}", api.Operation(auth.GetPayment, api.GetPayment))
	mux.Handle("POST /api/v1/payments/{id}/refunds", api.Operation(auth.RefundPayment, api.RefundPayment))
	mux.Handle("GET /api/v1/payments/{id}/refunds", api.Operation(auth.GetPayment, api.ListRefunds))
	mux.Handle("GET /api/v1/monitoring/metrics", api.Operation(auth.SystemMetrics, api.SystemMetrics))
	mux.Handle("GET /api/v1/monitoring/alerts", api.Operation(auth.ListAlerts, api.ListAlerts))
	mux.Handle("POST /api/v1/monitoring/alerts/{id}/acknowledge", api.Operation(auth.AcknowledgeAlert, api.AcknowledgeAlert))
	mux.Handle("POST /api/v1/monitoring/alerts/{id}/resolve", api.Operation(auth.ResolveAlert, api.ResolveAlert))
	mux.Handle("GET /api/v1/monitoring/providers", api.Operation(auth.ProviderStatus, api.ProviderStatus))
	mux.Handle("GET /api/v1/admin/config", api.Operation(auth.GetConfig, api.GetConfig))
	mux.Handle("PUT /api/v1/admin/config", api.Operation(auth.UpdateConfig, api.UpdateConfig))
	mux.Handle("GET /api/v1/admin/config/history", api.Operation(auth.ConfigHistory, api.ConfigHistory))
	mux.Handle("POST /api/v1/webhooks/simulate", api.Operation(auth.SimulateEvent, api.SimulateEvent))
	mux.Handle("POST /api/v1/webhooks/test", api.Operation(auth.SendTestWebhook, api.SendTestWebhook))
	mux.Handle("GET /api/v1/webhooks/logs", api.Operation(auth.ListWebhookEvents, api.ListWebhookEvents))
	mux.Handle("GET /api/v1/webhooks/logs/{id}", api.Operation(auth.GetWebhookEvent, api.GetWebhookEvent))
	mux.Handle("POST /api/v1/webhooks/logs/{id}/retry", api.Operation(auth.RetryWebhookEvent, api.RetryWebhookEvent))
	mux.Handle("GET /api/v1/webhooks/metrics", api.Operation(auth.WebhookMetrics, api.WebhookMetrics))
	mux.Handle("POST /webhooks/{provider}", receiveWebhook(deps.Inbox))
	if deps.MetricsPublic {
		mux.Handle("GET /metrics", deps.Metrics.Handler())
	} else {
		mux.Handle("GET /metrics", api.Operation(auth.ScrapeMetrics, deps.Metrics.Handler().ServeHTTP))
	}
	mux.Handle("/metrics", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/auth/login", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/auth/refresh", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/auth/logout", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/auth/revoke", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/users", rest.Allow(http.MethodGet, http.MethodPost))
	mux.Handle("/api/v1/users/{id}", rest.Allow(http.MethodPatch))
	mux.Handle("/api/v1/api-keys", rest.Allow(http.MethodGet, http.MethodPost))
	mux.Handle("/api/v1/api-keys/{id}", rest.Allow(http.MethodDelete))
	mux.Handle("/api/v1/payments", rest.Allow(http.MethodGet, http.MethodPost))
	mux.Handle("/api/v1/payments/{id}", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/payments/{id}/refunds", rest.Allow(http.MethodGet, http.MethodPost))
	mux.Handle("/api/v1/monitoring/providers", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/monitoring/metrics", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/monitoring/alerts", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/monitoring/alerts/{id}/acknowledge", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/monitoring/alerts/{id}/resolve", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/admin/config", rest.Allow(http.MethodGet, http.MethodPut))
	mux.Handle("/api/v1/admin/config/history", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/webhooks/simulate", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/webhooks/test", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/webhooks/logs", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/webhooks/logs/{id}", rest.Allow(http.MethodGet))
	mux.Handle("/api/v1/webhooks/logs/{id}/retry", rest.Allow(http.MethodPost))
	mux.Handle("/api/v1/webhooks/metrics", rest.Allow(http.MethodGet))
	mux.Handle("/webhooks/{provider}", rest.Allow(http.MethodPost))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := deps.DB.Ready(ctx, deps.LatestMigration); err != nil {
			// The cause names hosts and users: it goes to the log, not to whoever asks.
			deps.Logger.WarnContext(ctx, "not ready", "error", err)
			writeStatus(w, http.StatusServiceUnavailable, "unavailable")
			return
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	if !deps.Production {
		mux.Handle("GET /{$}", playground.Handler("Paygate", "/query"))
	}
	mux.HandleFunc("/", rest.NotFound)

	surfaces := http.NewServeMux()
	// Each surface answers an oversized body and a spent rate limit in its own error shape.
	restError := func(w http.ResponseWriter, r *http.Request, err error) { web.WriteError(w, r, err, nil) }
	surfaces.Handle("/query", web.Chain(graph.NewHandler(deps.Resolver, graph.HandlerOptions{
		Production: deps.Production,
		Logger:     deps.Logger,
	}), deps.RateLimiting.Middleware(graph.WriteError), web.LimitBody(maxBodyBytes, graph.WriteError)))
	surfaces.Handle("/", web.Chain(web.RefuseControlBytes(web.Routed(mux)),
		deps.RateLimiting.Middleware(restError), web.LimitBody(maxBodyBytes, restError)))

	// rs/cors allows every origin when given none, so with no origins configured there is no CORS.
	allowOrigins := func(h http.Handler) http.Handler { return h }
	if len(deps.CORSOrigins) > 0 {
		allowOrigins = cors.New(cors.Options{
			AllowedOrigins: deps.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
			AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key", "X-API-Key", "X-Request-Id"},
			ExposedHeaders: []string{"X-Request-Id", "Idempotent-Replayed", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After"},
			MaxAge:         600,
		}).Handler
	}
	return web.Chain(web.Routed(surfaces),
		web.WithRequestID,
		web.WithLogger(deps.Logger),
		web.AccessLog(deps.Logger, deps.Metrics.Request),
		web.Recover(deps.Logger),
		web.SecurityHeaders(deps.Production),
		allowOrigins,
		web.Authenticate(deps.Authenticate),
	)
}

// receiveWebhook is POST /webhooks/{provider}: a provider's delivery, authenticated by its
// signature alone. It answers as soon as the events are stored; the worker processes them after,
// so a provider's delivery never waits on a payment's row.
func receiveWebhook(inbox *webhook.Inbox) http.Handler {
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
