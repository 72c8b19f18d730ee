// Paygate is a payment API: GraphQL first, with a REST shim for the original /api/v1 routes.
//
//	paygate [serve]                                         run the server (default)
//	paygate migrate                                         apply database migrations and exit
//	paygate user create --email E --password P --role R     add a user
//	paygate apikey create --name N --scopes a,b             make an API key for a deployment's programs
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/playground"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/ratelimit"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/settings/settingsstore"
	"github.com/paygate/paygate/internal/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paygate:", err)
		os.Exit(1)
	}
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// openDatabase opens the configured database and brings its schema up to date.
func openDatabase(ctx context.Context, cfg config.Config) (*database.DB, error) {
	db, err := database.Open(cfg.DatabaseURL, database.Options{MaxConns: cfg.DBMaxConns})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// services are the domain services, built once.
type services struct {
	auth        *auth.Service
	payments    *payment.Service
	idempotency *idempotency.Store
	router      *routing.Router
	// sandboxes are the providers served by their built-in sandboxes.
	sandboxes sandboxes
	configs   *settingsstore.Store
	// inbox takes the providers' webhooks; webhookWorker processes what it stored.
	inbox         *inbound.Inbox
	webhookWorker *inbound.Worker
	// testWebhooks sends merchants' endpoints signed test events.
	testWebhooks *outbound.TestSender
	// webhookLogs serves the stored events to people.
	webhookLogs *inbound.Logs
	// metrics count what this server does.
	metrics *metrics.Metrics
	// alerts raises alerts from the rules, and keeps them.
	alerts *alerting.Alerts
}

func newServices(cfg config.Config, db *database.DB, logger *slog.Logger) (services, error) {
	secrets, err := cfg.LoadSecrets()
	if err != nil {
		return services{}, err
	}
	for _, path := range secrets.Generated {
		logger.Warn("generated a development secret; set it in the environment for production", "file", path)
	}
	maxAmount, err := cfg.MaxAmountHundredths()
	if err != nil {
		return services{}, err
	}
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) } // as PostgreSQL keeps it
	tokens, err := auth.NewTokens(secrets.JWT, now)
	if err != nil {
		return services{}, err
	}
	tokens.Revocations = auth.NewRevocations(db.Ent, now)
	if err := tokens.Revocations.Load(context.Background()); err != nil {
		return services{}, err
	}
	users := auth.NewUserDirectory(db.Ent, now)
	if err := users.Load(context.Background()); err != nil {
		return services{}, err
	}
	keys := idempotency.NewStore(db.Ent, secrets.CardFingerprintKey, now)
	configs := settingsstore.New(db.Ent, []string{stripe.Name, adyen.Name, checkout.Name}, now)
	if err := configs.Load(context.Background()); err != nil {
		return services{}, err
	}
	providers, sandboxes := newProviders(cfg, db, now)
	router := routing.NewRouter(providers, configs.Current, now)
	counters := metrics.New(db.SQL, router.Names(), router.CircuitOpen, now)
	router.Observe = counters.ProviderCall
	payments := payment.NewService(db.Ent, keys, router, secrets.CardFingerprintKey, maxAmount, now)
	payments.Answered = counters.PaymentAnswered
	worker := inbound.NewWorker(inbound.Worker{
		Client: db.Ent,
		Readers: map[string]inbound.Reader{
			stripe.Name: stripe.ReadNotification, adyen.Name: adyen.ReadNotification, checkout.Name: checkout.ReadNotification,
		},
		Apply:   payments.ApplyNotification,
		Retry:   func() settings.WebhookRetry { return configs.Current().WebhookRetry },
		Now:     now,
		Logger:  logger,
		Observe: counters.WebhookEvent,
	})
	signatureFailures := &inbound.SignatureFailures{}
	return services{
		auth:        auth.NewService(db.Ent, tokens, auth.NewAPIKeys(db.Ent, secrets.APIKeySecret, cfg.Production(), now), users, now),
		payments:    payments,
		idempotency: keys,
		router:      router,
		sandboxes:   sandboxes,
		configs:     configs,
		inbox: &inbound.Inbox{Client: db.Ent, Secrets: webhookSecrets(cfg, sandboxes, logger), Now: now, Logger: logger,
			SignatureRefused: signatureFailures.Add, Stored: worker.Wake, Observe: counters.WebhookEvent},
		webhookWorker: worker,
		// In production a test webhook goes to public addresses only.
		testWebhooks: &outbound.TestSender{Production: cfg.Production(), Now: now},
		webhookLogs:  &inbound.Logs{Client: db.Ent, Now: now, SignatureFailures: signatureFailures, Requeued: worker.Wake},
		metrics:      counters,
		alerts: &alerting.Alerts{Client: db.Ent, Providers: router, Settings: func() settings.AlertThresholds { return configs.Current().Alerts },
			Now: now, Logger: logger},
	}, nil
}

