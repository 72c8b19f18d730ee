package auth

import (
	"context"

	"github.com/paygate/paygate/internal/apierror"
)

// Operation is one thing a client asks of Paygate, the same over REST and GraphQL: what the
// principal must hold to ask it, and whether an idempotency key applies. This table is the one
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
	// OnePerRequest operations move money, make or check a credential, or make Paygate call a URL
	// of the client's: a GraphQL request asks at most one of them, so aliases cannot charge,
	// guess passwords or call out a hundred times for one rate-limit token (and past the request's
	// time limit, with nobody left to tell).
	OnePerRequest bool
	// Platform operations read or change what is the platform's rather than one merchant's
	// (the configuration, the providers, the alerts, the providers' webhooks, the merchants):
	// only platform staff may ask them, whatever scopes a merchant's user holds.
	Platform bool
	// EveryMerchant operations read every merchant's data at once, and all that lies below it:
	// platform operations, which only platform staff may ask.
	EveryMerchant bool
}

var (
	Login        = Operation{Name: "login", Public: true, OnePerRequest: true}
	RefreshToken = Operation{Name: "refreshToken", Public: true, OnePerRequest: true}
	Logout       = Operation{Name: "logout", Authenticated: true}
	// Any principal may ask who it is and what it may do.
	Viewer      = Operation{Name: "viewer", Authenticated: true}
	RevokeToken = Operation{Name: "revokeToken", Authenticated: true}
	// Any principal may ask to change its own password; the service refuses an API key, which
	// has none.
	ChangePassword = Operation{Name: "changePassword", Authenticated: true, OnePerRequest: true}
	CreatePayment  = Operation{Name: "createPayment", Scope: ScopePaymentsWrite, Idempotent: true, OnePerRequest: true}
	RefundPayment  = Operation{Name: "refundPayment", Scope: ScopeRefundsWrite, Idempotent: true, OnePerRequest: true}
	// Capturing and canceling an authorisation finish the payment its creator started.
	CapturePayment = Operation{Name: "capturePayment", Scope: ScopePaymentsWrite, Idempotent: true, OnePerRequest: true}
	CancelPayment  = Operation{Name: "cancelPayment", Scope: ScopePaymentsWrite, Idempotent: true, OnePerRequest: true}
	GetPayment     = Operation{Name: "payment", Scope: ScopePaymentsRead}
	ListPayments   = Operation{Name: "payments", Scope: ScopePaymentsRead}
	// Platform staff read every merchant's payments in one list, whichever merchant they act for.
	ListAllPayments = Operation{Name: "allPayments", Scope: ScopePaymentsRead, Platform: true, EveryMerchant: true}
	GetRefund       = Operation{Name: "refund", Scope: ScopePaymentsRead}
	// The shopper's browser, back from authenticating a payment at its provider, carries no
	// credential: it learns the payment's status, which its return_url would tell it anyway.
	ShopperReturn = Operation{Name: "shopperReturn", Public: true, HTTPOnly: true}
	// The runtime configuration is read and written by admins alone: reading it shows how
	// payments are routed, which is as much theirs as changing it.
	GetConfig      = Operation{Name: "config", Scope: ScopeConfigWrite, Platform: true}
	UpdateConfig   = Operation{Name: "updateConfig", Scope: ScopeConfigWrite, Platform: true}
	ConfigHistory  = Operation{Name: "configHistory", Scope: ScopeConfigWrite, Platform: true}
	CreateUser     = Operation{Name: "createUser", Scope: ScopeUsersManage, OnePerRequest: true}
	ListUsers      = Operation{Name: "users", Scope: ScopeUsersManage}
	UpdateUser     = Operation{Name: "updateUser", Scope: ScopeUsersManage}
	ResetPassword  = Operation{Name: "resetPassword", Scope: ScopeUsersManage, OnePerRequest: true}
	ProviderStatus = Operation{Name: "providerStatus", Scope: ScopeMonitoringRead, Platform: true}
	SimulateEvent  = Operation{Name: "simulateEvent", Scope: ScopeWebhooksManage, Platform: true}
	// Sending a test webhook makes Paygate call a URL of the caller's choosing: only those who
	// manage webhooks may, as they would point Paygate's real webhooks there.
	SendTestWebhook = Operation{Name: "sendTestWebhook", Scope: ScopeWebhooksManage, OnePerRequest: true}
	// The webhook logs are read by anyone who reads webhooks; requeueing an event makes it be
	// applied to its payment again, which is the managers'.
	ListWebhookEvents = Operation{Name: "webhookEvents", Scope: ScopeWebhooksRead, Platform: true}
	GetWebhookEvent   = Operation{Name: "webhookEvent", Scope: ScopeWebhooksRead, Platform: true}
	WebhookMetrics    = Operation{Name: "webhookMetrics", Scope: ScopeWebhooksRead, Platform: true}
	RetryWebhookEvent = Operation{Name: "retryWebhookEvent", Scope: ScopeWebhooksManage, Platform: true}
	// Merchants' own webhooks: the events Paygate tells of, the endpoints it tells them to and
	// the deliveries it made there are read by anyone who reads webhooks; changing an endpoint,
	// which points Paygate's calls at a URL, and sending a delivery again are the managers'.
	ListEvents                  = Operation{Name: "events", Scope: ScopeWebhooksRead}
	GetEvent                    = Operation{Name: "event", Scope: ScopeWebhooksRead}
	CreateWebhookEndpoint       = Operation{Name: "createWebhookEndpoint", Scope: ScopeWebhooksManage, OnePerRequest: true}
	ListWebhookEndpoints        = Operation{Name: "webhookEndpoints", Scope: ScopeWebhooksRead}
	GetWebhookEndpoint          = Operation{Name: "webhookEndpoint", Scope: ScopeWebhooksRead}
	UpdateWebhookEndpoint       = Operation{Name: "updateWebhookEndpoint", Scope: ScopeWebhooksManage}
	DeleteWebhookEndpoint       = Operation{Name: "deleteWebhookEndpoint", Scope: ScopeWebhooksManage}
	RotateWebhookEndpointSecret = Operation{Name: "rotateWebhookEndpointSecret", Scope: ScopeWebhooksManage, OnePerRequest: true}
	ListWebhookDeliveries       = Operation{Name: "webhookDeliveries", Scope: ScopeWebhooksRead}
	RetryWebhookDelivery        = Operation{Name: "retryWebhookDelivery", Scope: ScopeWebhooksManage}
	// Subscriptions read what the queries of the same objects read.
	PaymentUpdated        = Operation{Name: "paymentUpdated", Scope: ScopePaymentsRead}
	AllPaymentsUpdated    = Operation{Name: "allPaymentsUpdated", Scope: ScopePaymentsRead, Platform: true, EveryMerchant: true}
	RefundUpdated         = Operation{Name: "refundUpdated", Scope: ScopePaymentsRead}
	ProviderStatusChanged = Operation{Name: "providerStatusChanged", Scope: ScopeMonitoringRead, Platform: true}
	AlertRaised           = Operation{Name: "alertRaised", Scope: ScopeMonitoringRead, Platform: true}
	// Prometheus scrapes /metrics with a key holding monitoring:read, unless the metrics are public.
	ScrapeMetrics = Operation{Name: "metrics", Scope: ScopeMonitoringRead, HTTPOnly: true, Platform: true}
	SystemMetrics = Operation{Name: "systemMetrics", Scope: ScopeMonitoringRead, Platform: true}
	Overview      = Operation{Name: "overview", Scope: ScopeMonitoringRead, Platform: true}
	ListAlerts    = Operation{Name: "alerts", Scope: ScopeMonitoringRead, Platform: true}
	// Acknowledging and resolving an alert are writes no viewer may make: they go with handling
	// the providers and their events, the operators' and admins' work.
	AcknowledgeAlert = Operation{Name: "acknowledgeAlert", Scope: ScopeWebhooksManage, Platform: true}
	ResolveAlert     = Operation{Name: "resolveAlert", Scope: ScopeWebhooksManage, Platform: true}
	// Everyone who manages API keys manages their own; those who manage users, everyone's.
	CreateAPIKey = Operation{Name: "createAPIKey", Scope: ScopeAPIKeysManage, OnePerRequest: true}
	ListAPIKeys  = Operation{Name: "apiKeys", Scope: ScopeAPIKeysManage}
	RevokeAPIKey = Operation{Name: "revokeAPIKey", Scope: ScopeAPIKeysManage}
	// Merchants are the platform's to make, list and disable.
	CreateMerchant = Operation{Name: "createMerchant", Scope: ScopeMerchantsManage, Platform: true}
	ListMerchants  = Operation{Name: "merchants", Scope: ScopeMerchantsManage, Platform: true}
	UpdateMerchant = Operation{Name: "updateMerchant", Scope: ScopeMerchantsManage, Platform: true}
)

