// Package graph is the GraphQL layer: thin resolvers over the domain services in internal/.
package graph

import (
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/live"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/settings/settingsstore"
)

//go:generate sh -c "cd .. && go run github.com/99designs/gqlgen generate"
// The TypeScript client is generated from the schema and the document as the server serves them.
//go:generate sh -c "cd .. && go run . schema graphql > clients/typescript/schema.graphql.new && mv clients/typescript/schema.graphql.new clients/typescript/schema.graphql"
//go:generate sh -c "cd .. && go run . schema openapi > clients/typescript/openapi.json.new && mv clients/typescript/openapi.json.new clients/typescript/openapi.json"

// Resolver holds the services every resolver calls; internal/app builds it once.
type Resolver struct {
	AuthService    *auth.Service
	PaymentService *payment.Service
	// Configs holds the runtime configuration.
	Configs *settingsstore.Store
	// Simulator makes the providers' sandboxes send events.
	Simulator *inbound.Simulator
	// TestWebhooks sends merchants' endpoints signed test events.
	TestWebhooks *outbound.TestSender
	// Events reads the events merchants are told of; Endpoints keeps the webhook endpoints they
	// are delivered to, and serves the deliveries.
	Events    *outbound.Events
	Endpoints *outbound.Endpoints
	// WebhookLogs reads, requeues and sums up the stored webhook events.
	WebhookLogs *inbound.Logs
	// Alerts lists, acknowledges and resolves the alerts.
	Alerts *alerting.Alerts
	// System gives the monitoring figures.
	System *metrics.System
	// Ent resolves node(id:) lookups, which span every type.
	Ent *ent.Client
	// Hub hands the subscriptions what changes.
	Hub *live.Hub
	// Now is the time, by which a subscription ends when its credential expires.
	Now func() time.Time

	subscribers subscribers
}