// app is Paygate built from its configuration over an open database: the services and the HTTP
// handler over them. serve, the tests and the benchmarks all build it here, so they run what
// production runs.
type app struct {
	services services
	handler  http.Handler
	logger   *slog.Logger
	// fixedRateLimits, when set, stand in for the runtime configuration's: the tests' own.
	fixedRateLimits atomic.Pointer[settings.RateLimits]
}

// rateLimits are the request budgets in force: the runtime configuration's.
func (a *app) rateLimits() settings.RateLimits {
	if fixed := a.fixedRateLimits.Load(); fixed != nil {
		return *fixed
	}
	return a.services.configs.Current().RateLimits
}

// newApp builds Paygate; the sandboxes in use send their webhooks to it until ctx ends.
func newApp(ctx context.Context, cfg config.Config, db *database.DB, logger *slog.Logger) (*app, error) {
	svc, err := newServices(cfg, db, logger)
	if err != nil {
		return nil, err
	}
	latestMigration, err := db.LatestMigration()
	if err != nil {
		return nil, err
	}
	// The GraphQL resolver over the services, which the REST shim calls too.
	resolver := &graph.Resolver{AuthService: svc.auth, PaymentService: svc.payments, Router: svc.router, Configs: svc.configs, Ent: db.Ent,
		Simulator: &inbound.Simulator{Client: db.Ent, Sandboxes: svc.sandboxes.simulators()}, TestWebhooks: svc.testWebhooks,
		WebhookLogs: svc.webhookLogs, Alerts: svc.alerts, System: &metrics.System{Client: db.Ent, DB: db.SQL, Counters: svc.metrics, Now: time.Now}}
	paygate := &app{services: svc, logger: logger}
	limiter, err := newLimiter(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	trusted, _ := cfg.TrustedProxyPrefixes() // checked by config.Load
	svc.auth.Throttle = func(ctx context.Context, account string) error {
		meter := ratelimit.MeterFrom(ctx)
		if meter == nil {
			return nil // not over HTTP
		}
		perMinute := paygate.rateLimits().LoginPerMinute
		// The account as a hash: an email of a megabyte makes a key of 64 characters.
		sum := sha256.Sum256([]byte(account))
		key := "login:" + hex.EncodeToString(sum[:16]) + "|" + meter.Addr
		return meter.Check(ctx, key, ratelimit.Limit{PerSecond: float64(perMinute) / 60, Burst: perMinute})
	}
	var graphiql *playground.Handler
	if !cfg.Production() {
		if graphiql, err = playground.New(); err != nil {
			return nil, err
		}
	}
	handler := NewServer(ServerDeps{
		Logger:          logger,
		DB:              db,
		LatestMigration: latestMigration,
		Resolver:        resolver,
		Authenticate:    svc.auth.Authenticate,
		Inbox:           svc.inbox,
		Production:      cfg.Production(),
		CORSOrigins:     cfg.CORSOrigins,
		Metrics:         svc.metrics,
		MetricsPublic:   cfg.MetricsPublic,
		Playground:      graphiql,
		RateLimiting: web.RateLimiting{Limiter: limiter, ClientAddr: web.ClientAddr(trusted), Now: time.Now,
			Limit: func() ratelimit.Limit {
				l := paygate.rateLimits()
				return ratelimit.Limit{PerSecond: float64(l.PerSecond), Burst: l.Burst}
			}},
	})
	paygate.handler = handler
	// A sandbox delivers its webhooks to this server's own /webhooks/{provider}, in process, through
	// everything a provider's delivery goes through.
	toSelf := &http.Client{Transport: provider.InProcess{Handler: handler}}
	for name, sandbox := range svc.sandboxes.webhooks {
		if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: "http://paygate.internal/webhooks/" + name,
			Secret: svc.inbox.Secrets[name], HTTP: toSelf, Logger: logger}); err != nil {
			return nil, err
		}
	}
	return paygate, nil
}

// newLimiter returns the rate limiter: over Redis when REDIS_URL is set (its client closed when
// ctx ends), else per server.
func newLimiter(ctx context.Context, cfg config.Config, logger *slog.Logger) (*ratelimit.Limiter, error) {
	if cfg.RedisURL == "" {
		return ratelimit.NewLimiter(nil, "", logger), nil
	}
	client, err := ratelimit.NewRedis(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	context.AfterFunc(ctx, func() { client.Close() })
	return ratelimit.NewLimiter(client, cfg.RedisKeyPrefix, logger), nil
}

// start runs Paygate's background work until ctx ends: the sandboxes' settlements, the webhook
// worker, reconciliation with the providers, purges, and following configuration changes.
func (a *app) start(ctx context.Context) {
	logger := a.logger
	for _, settler := range a.services.sandboxes.settlers {
		go provider.SettleEvery(ctx, settler, time.Second, logger)
	}
	go a.services.webhookWorker.Run(ctx, time.Second)
	go reconcile(ctx, a.services.payments, time.Minute, payment.Window{InDoubtAfter: 5 * time.Minute, NotFoundAfter: 24 * time.Hour}, logger)
	go purge(ctx, a.services.idempotency, a.services.inbox, a.services.auth.Tokens().Revocations, 10*time.Minute, logger)
	// A configuration change made through any server is in force on this one within a second,
	// and so are a revocation and a change to a user.
	go a.services.configs.Watch(ctx, time.Second, logger)
	go every(ctx, time.Second, func(ctx context.Context) error {
		return errors.Join(a.services.auth.Tokens().Revocations.Load(ctx), a.services.auth.Directory().Load(ctx),
			a.services.auth.APIKeyKeeper().RecordUse(ctx))
	}, func(err error) { logger.Warn("reading revocations and users, or recording API key use", "error", err) })
	// Every server looks for alerts: a circuit is each server's own, and a condition found by two
	// at once is raised once.
	go every(ctx, alertEvery, func(ctx context.Context) error {
		_, err := a.services.alerts.Evaluate(ctx)
		return err
	}, func(err error) { logger.Warn("evaluating the alert rules", "error", err) })
}

// alertEvery is how often the alert rules are evaluated: well within a circuit's shortest open
// time, so an opening is seen.
const alertEvery = 10 * time.Second

// every runs fn every interval until ctx ends, reporting its errors to failed.
func every(ctx context.Context, interval time.Duration, fn func(context.Context) error, failed func(error)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
	}
}

