// Package app builds Paygate from its configuration over an open database: the domain services,
// the HTTP handler with every route, and the background loops. The server, the tests and the
// benchmarks all build it here, so they run what production runs.
package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/live"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/background"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/playground"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/ratelimit"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/settings/settingsstore"
	"github.com/paygate/paygate/internal/tracing"
	"github.com/paygate/paygate/internal/web"
)

// OpenDatabase opens the configured database and brings its schema up to date.
func OpenDatabase(ctx context.Context, cfg config.Config) (*database.DB, error) {
	db, err := database.Open(cfg.DatabaseURL, database.Options{MaxConns: cfg.DBMaxConns, Traced: tracing.Enabled()})
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
	// providers are the providers' adapters, sandboxes and webhook sources.
	providers providers
	configs   *settingsstore.Store
	// inbox takes the providers' webhooks; webhookWorker processes what it stored.
	inbox         *inbound.Inbox
	webhookWorker *inbound.Worker
	// testWebhooks sends merchants' endpoints signed test events.
	testWebhooks *outbound.TestSender
	// events are what merchants are told of; deliveries take them to the webhook endpoints, which
	// endpoints keeps.
	events     *outbound.Events
	deliveries *outbound.Deliveries
	endpoints  *outbound.Endpoints
	// hub hands the subscriptions what changed, which feed finds and announcer tells every
	// server of.
	hub       *live.Hub
	feed      *live.Feed
	announcer *live.Announcer
	// webhookLogs serves the stored events to people.
	webhookLogs *inbound.Logs
	// metrics count what this server does.
	metrics *metrics.Metrics
	// alerts raises alerts from the rules, and keeps them.
	alerts *alerting.Alerts
}