// Operations lists every operation.
var Operations = []Operation{Login, RefreshToken, Logout, Viewer, RevokeToken, ChangePassword, CreateUser, ListUsers, UpdateUser, ResetPassword, CreatePayment, RefundPayment, CapturePayment, CancelPayment, GetPayment, ListPayments, ListAllPayments, GetRefund, ShopperReturn,
	GetConfig, UpdateConfig, ConfigHistory, ProviderStatus, SimulateEvent, SendTestWebhook,
	ListWebhookEvents, GetWebhookEvent, WebhookMetrics, RetryWebhookEvent,
	ListEvents, GetEvent, CreateWebhookEndpoint, ListWebhookEndpoints, GetWebhookEndpoint, UpdateWebhookEndpoint,
	DeleteWebhookEndpoint, RotateWebhookEndpointSecret, ListWebhookDeliveries, RetryWebhookDelivery,
	PaymentUpdated, AllPaymentsUpdated, RefundUpdated, ProviderStatusChanged, AlertRaised, CreateAPIKey, ListAPIKeys, RevokeAPIKey, ScrapeMetrics, SystemMetrics, Overview, ListAlerts, AcknowledgeAlert, ResolveAlert,
	CreateMerchant, ListMerchants, UpdateMerchant}

// OnePerRequestNames are the operations a request asks at most one of.
func OnePerRequestNames() []string {
	var names []string
	for _, op := range Operations {
		if op.OnePerRequest {
			names = append(names, op.Name)
		}
	}
	return names
}

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
// answer with: 401 without valid credentials, 403 without the scope or, for a platform
// operation, when the principal is not platform staff.
func Authorize(ctx context.Context, op Operation) error {
	switch {
	case op.Public:
		return nil
	case op.Authenticated:
		_, err := principalOf(ctx)
		return err
	}
	if err := RequireScope(ctx, op.Scope); err != nil {
		return err
	}
	if p, _ := PrincipalFrom(ctx); op.Platform && !p.Platform {
		return apierror.New(apierror.Forbidden, "this operation is the platform's: only platform staff may ask it")
	}
	return nil
}