func serve(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	// What can be refused is refused before anything is touched: no database file is made and no
	// migration is run for a start that fails.
	if err := cfg.CheckSecrets(); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", cfg.ListenAddr())
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use by another program (another Paygate?): stop it, or listen elsewhere with PAYGATE_ADDR or PORT", cfg.ListenAddr())
	}
	if err != nil {
		return fmt.Errorf("listening on %s: %w (set PAYGATE_ADDR or PORT)", cfg.ListenAddr(), err)
	}
	defer listener.Close()
	db, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	paygate, err := newApp(ctx, cfg, db, logger)
	if err != nil {
		return err
	}
	if err := ensureFirstAdmin(ctx, cfg, paygate.services.auth, logger); err != nil {
		return err
	}

	server := &http.Server{
		Handler:           paygate.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second, // above the provider call limit of 20 s
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	for name := range paygate.services.sandboxes.switches {
		if cfg.Production() {
			logger.Warn("a provider is served by its built-in sandbox: no real money moves through it", "provider", name)
		}
	}
	paygate.start(ctx)
	logger.Info("paygate listening", "addr", listener.Addr().String(), "env", cfg.Env, "database", db.Dialect)
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight")
	// Longer than the provider call limit, so a charge in flight is seen through and recorded.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// purge deletes, at start and then every interval until ctx ends, what is kept only for a time:
// expired idempotency keys, webhook events past their retention, revocations past their end. Every server may do it;
// deleting what another already deleted is harmless.
func purge(ctx context.Context, keys *idempotency.Store, inbox *inbound.Inbox, revocations *auth.Revocations, every time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if n, err := keys.Purge(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("purging expired idempotency keys failed", "error", err)
		} else if n > 0 {
			logger.Info("purged expired idempotency keys", "count", n)
		}
		if n, err := inbox.Forget(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("purging old webhook events failed", "error", err)
		} else if n > 0 {
			logger.Info("purged old webhook events", "count", n)
		}
		if _, err := revocations.Purge(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("purging ended revocations failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// reconcile settles, every interval until ctx ends, the payments and refunds whose outcome has
// been unknown for long enough, by asking their providers. Every server may run it: each
// settlement is conditional on the state it read.
func reconcile(ctx context.Context, payments *payment.Service, every time.Duration, window payment.Window, logger *slog.Logger) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		done, err := payments.Reconcile(ctx, window)
		if err != nil && ctx.Err() == nil {
			logger.Warn("reconciling with the providers", "error", err, "left", done.Left)
		}
		if done.Payments+done.Refunds > 0 {
			logger.Info("reconciled with the providers", "payments", done.Payments, "refunds", done.Refunds, "left", done.Left)
		}
	}
}

// ensureFirstAdmin creates the first admin of an empty database.
func ensureFirstAdmin(ctx context.Context, cfg config.Config, authService *auth.Service, logger *slog.Logger) error {
	if cfg.AdminEmail == "" && cfg.Production() {
		// Production makes no admin with a password in its log: it says how to make one.
		none, err := authService.NoUsers(ctx)
		if err == nil && none {
			logger.Warn("there are no users yet: create the first admin with " +
				"paygate user create --email you@example.com --password '<12 characters or more>' --role admin, " +
				"or start with PAYGATE_ADMIN_EMAIL and PAYGATE_ADMIN_PASSWORD set")
		}
		return err
	}
	admin, generatedPassword, err := authService.EnsureFirstAdmin(ctx, cfg.AdminEmail, cfg.AdminPassword)
	switch {
	case err != nil:
		return err
	case admin == nil:
		return nil
	case generatedPassword != "":
		// Shown once, so a development run can log in; it is never shown again.
		logger.Warn("created the first admin with a generated password; change it",
			"email", admin.Email, "password", generatedPassword)
	default:
		logger.Info("created the first admin", "email", admin.Email)
	}
	return nil
}