func newServices(cfg config.Config, db *database.DB, logger *slog.Logger, now clock.Clock) (services, error) {
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
	tokens, err := auth.NewTokens(secrets.JWT, now)
	if err != nil {
		return services{}, err
	}
	ownKey, err := signingKey(cfg)
	if err != nil {
		return services{}, err
	}
	tokens.Keys = auth.NewPublishedKeys(db.Ent, ownKey, now)
	// Announced before this server issues a token, so the others know its key when they see one.
	if err := errors.Join(tokens.Keys.Announce(context.Background()), tokens.Keys.Load(context.Background())); err != nil {
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
	configs := settingsstore.New(db.Ent, providerNames(), defaultSettings(), now)
	if err := configs.Load(context.Background()); err != nil {
		return services{}, err
	}
	providers, err := newProviders(cfg, db, logger, now)
	if err != nil {
		return services{}, err
	}
	router := routing.NewRouter(providers.clients, configs.Current, now)
	counters := metrics.New(db.SQL, router, now)
	router.Observe = counters.ProviderCall
	payments := payment.NewService(db, keys, router, secrets.CardFingerprintKey, maxAmount, now)
	payments.Answered = counters.PaymentAnswered
	payments.Logger = logger
	payments.CaptureWindow = func() time.Duration { return configs.Current().Capture.Window() }
	public := cfg.PublicAddress()
	payments.ReturnAddress = func(id, secret string) string {
		return public + "/api/v1/payments/" + url.PathEscape(id) + "/return?" + payment.ReturnQuery(secret)
	}
	// In production a delivery goes to public addresses only, checked as each is dialled.
	deliveries := outbound.NewDeliveries(outbound.Deliveries{Client: db.Ent, Sender: outbound.NewSender(cfg.Production(), outbound.DeliveryTimeout),
		Now: now, Logger: logger, Observe: counters.WebhookDelivery})
	counters.CountDeliveryQueue(func() (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return deliveries.Pending(ctx)
	})
	hub := live.NewHub(now)
	feed := live.NewFeed(live.Feed{Client: db.Ent, Hub: hub, Now: now, Providers: counters.ProviderStatus})
	announcer := live.NewAnnouncer(func(ctx context.Context) error {
		if db.Dialect == dialect.Postgres {
			return db.Notify(ctx, changesChannel) // every server's listener wakes its feed
		}
		feed.Wake()
		return nil
	})
	payments.Events = &event.Recorder{Written: func() {
		deliveries.Wake()
		announcer.Changed()
	}}
	worker := inbound.NewWorker(inbound.Worker{
		Client:  db.Ent,
		Readers: readers(),
		Prepare: payments.PrepareNotification,
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
		providers:   providers,
		configs:     configs,
		inbox: &inbound.Inbox{Client: db.Ent, Sources: providers.sources, Now: now, Logger: logger,
			SignatureRefused: signatureFailures.Add, Stored: worker.Wake, Observe: counters.WebhookEvent},
		webhookWorker: worker,
		testWebhooks: &outbound.TestSender{Deliveries: deliveries, Sample: func(eventType string, at time.Time) any {
			return payment.SampleObject(eventType, Providers[0].Name, at)
		}},
		events:      &outbound.Events{Client: db.Ent, Now: now},
		deliveries:  deliveries,
		endpoints:   &outbound.Endpoints{Client: db.Ent, Dialect: db.Dialect, Production: cfg.Production(), Now: now, Queued: deliveries.Wake},
		hub:         hub,
		feed:        feed,
		announcer:   announcer,
		webhookLogs: &inbound.Logs{Client: db.Ent, Providers: providerNames(), Now: now, SignatureFailures: signatureFailures, Requeued: worker.Wake},
		metrics:     counters,
		alerts: &alerting.Alerts{Client: db.Ent, Providers: router, Settings: func() settings.AlertThresholds { return configs.Current().Alerts },
			Now: now, Logger: logger},
	}, nil
}

// App is Paygate built from its configuration over an open database: the services and the HTTP
// handler over them.
type App struct {
	services services
	db       *database.DB
	handler  http.Handler
	logger   *slog.Logger
	// production warns at start of every provider left on its built-in sandbox.
	production bool
	// streams are the WebSockets and event streams open on the server, aborted as it stops.
	streams *graph.Streams
	// fixedRateLimits, when set, stand in for the runtime configuration's: the tests' own.
	fixedRateLimits atomic.Pointer[settings.RateLimits]
}

// rateLimits are the request budgets in force: the runtime configuration's.
func (a *App) rateLimits() settings.RateLimits {
	if fixed := a.fixedRateLimits.Load(); fixed != nil {
		return *fixed
	}
	return a.services.configs.Current().RateLimits
}

// New builds Paygate, timed by now; the sandboxes in use send their webhooks to it until ctx ends.
func New(ctx context.Context, cfg config.Config, db *database.DB, logger *slog.Logger, now clock.Clock) (*App, error) {
	svc, err := newServices(cfg, db, logger, now)
	if err != nil {
		return nil, err
	}
	latestMigration, err := db.LatestMigration()
	if err != nil {
		return nil, err
	}
	// The GraphQL resolver over the services, which the REST shim calls too.
	resolver := &graph.Resolver{AuthService: svc.auth, PaymentService: svc.payments, Configs: svc.configs, Ent: db.Ent,
		Simulator:    &inbound.Simulator{Client: db.Ent, Providers: providerNames(), Simulations: simulations(), Sandboxes: svc.providers.sandboxes},
		TestWebhooks: svc.testWebhooks, Events: svc.events, Endpoints: svc.endpoints, Hub: svc.hub, Now: now,
		WebhookLogs: svc.webhookLogs, Alerts: svc.alerts, System: &metrics.System{Client: db.Ent, DB: db.SQL, Dialect: db.Dialect, Counters: svc.metrics, Now: now}}
	paygate := &App{services: svc, db: db, logger: logger}
	limiter, err := newLimiter(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	trusted, _ := cfg.TrustedProxyPrefixes() // checked by config.Load
	svc.auth.Cost = cfg.PasswordCost
	// Passwords are hashed in turn by the client address the rate limits count.
	svc.auth.Client = func(ctx context.Context) (string, func(time.Duration) error) {
		if meter := web.MeterFrom(ctx); meter != nil {
			return meter.Addr, meter.Refuse
		}
		return "", nil
	}
	// A login try spends a token of three buckets, before its password is hashed: the account's
	// from the address (login_per_minute), the address's over every account (so a new email per
	// try buys no new bucket), and the account's over every address (so many addresses guess no
	// faster). The last two hold loginsAcrossBuckets times as much.
	svc.auth.Throttle = func(ctx context.Context, account string) error {
		meter := web.MeterFrom(ctx)
		if meter == nil {
			return nil // not over HTTP
		}
		perMinute := paygate.rateLimits().LoginPerMinute
		// The account as a hash: an email of a megabyte makes a key of 64 characters.
		sum := sha256.Sum256([]byte(account))
		hashed := hex.EncodeToString(sum[:16])
		one := ratelimit.Limit{PerSecond: float64(perMinute) / 60, Burst: perMinute}
		wide := ratelimit.Limit{PerSecond: one.PerSecond * loginsAcrossBuckets, Burst: one.Burst * loginsAcrossBuckets}
		buckets := []struct {
			key   string
			limit ratelimit.Limit
		}{{"login:" + hashed + "|" + meter.Addr, one}, {"login-address:" + meter.Addr, wide}, {"login-account:" + hashed, wide}}
		for _, b := range buckets {
			if err := meter.Check(ctx, b.key, b.limit); err != nil {
				return err
			}
		}
		return nil
	}
	rateLimiting := web.RateLimiting{Limiter: limiter, ClientAddr: web.ClientAddr(trusted), Now: now,
		Limit: func() ratelimit.Limit {
			l := paygate.rateLimits()
			return ratelimit.Limit{PerSecond: float64(l.PerSecond), Burst: l.Burst}
		}}
	paygate.streams = graph.NewStreams(rateLimiting.AddressOf)
	var graphiql *playground.Handler
	if !cfg.Production() {
		if graphiql, err = playground.New(); err != nil {
			return nil, err
		}
	}
	handler, err := NewServer(ServerDeps{
		Logger:          logger,
		DB:              db,
		LatestMigration: latestMigration,
		Resolver:        resolver,
		Authenticate:    svc.auth.Authenticate,
		SigningKeys:     svc.auth.Tokens().Keys,
		Inbox:           svc.inbox,
		Production:      cfg.Production(),
		CORSOrigins:     cfg.CORSOrigins,
		Metrics:         svc.metrics,
		MetricsPublic:   cfg.MetricsPublic,
		Playground:      graphiql,
		SandboxPages:    svc.providers.serveSandboxPages,
		RateLimiting:    rateLimiting,
		Streams:         paygate.streams,
	})
	if err != nil {
		return nil, err
	}
	paygate.handler = handler
	if err := svc.providers.sendWebhooks(ctx, handler, logger, now); err != nil {
		return nil, err
	}
	paygate.production = cfg.Production()
	return paygate, nil
}

// signingKey reads the key access tokens are signed with; nil when they are signed with the
// shared secret.
func signingKey(cfg config.Config) (*auth.SigningKey, error) {
	if cfg.JWTPrivateKeyFile == "" {
		return nil, nil
	}
	key, err := auth.ReadSigningKey(cfg.JWTPrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_JWT_PRIVATE_KEY_FILE: %w", err)
	}
	return key, nil
}

// CheckSigningKey says, without touching anything, what is wrong with the signing key file.
func CheckSigningKey(cfg config.Config) error {
	_, err := signingKey(cfg)
	return err
}

// Handler is Paygate's HTTP handler: every route, behind every middleware.
func (a *App) Handler() http.Handler { return a.handler }

// AbortStreams aborts the subscriptions' WebSockets and event streams, as the server stops: the
// WebSockets are closed with 1001 (going away), the event streams' connections cut, and none is
// told its subscriptions are complete, so their clients subscribe again to another server. The
// HTTP server calls it as it shuts down: it waits for no stream to end.
func (a *App) AbortStreams() { a.streams.Abort() }

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

// Start runs Paygate's background work until ctx ends, which cuts the rounds under way short,
// or until the group it returns is stopped in order: Stop lets the rounds under way finish, and
// RunAtStop then writes the API keys' last uses once more. Every server runs all of it: each job
// is safe to run on several servers at once (conditional updates, unique columns, deletes that
// may find nothing left to delete).
func (a *App) Start(ctx context.Context) *background.Group {
	svc := a.services
	if a.production {
		for name := range svc.providers.sandboxes {
			a.logger.Warn("a provider is served by its built-in sandbox, as PAYGATE_PRODUCTION_ALLOWS allows: no real money moves through it", "provider", name)
		}
	}
	loops := []background.Loop{
		{Name: "processing webhook events", Every: time.Second, AtStart: true, Wake: svc.webhookWorker.Woken(), Run: svc.webhookWorker.ProcessDueAll},
		// Every payment committed wakes it: under load, a round per tenth of a second fans out the
		// events of many at once, in a few statements, instead of a round of its own for each.
		{Name: "delivering events to webhook endpoints", Every: time.Second, AtStart: true, Wake: svc.deliveries.Woken(), Run: svc.deliveries.Round,
			Wait: svc.deliveries.Wait, Spacing: 100 * time.Millisecond},
		// What changes reaches the subscribers of every server: announced by the one that made it,
		// read by each from the database.
		{Name: "telling every server of changes", Every: time.Hour, Wake: svc.announcer.Pending(), Run: svc.announcer.Round},
		{Name: "telling subscribers what changed", Every: 500 * time.Millisecond, Wake: svc.feed.Woken(), Run: svc.feed.Round},
		{Name: "telling subscribers of the providers' status", Every: 2 * time.Second, Run: svc.feed.ProviderRound},
		{Name: "reconciling with the providers", Every: time.Minute, Run: a.reconcile},
		{Name: "canceling authorisations not captured in time and authentications abandoned", Every: time.Minute, Run: a.expire},
		// A reversal is recorded owed in the transaction that found the approval, which wakes this
		// loop on its server; at start, it takes up what a server that stopped left owed.
		{Name: "undoing late approvals of canceled payments", Every: 15 * time.Second, AtStart: true, Wake: svc.payments.ReversalsWoken(),
			Run: a.reverse},
		{Name: "purging what is kept only for a time", Every: 10 * time.Minute, AtStart: true, Run: a.purge},
		// A configuration change made through any server is in force on this one within a
		// second, and so are a revocation, a change to a user and another server's signing key.
		{Name: "reading the runtime configuration", Every: time.Second, Run: svc.configs.Refresh},
		{Name: "reading revocations, users and signing keys", Every: time.Second, Run: func(ctx context.Context) error {
			keys := svc.auth.Tokens().Keys
			return errors.Join(svc.auth.Tokens().Revocations.Load(ctx), svc.auth.Directory().Load(ctx), keys.Announce(ctx), keys.Load(ctx))
		}},
		// The uses are kept in memory between rounds: the last ones are written at stop.
		{Name: "recording API key use", Every: time.Second, AtStop: true, Run: svc.auth.APIKeyKeeper().RecordUse},
		// A circuit is each server's own, and a condition found by two servers at once is raised once.
		{Name: "evaluating the alert rules", Every: alertEvery, Run: func(ctx context.Context) error {
			_, err := svc.alerts.Evaluate(ctx)
			return err
		}},
	}
	for name, sandbox := range svc.providers.sandboxes {
		settler, settles := sandbox.(provider.Settler)
		if !settles {
			continue
		}
		loops = append(loops, background.Loop{Name: "settling the " + name + " sandbox's refunds", Every: time.Second, Run: func(ctx context.Context) error {
			_, err := settler.Settle(ctx)
			return err
		}})
	}
	if err := a.db.Listen(ctx, changesChannel, svc.feed.Wake, a.logger); err != nil {
		// The feed still reads every second: changes reach subscribers, a little later.
		a.logger.Warn("listening for changes made on other servers", "error", err)
	}
	return background.Start(ctx, a.logger, loops...)
}

// loginsAcrossBuckets is how many times one account's tries from one address an address may try
// over every account, and an account over every address: with the default 5 a minute, 20 a
// minute, far below the passwords a server hashes, and above an office's morning logins.
const loginsAcrossBuckets = 4

// changesChannel is the PostgreSQL channel the servers announce their changes on.
const changesChannel = "paygate_changes"

// alertEvery is how often the alert rules are evaluated: well within a circuit's shortest open
// time, so an opening is seen.
const alertEvery = 10 * time.Second

// reconcileWindow is when an outcome in doubt is asked about, and when a provider's "not found"
// is final.
var reconcileWindow = payment.Window{InDoubtAfter: 5 * time.Minute, NotFoundAfter: 24 * time.Hour}

// reconcile settles the payments and refunds whose outcome has been unknown for long enough, by
// asking their providers; each settlement is conditional on the state it read.
func (a *App) reconcile(ctx context.Context) error {
	done, err := a.services.payments.Reconcile(ctx, reconcileWindow)
	if done.Left > 0 {
		// Each settled one is logged on its own, in its trace; what is left is the backlog.
		a.logger.InfoContext(ctx, "reconciliation left payments and refunds for a later round", "left", done.Left)
	}
	return err
}

// reverse voids or refunds at their providers the approvals that came after their payments were
// canceled while they waited for the shopper.
func (a *App) reverse(ctx context.Context) error {
	_, err := a.services.payments.ReverseLateApprovals(ctx)
	return err
}

// expire cancels the authorisations whose capture_before has passed, and the payments left
// waiting for their shopper to authenticate.
func (a *App) expire(ctx context.Context) error {
	_, err := a.services.payments.ExpireAuthorizations(ctx)
	return err
}

// purge deletes what is kept only for a time: expired idempotency keys, webhook events past their
// retention, revocations past their end, events told to merchants and their deliveries after 30 days.
func (a *App) purge(ctx context.Context) (err error) {
	ctx, span := tracing.StartWork(ctx, "purge what is kept for a time", nil, trace.SpanKindInternal)
	defer func() { tracing.End(span, err) }()
	keys, keysErr := a.services.idempotency.Purge(ctx)
	if keys > 0 {
		a.logger.InfoContext(ctx, "purged expired idempotency keys", "count", keys)
	}
	events, eventsErr := a.services.inbox.Forget(ctx)
	if events > 0 {
		a.logger.InfoContext(ctx, "purged old webhook events", "count", events)
	}
	_, revocationsErr := a.services.auth.Tokens().Revocations.Purge(ctx)
	merchantEvents, merchantEventsErr := a.services.events.Purge(ctx)
	deliveries, deliveriesErr := a.services.deliveries.Purge(ctx)
	if merchantEvents+deliveries > 0 {
		a.logger.InfoContext(ctx, "purged old events and webhook deliveries", "events", merchantEvents, "deliveries", deliveries)
	}
	return errors.Join(keysErr, eventsErr, revocationsErr, merchantEventsErr, deliveriesErr)
}

// EnsureFirstAdmin creates the first admin of an empty database.
func (a *App) EnsureFirstAdmin(ctx context.Context, cfg config.Config) error {
	authService, logger := a.services.auth, a.logger
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
		logger.Warn("created the first admin with a generated password; change it: log in, then "+
			"POST /api/v1/auth/password {current_password, new_password} (GraphQL changePassword), "+
			"or run paygate user set-password --email "+admin.Email+" --password -",
			"email", admin.Email, "password", generatedPassword)
	default:
		logger.Info("created the first admin", "email", admin.Email)
	}
	return nil
}
