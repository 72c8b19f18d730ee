package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/tracing"
	"github.com/paygate/paygate/internal/web"
)

// Providers are the payment providers Paygate knows, in their fallback order: the one list of
// them. Adding a provider is adding its registration here.
var Providers = []provider.Registration{stripe.Registration, adyen.Registration, checkout.Registration}

// providerNames are the names of Providers, in their order.
func providerNames() []string {
	names := make([]string, len(Providers))
	for i, p := range Providers {
		names[i] = p.Name
	}
	return names
}

// defaultSettings is the runtime configuration Paygate starts with: each provider's currencies
// to it, the rest in the order of Providers.
func defaultSettings() settings.Document {
	preferred := map[string][]string{}
	for _, p := range Providers {
		preferred[p.Name] = p.Currencies
	}
	return settings.Default(providerNames(), preferred)
}

// providerRetryWaits are the pauses before resending a provider request whose outcome is in
// doubt, with its idempotency key.
var providerRetryWaits = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}

// providers are the adapters in use, and what Paygate needs of each provider beside them.
type providers struct {
	clients []provider.Provider
	// sandboxes are the built-in sandboxes in use, by provider.
	sandboxes map[string]provider.Sandbox
	// sources verify and acknowledge each provider's webhooks.
	sources map[string]inbound.Source
}

// newProviders builds each registered provider's adapter, speaking to its API at the configured
// base URL, or to its built-in sandbox, served in process over Paygate's database.
func newProviders(cfg config.Config, db *database.DB, logger *slog.Logger, now func() time.Time) (providers, error) {
	built := providers{sandboxes: map[string]provider.Sandbox{}, sources: map[string]inbound.Source{}}
	// Real providers share one pool of kept-alive connections, sized for concurrent payments.
	network := &http.Client{Transport: tracedCalls(&http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConns: 256, MaxIdleConnsPerHost: 64,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true,
	})}
	for _, p := range Providers {
		settings := cfg.Providers[p.Name]
		caller := provider.Caller{HTTP: network, RetryWaits: providerRetryWaits}
		if settings.BaseURL() == "" {
			settings = p.SandboxSettings(settings)
			sandbox := p.NewSandbox(db.Ent, settings, now, SandboxPages(cfg.PublicAddress(), p.Name))
			sandbox.Switches().Latency.Store(int64(cfg.SandboxLatency))
			sandbox.Switches().Outage.Store(slices.Contains(cfg.SandboxOutage, p.Name))
			built.sandboxes[p.Name] = sandbox
			// The sandbox stands in for the API: the adapter reaches it in process, at a base URL
			// that names it.
			settings[provider.BaseURLKey] = "http://" + p.Name + ".sandbox"
			caller.HTTP = &http.Client{Transport: tracedCalls(provider.InProcess{Handler: sandbox})}
		}
		built.clients = append(built.clients, p.NewClient(settings, caller))
		verifier, err := p.NewVerifier(settings, now)
		switch {
		case errors.Is(err, provider.ErrWebhooksNotConfigured):
			logger.Warn("webhooks from this provider are refused until it is configured for them", "provider", p.Name, "reason", err.Error())
		case err != nil:
			return providers{}, err
		}
		built.sources[p.Name] = inbound.Source{Verifier: verifier, Acknowledgement: p.Acknowledgement}
	}
	return built, nil
}

// tracedCalls is transport, making each call to a provider within a traced request a client span
// that hands the provider its traceparent, when traces are exported. A call from the background
// work (reconciliation, expiry) outside any trace is made as it is, rather than as a trace of one
// span whose traceparent would reach the provider.
func tracedCalls(transport http.RoundTripper) http.RoundTripper {
	if !tracing.Enabled() {
		return transport
	}
	return otelhttp.NewTransport(transport, otelhttp.WithFilter(func(r *http.Request) bool {
		return trace.SpanFromContext(r.Context()).IsRecording()
	}))
}

// SandboxPages is where browsers open the pages of provider's built-in sandbox (its 3-D Secure
// challenge) on a Paygate reached at public: Paygate serves them there.
func SandboxPages(public, provider string) string { return public + sandboxPagesPrefix + provider }

const sandboxPagesPrefix = "/sandbox/"

// serveSandboxPages serves, on mux, the shopper's pages of each sandbox in use, and nothing else
// of them: their APIs are reached in process only.
func (ps providers) serveSandboxPages(mux *http.ServeMux) {
	for name, sandbox := range ps.sandboxes {
		prefix := sandboxPagesPrefix + name
		mux.Handle(prefix+"/challenge/{id}", web.Document(http.StripPrefix(prefix, sandbox)))
	}
}

// readers read each provider's events.
func readers() map[string]inbound.Reader {
	read := map[string]inbound.Reader{}
	for _, p := range Providers {
		read[p.Name] = p.ReadNotification
	}
	return read
}

// simulations are the providers' own names for the events their sandboxes can send.
func simulations() map[string]map[string]provider.Simulation {
	named := map[string]map[string]provider.Simulation{}
	for _, p := range Providers {
		named[p.Name] = p.Simulations
	}
	return named
}

// sendWebhooks makes each sandbox in use deliver its webhooks to handler's /webhooks/{provider},
// in process, through everything a provider's delivery goes through, until ctx ends; they are
// signed by Paygate's clock, as the sandboxes keep time by it.
func (ps providers) sendWebhooks(ctx context.Context, handler http.Handler, logger *slog.Logger, now func() time.Time) error {
	toSelf := outbound.NewSenderOver(provider.InProcess{Handler: handler}, 0)
	for name, sandbox := range ps.sandboxes {
		config := outbound.WebhookConfig{URL: "http://paygate.internal/webhooks/" + name, Sender: toSelf, Logger: logger, Now: now}
		if err := sandbox.SendWebhooks(ctx, config); err != nil {
			return err
		}
	}
	return nil
}
