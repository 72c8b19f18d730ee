package auth

import "context"

// Operation is one thing a client asks of Paygate, the same over REST and GraphQL: what the
// principal must hold to ask it, whether an idempotency key applies, and which rate limit it
// counts against. This table is the one
// place that says so; the services authorise every call from it, and each surface reads it to
// refuse early (REST before decoding a body, GraphQL before reading a root field's arguments;
// the schema's @hasScope directives, which a test holds to this table, say the same).
type Operation struct {
	// Name is the operation's GraphQL field; its REST route calls the same resolver.
	Name string
	// Scope is what the principal must hold.
	Scope string
	// Public operations are open to anyone, with or without credentials. Any other operation
	// without a scope is refused to everyone, so one left unset fails closed.
	Public bool
	// Authenticated operations are open to any principal, whatever its scopes: what one does to
	// one's own session.
	Authenticated bool
	// Idempotent operations take an idempotency key: a retry with the key replays the first
	// answer instead of running again.
	Idempotent bool
	// HTTPOnly operations have a route and no GraphQL field: Prometheus's scrape.
	HTTPOnly bool
	// RateClass is the rate-limit bucket the operation's requests draw from, per principal (or
	// per address and account for credentials), so a flood of one kind cannot starve another.
	RateClass RateClass
}

// RateClass is a kind of request that shares one rate limit.
type RateClass string

const (
	// RateCredentials is a password or refresh token checked: throttled hardest, per account and
	// per address, since each attempt is a guess.
	RateCredentials RateClass = "credentials"
	// RateWrite changes something: moves money or changes the runtime configuration.
	RateWrite RateClass = "write"
	// RateRead only reads.
	RateRead RateClass = "read"
)

// RateClasses lists every rate class.
var RateClasses = []RateClass{RateCredentials, RateWrite, RateRead}

var (
	Login         = Operation{Name: "login", Public: true, RateClass: RateCredentials}
	RefreshToken  = Operation{Name: "refreshToken", Public: true, RateClass: RateCredentials}
	Logout        = Operation{Name: "logout", Authenticated: true, RateClass: RateWrite}
	RevokeToken   = Operation{Name: "revokeToken", Authenticated: true, RateClass: RateWrite}
	CreatePayment = Operation{Name: "createPayment", Scope: ScopePaymentsWrite, Idempotent: true, RateClass: RateWrite}
	RefundPayment = Operation{Name: "refundPayment", Scope: ScopeRefundsWrite, Idempotent: true, RateClass: RateWrite}
	GetPayment    = Operation{Name: "payment", Scope: ScopePaymentsRead, RateClass: RateRead}
	ListPayments  = Operation{Name: "payments", Scope: ScopePaymentsRead, RateClass: RateRead}
	GetRefund     = Operation{Name: "refund", Scope: ScopePaymentsRead, RateClass: RateRead}
	// The runtime configuration is read and written by admins alone: reading it shows how
	// payments are routed, which is as much theirs as changing it.
	GetConfig      = Operation{Name: "config", Scope: ScopeConfigWrite, RateClass: RateRead}
	UpdateConfig   = Operation{Name: "updateConfig", Scope: ScopeConfigWrite, RateClass: RateWrite}
	ConfigHistory  = Operation{Name: "configHistory", Scope: ScopeConfigWrite, RateClass: RateRead}
	CreateUser     = Operation{Name: "createUser", Scope: ScopeUsersManage, RateClass: RateWrite}
	ListUsers      = Operation{Name: "users", Scope: ScopeUsersManage, RateClass: RateRead}
	UpdateUser     = Operation{Name: "updateUser", Scope: ScopeUsersManage, RateClass: RateWrite}
	ProviderStatus = Operation{Name: "providerStatus", Scope: ScopeMonitoringRead, RateClass: RateRead}
	SimulateEvent  = Operation{Name: "simulateEvent", Scope: ScopeWebhooksManage, RateClass: RateWrite}
	// Sending a test webhook makes Paygate call a URL of the caller's choosing: only those who
	// manage webhooks may, as they would point Paygate's real webhooks there.
	SendTestWebhook = Operation{Name: "sendTestWebhook", Scope: ScopeWebhooksManage, RateClass: RateWrite}
	// The webhook logs are read by anyone who reads webhooks; requeueing an event makes it be
	// applied to its payment again, which is the managers'.
	ListWebhookEvents = Operation{Name: "webhookEvents", Scope: ScopeWebhooksRead, RateClass: RateRead}
	GetWebhookEvent   = Operation{Name: "webhookEvent", Scope: ScopeWebhooksRead, RateClass: RateRead}
	WebhookMetrics    = Operation{Name: "webhookMetrics", Scope: ScopeWebhooksRead, RateClass: RateRead}
	RetryWebhookEvent = Operation{Name: "retryWebhookEvent", Scope: ScopeWebhooksManage, RateClass: RateWrite}
	// Prometheus scrapes /metrics with a key holding monitoring:read, unless the metrics are public.
	ScrapeMetrics = Operation{Name: "metrics", Scope: ScopeMonitoringRead, HTTPOnly: true, RateClass: RateRead}
	SystemMetrics = Operation{Name: "systemMetrics", Scope: ScopeMonitoringRead, RateClass: RateRead}
	ListAlerts    = Operation{Name: "alerts", Scope: ScopeMonitoringRead, RateClass: RateRead}
	// Acknowledging and resolving an alert are writes no viewer may make: they go with handling
	// the providers and their events, the operators' and admins' work.
	AcknowledgeAlert = Operation{Name: "acknowledgeAlert", Scope: ScopeWebhooksManage, RateClass: RateWrite}
	ResolveAlert     = Operation{Name: "resolveAlert", Scope: ScopeWebhooksManage, RateClass: RateWrite}
	// Everyone who manages API keys manages their own; those who manage users, everyone's.
	CreateAPIKey = Operation{Name: "createAPIKey", Scope: ScopeAPIKeysManage, RateClass: RateWrite}
	ListAPIKeys  = Operation{Name: "apiKeys", Scope: ScopeAPIKeysManage, RateClass: RateRead}
	RevokeAPIKey = Operation{Name: "revokeAPIKey", Scope: ScopeAPIKeysManage, RateClass: RateWrite}
)

// Operations lists every operation.
var Operations = []Operation{Login, RefreshToken, Logout, RevokeToken, CreateUser, ListUsers, UpdateUser, CreatePayment, RefundPayment, GetPayment, ListPayments, GetRefund,
	GetConfig, UpdateConfig, ConfigHistory, ProviderStatus, SimulateEvent, SendTestWebhook,
	ListWebhookEvents, GetWebhookEvent, WebhookMetrics, RetryWebhookEvent, CreateAPIKey, ListAPIKeys, RevokeAPIKey, ScrapeMetrics, SystemMetrics, ListAlerts, AcknowledgeAlert, ResolveAlert}

// OperationNamed returns the operation of a GraphQL root field, if the field is one.
func OperationNamed(name string) (Operation, bool) {
	for _, op := range Operations {
		if op.Name == name {
			return op, true
		}
	}
	return Operation{}, false
}

// Authorize returns nil when the request's principal may ask op, and otherwise the error to
// answer with: 401 without valid credentials, 403 without the scope.
func Authorize(ctx context.Context, op Operation) error {
	switch {
	case op.Public:
		return nil
	case op.Authenticated:
		_, err := principalOf(ctx)
		return err
	}
	return RequireScope(ctx, op.Scope)
}
