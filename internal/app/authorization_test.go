package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// TestEveryOperationIsAuthorised walks the table of operations: each one that needs a scope is
// sent along every entry path (REST route, GraphQL field, node, nodes, aliases, fragments) by
// every kind of principal: none, a token of each role, and an API key holding each one scope.
// Exactly those holding the scope succeed; the others are refused 401 or 403, before their
// request is read. An operation added to the table without an entry here fails it.
func TestEveryOperationIsAuthorised(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	m := newMatrix(t, env)
	admin, paymentID, entries := m.admin, m.paymentID, m.entries

	// The principals: a token of each role, and a key of each scope (made by an admin, who holds
	// them all). The admin is the platform's staff, and so are its keys; a merchant's admin holds
	// the admin's scopes but no platform operation.
	type principal struct {
		name, credential string
		scopes           []string
		platform         bool
	}
	var principals []principal
	for _, role := range []string{"admin", "operator", "developer", "viewer"} {
		principals = append(principals, principal{role, env.tokenFor(role), env.scopesOf(role), role == "admin"})
	}
	for _, scope := range env.scopesOf("admin") {
		key := env.apiKey(admin, scope)
		principals = append(principals, principal{"key with " + scope, key, []string{scope}, true})
	}
	unrelated := principals[len(principals)-1].credential // a key with apikeys:manage alone

	// GraphQL, too, refuses before it reads the arguments: bad input from someone who may not ask
	// is no 400.
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = paymentID
	}
	for _, who := range []struct{ credential, code string }{{"", "unauthenticated"}, {unrelated, "forbidden"}} {
		_, errs := env.graphql(who.credential, `mutation { createPayment(input: {amount: true, currency: "USD", paymentMethod: CREDIT_CARD, customer: {email: "a@example.com"}}) { id } }`, nil)
		if len(errs) != 1 || errs[0].code() != who.code {
			t.Errorf("createPayment with bad input, credential %q = %+v, want %s", who.credential, errs, who.code)
		}
		_, errs = env.graphql(who.credential, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": tooMany})
		if len(errs) != 1 || errs[0].code() != who.code {
			t.Errorf("nodes of 101 ids, credential %q = %+v, want %s", who.credential, errs, who.code)
		}
	}
	everyone := append([]principal{{name: "no credentials"}}, principals...)
	for _, op := range auth.Operations {
		if op.Scope == "" {
			continue // open to anyone (login, refresh), or to any principal for its own session
		}
		if entries[op.Name] == nil {
			t.Errorf("operation %s has no entry path in this test", op.Name)
			continue
		}
		allowedBy := 0
		for _, who := range everyone {
			code, status := "", 0
			switch {
			case who.credential == "":
				code, status = "unauthenticated", http.StatusUnauthorized
			case !slices.Contains(who.scopes, op.Scope), op.Platform && !who.platform:
				code, status = "forbidden", http.StatusForbidden
			default:
				allowedBy++
			}
			// Refused for the scope, the refusal names it; refused as no platform staff, it says so.
			refusal := op.Scope
			if slices.Contains(who.scopes, op.Scope) {
				refusal = "platform"
			}
			for _, e := range entries[op.Name](who.credential) {
				if e.path != "" {
					r := env.request(e.method, e.path, who.credential, e.body)
					got, _ := r.errorCode()
					if code == "" && (r.status < 200 || r.status > 299) || code != "" && (r.status != status || got != code) {
						t.Errorf("%s %s, %s = %d %.200s", e.method, e.path, who.name, r.status, r.raw)
					}
					// Refused before the request is read: a route authorised by the wrong
					// operation would answer its bad input 400 first.
					if code != "" {
						r := env.request(e.method, e.path+"?unknown=1", who.credential, `{"unknown": true}`)
						if got, _ := r.errorCode(); r.status != status || got != code {
							t.Errorf("%s %s with bad input, %s = %d %.200s", e.method, e.path, who.name, r.status, r.raw)
						}
					}
				}
				if e.subscription != "" {
					if got := env.subscriptionAnswer(who.credential, e.subscription, e.variables, e.kind); got != code {
						t.Errorf("%s, %s = %q, want %q", e.subscription, who.name, got, code)
					}
				}
				if e.query == "" {
					continue // no GraphQL twin
				}
				data, errs := env.graphql(who.credential, e.query, e.variables)
				switch {
				case code == "" && len(errs) > 0:
					t.Errorf("%s, %s = %+v", e.query, who.name, errs)
				case code != "" && (len(errs) == 0 || errs[0].code() != code):
					t.Errorf("%s, %s = %v %+v, want %s", e.query, who.name, data, errs, code)
				case code != "" && strings.Contains(errs[0].Message, refusal) != (code == "forbidden"):
					t.Errorf("%s, %s: the refusal %q does not name %s", e.query, who.name, errs[0].Message, refusal)
				}
			}
		}
		if allowedBy < 2 {
			t.Errorf("%s: only %d principals hold %s; the matrix shows nothing", op.Name, allowedBy, op.Scope)
		}
	}
}

// scopesOfCredential returns the scopes the credential authenticates with.
func scopesOfCredential(env *testEnv, credential string) []string {
	p, err := env.app.services.auth.Authenticate(context.Background(), credential, "", nil)
	if err != nil {
		env.t.Errorf("credential %.20s: %v", credential, err)
	}
	return p.Scopes
}

// entry is one entry path to an operation: a REST route, a GraphQL document or a subscription.
type entry struct {
	method, path string
	body         any
	query        string
	variables    map[string]any
	// subscription is a subscription document, sent over Server-Sent Events, whose hub kind
	// is kind.
	subscription, kind string
}

// matrix is the default merchant's objects the operations' entry paths name, and the paths.
type matrix struct {
	// admin is the default merchant's admin, the platform's staff; merchant is another merchant,
	// made by them.
	admin, paymentID, merchant string
	// entries are each operation's entry paths, made afresh for the credential that sends them.
	entries map[string]func(credential string) []entry
}

// newMatrix makes, as the default merchant's users, a payment, a refund, an endpoint and its
// delivery, an event, a user, provider events and alerts, and returns every operation's entry
// paths to them: what TestEveryOperationIsAuthorised sends as each principal, and
// TestMerchantsSeeOnlyTheirOwn as another merchant's.
func newMatrix(t *testing.T, env *testEnv) matrix {
	admin := env.tokenFor("admin")
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	paymentID := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("50.00", "USD", "4242424242424242")).body, "data", "id"))
	refundID := str(get(env.request(http.MethodPost, "/api/v1/payments/"+paymentID+"/refunds", operator, map[string]any{"amount": "1.00"}).body, "data", "id"))
	if paymentID == "" || refundID == "" {
		t.Fatal("no payment or refund to read")
	}
	received := time.Now().UTC().Add(-time.Hour)
	eventID := env.storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "charge.refunded", status: state.WebhookProcessed, received: received}).ID
	deadEvent := func() string {
		return env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: received}).ID
	}
	target := str(get(env.request(http.MethodPost, "/api/v1/users", admin,
		map[string]any{"email": "target@example.com", "password": "a long enough password", "role": "viewer"}).body, "data", "id"))
	newAlert := func() string {
		a, err := env.db.Ent.Alert.Create().SetRule("test").SetSubject(prefixid.New("subject")).SetSeverity(state.AlertInfo).
			SetMessage("a test alert").SetOpenedAt(time.Now().UTC()).Save(databasetest.AsMerchant())
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	anAlert := newAlert()
	aMerchant := str(get(env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "another"}).body, "data", "id"))
	// A test webhook goes to a merchant's endpoint on this machine, as outside production it may.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()

	// A merchant's webhook endpoint there, a test delivery in its log, and an event of the payment.
	newEndpoint := func() string {
		return str(get(env.request(http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": hook.URL, "events": []string{"*"}}).body, "data", "id"))
	}
	anEndpoint := newEndpoint()
	aDelivery := str(get(env.request(http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"endpoint_id": anEndpoint}).body, "data", "delivery_id"))
	anEvent, err := env.db.Ent.Event.Query().FirstID(databasetest.AsMerchant())
	if err != nil || anEndpoint == "" || aDelivery == "" {
		t.Fatalf("no event (%v), endpoint or delivery to read", err)
	}

	// Each entry path to each operation, made afresh for the principal who sends it, so that a
	// write which succeeds once (a user's email, a configuration version, a dead event, a key of
	// one's own) succeeds for every principal allowed it.
	fixed := func(entries ...entry) func(string) []entry { return func(string) []entry { return entries } }
	refund := map[string]any{"amount": "1.00"}
	authorised := func() string {
		return str(get(env.request(http.MethodPost, "/api/v1/payments", admin, manualBody("5.00", "USD")).body, "data", "id"))
	}
	entries := map[string]func(credential string) []entry{
		auth.CreatePayment.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/payments", body: paymentBody("5.00", "USD", "4242424242424242"),
			query: createPaymentMutation, variables: map[string]any{"in": gqlPaymentInput("5.00", "USD", "4242424242424242")}}),
		auth.ListPayments.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/payments",
			query: `{ payments(first: 1) { totalCount } }`}),
		auth.ListAllPayments.Name: fixed(entry{query: `{ allPayments(first: 1) { edges { node { merchantId } } } }`}),
		auth.GetPayment.Name: fixed(
			entry{method: http.MethodGet, path: "/api/v1/payments/" + paymentID,
				query: `query($id: ID!) { payment(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
			entry{method: http.MethodGet, path: "/api/v1/payments/" + paymentID + "/refunds",
				query: `query($id: ID!) { payment(id: $id) { refunds { id } } }`, variables: map[string]any{"id": paymentID}},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
			entry{query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, variables: map[string]any{"ids": []string{paymentID}}},
			entry{query: `query($id: ID!) { ...N } fragment N on Query { a: node(id: $id) { ... on Payment { amount } } }`, variables: map[string]any{"id": paymentID}},
			entry{query: `query($id: ID!) { x: payment(id: $id) { id } y: payment(id: $id) { ... on Payment { status } } }`, variables: map[string]any{"id": paymentID}},
		),
		auth.RefundPayment.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/payments/" + paymentID + "/refunds", body: refund,
			query: `mutation($id: ID!) { refundPayment(input: {paymentId: $id, amount: "1.00"}) { id } }`, variables: map[string]any{"id": paymentID}}),
		// Each call captures or cancels an authorisation of its own, which it can do once.
		auth.CapturePayment.Name: func(string) []entry {
			overREST, overGraphQL := authorised(), authorised()
			return []entry{{method: http.MethodPost, path: "/api/v1/payments/" + overREST + "/capture"},
				{query: `mutation($id: ID!) { capturePayment(input: {paymentId: $id}) { id } }`, variables: map[string]any{"id": overGraphQL}}}
		},
		auth.CancelPayment.Name: func(string) []entry {
			overREST, overGraphQL := authorised(), authorised()
			return []entry{{method: http.MethodPost, path: "/api/v1/payments/" + overREST + "/cancel"},
				{query: `mutation($id: ID!) { cancelPayment(input: {paymentId: $id}) { id } }`, variables: map[string]any{"id": overGraphQL}}}
		},
		auth.GetRefund.Name: fixed(
			entry{query: `query($id: ID!) { refund(id: $id) { id } }`, variables: map[string]any{"id": refundID}},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": refundID}},
		),
		auth.ProviderStatus.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/monitoring/providers",
			query: `{ providerStatus { provider circuit } }`}),
		auth.SimulateEvent.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/webhooks/simulate", body: map[string]any{"payment_id": paymentID, "type": "dispute"},
			query:     `mutation($id: ID!) { simulateEvent(input: {paymentId: $id, type: "dispute"}) { type } }`,
			variables: map[string]any{"id": paymentID}}),
		auth.ListWebhookEvents.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/webhooks/logs",
			query: `{ webhookEvents(first: 1) { totalCount } }`}),
		auth.GetWebhookEvent.Name: fixed(
			entry{method: http.MethodGet, path: "/api/v1/webhooks/logs/" + eventID,
				query: `query($id: ID!) { webhookEvent(id: $id) { id attemptLog { at } } }`, variables: map[string]any{"id": eventID}},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": eventID}},
			entry{query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, variables: map[string]any{"ids": []string{eventID}}},
		),
		auth.WebhookMetrics.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/webhooks/metrics",
			query: `{ webhookMetrics { provider received } }`}),
		auth.RetryWebhookEvent.Name: func(string) []entry {
			return []entry{{method: http.MethodPost, path: "/api/v1/webhooks/logs/" + deadEvent() + "/retry",
				query: `mutation($id: ID!) { retryWebhookEvent(id: $id) { status } }`, variables: map[string]any{"id": deadEvent()}}}
		},
		auth.CreateUser.Name: func(string) []entry {
			return []entry{{method: http.MethodPost, path: "/api/v1/users",
				body:      map[string]any{"email": prefixid.New("rest") + "@example.com", "password": "a long enough password", "role": "viewer"},
				query:     `mutation($email: String!) { createUser(input: {email: $email, password: "a long enough password", role: "viewer"}) { id } }`,
				variables: map[string]any{"email": prefixid.New("graphql") + "@example.com"}}}
		},
		auth.ListUsers.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/users", query: `{ users { hasMore } }`}),
		auth.UpdateUser.Name: fixed(entry{method: http.MethodPatch, path: "/api/v1/users/" + target, body: map[string]any{"role": "developer"},
			query: `mutation($id: ID!) { updateUser(id: $id, input: {role: "viewer"}) { id } }`, variables: map[string]any{"id": target}}),
		// Every principal allowed resets the target's password twice: each reset ends the target's
		// sessions and leaves the next one possible.
		auth.ResetPassword.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/users/" + target + "/password", body: map[string]any{"new_password": "reset over REST for the matrix"},
			query: `mutation($id: ID!) { resetPassword(id: $id, input: {newPassword: "reset over GraphQL for the matrix"}) { changed } }`, variables: map[string]any{"id": target}}),
		auth.GetConfig.Name: fixed(entry{method: http.MethodGet, path: configPath, query: `{ config { version } }`}),
		// The configuration is changed through REST from the version in force, then through
		// GraphQL from the next.
		auth.UpdateConfig.Name: func(string) []entry {
			config := env.app.services.configs.Current()
			config.Version++
			return []entry{{method: http.MethodPut, path: configPath, body: env.app.services.configs.Current(),
				query: `mutation($in: ConfigInput!) { updateConfig(input: $in) { version } }`, variables: map[string]any{"in": gqlConfigInput(config)}}}
		},
		auth.ConfigHistory.Name: fixed(entry{method: http.MethodGet, path: configPath + "/history", query: `{ configHistory { version } }`}),
		auth.SendTestWebhook.Name: fixed(
			entry{method: http.MethodPost, path: "/api/v1/webhooks/test", body: map[string]any{"url": hook.URL},
				query: sendTestWebhookMutation, variables: map[string]any{"in": map[string]any{"url": hook.URL}}},
			entry{method: http.MethodPost, path: "/api/v1/webhooks/test", body: map[string]any{"endpoint_id": anEndpoint},
				query: sendTestWebhookMutation, variables: map[string]any{"in": map[string]any{"endpointId": anEndpoint}}},
		),
		auth.ListEvents.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/events", query: `{ events(first: 1) { totalCount } }`}),
		auth.GetEvent.Name: fixed(
			entry{method: http.MethodGet, path: "/api/v1/events/" + anEvent,
				query: `query($id: ID!) { event(id: $id) { id data } }`, variables: map[string]any{"id": anEvent}},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": anEvent}},
		),
		auth.CreateWebhookEndpoint.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/webhook-endpoints", body: map[string]any{"url": hook.URL, "events": []string{"*"}},
			query:     `mutation($url: String!) { createWebhookEndpoint(input: {url: $url, events: ["payment.succeeded"]}) { secret endpoint { id } } }`,
			variables: map[string]any{"url": hook.URL}}),
		auth.ListWebhookEndpoints.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/webhook-endpoints", query: `{ webhookEndpoints(first: 1) { totalCount } }`}),
		auth.GetWebhookEndpoint.Name: fixed(
			entry{method: http.MethodGet, path: "/api/v1/webhook-endpoints/" + anEndpoint,
				query: `query($id: ID!) { webhookEndpoint(id: $id) { id url } }`, variables: map[string]any{"id": anEndpoint}},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": anEndpoint}},
		),
		auth.UpdateWebhookEndpoint.Name: fixed(entry{method: http.MethodPatch, path: "/api/v1/webhook-endpoints/" + anEndpoint, body: map[string]any{"description": "rest"},
			query: `mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: {description: "graphql"}) { id } }`, variables: map[string]any{"id": anEndpoint}}),
		// Each principal that may deletes endpoints of its own making; to the others there is none.
		auth.DeleteWebhookEndpoint.Name: func(credential string) []entry {
			own := func() string {
				if credential == "" || !slices.Contains(scopesOfCredential(env, credential), auth.ScopeWebhooksManage) {
					return "we_none"
				}
				return newEndpoint()
			}
			return []entry{{method: http.MethodDelete, path: "/api/v1/webhook-endpoints/" + own(),
				query: `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id } }`, variables: map[string]any{"id": own()}}}
		},
		auth.RotateWebhookEndpointSecret.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/webhook-endpoints/" + anEndpoint + "/rotate-secret",
			query: `mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id) { secret } }`, variables: map[string]any{"id": anEndpoint}}),
		auth.ListWebhookDeliveries.Name: fixed(
			entry{method: http.MethodGet, path: "/api/v1/webhook-endpoints/" + anEndpoint + "/deliveries",
				query: `query($id: ID!) { webhookDeliveries(endpointId: $id, first: 5) { totalCount } }`, variables: map[string]any{"id": anEndpoint}},
			entry{method: http.MethodGet, path: "/api/v1/webhook-endpoints/" + anEndpoint + "/deliveries/" + aDelivery,
				query: `query($id: ID!) { node(id: $id) { ... on WebhookDelivery { status attemptLog { at } } } }`, variables: map[string]any{"id": aDelivery}},
		),
		auth.RetryWebhookDelivery.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/webhook-endpoints/" + anEndpoint + "/deliveries/" + aDelivery + "/retry",
			query:     `mutation($endpoint: ID!, $id: ID!) { retryWebhookDelivery(endpointId: $endpoint, id: $id) { status } }`,
			variables: map[string]any{"endpoint": anEndpoint, "id": aDelivery}}),
		auth.PaymentUpdated.Name: fixed(entry{subscription: `subscription { paymentUpdated { id } }`, kind: live.Payment},
			entry{subscription: `subscription($id: ID!) { x: paymentUpdated(id: $id) { status } }`, kind: live.Payment, variables: map[string]any{"id": paymentID}}),
		auth.AllPaymentsUpdated.Name:    fixed(entry{subscription: `subscription { allPaymentsUpdated { id merchantId } }`, kind: live.Payment}),
		auth.RefundUpdated.Name:         fixed(entry{subscription: `subscription { refundUpdated { id } }`, kind: live.Refund}),
		auth.ProviderStatusChanged.Name: fixed(entry{subscription: `subscription { providerStatusChanged { provider circuit } }`, kind: live.Provider}),
		auth.AlertRaised.Name:           fixed(entry{subscription: `subscription { alertRaised { id } }`, kind: live.Alert}),
		auth.CreateAPIKey.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/api-keys", body: map[string]any{"name": "rest", "scopes": []string{auth.ScopeAPIKeysManage}},
			query: `mutation { createAPIKey(input: {name: "graphql", scopes: ["apikeys:manage"]}) { key apiKey { id } } }`}),
		auth.ScrapeMetrics.Name: fixed(entry{method: http.MethodGet, path: "/metrics"}),
		auth.ListAlerts.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/monitoring/alerts", query: `{ alerts(first: 5) { totalCount } }`},
			entry{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": anAlert}}),
		// Each principal acknowledges and resolves alerts of its own, one over REST, one over GraphQL.
		auth.AcknowledgeAlert.Name: func(string) []entry {
			return []entry{{method: http.MethodPost, path: "/api/v1/monitoring/alerts/" + newAlert() + "/acknowledge",
				query: `mutation($id: ID!) { acknowledgeAlert(id: $id) { status } }`, variables: map[string]any{"id": newAlert()}}}
		},
		auth.ResolveAlert.Name: func(string) []entry {
			return []entry{{method: http.MethodPost, path: "/api/v1/monitoring/alerts/" + newAlert() + "/resolve",
				query: `mutation($id: ID!) { resolveAlert(id: $id) { status } }`, variables: map[string]any{"id": newAlert()}}}
		},
		auth.SystemMetrics.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/monitoring/metrics",
			query: `{ systemMetrics { uptimeS payments { byStatus { status count } } } }`}),
		auth.Overview.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/monitoring/overview",
			query: `{ overview { stepS steps { payments } } }`}),
		auth.CreateMerchant.Name: fixed(entry{method: http.MethodPost, path: "/api/v1/merchants", body: map[string]any{"name": "over REST"},
			query: `mutation { createMerchant(input: {name: "over GraphQL"}) { id } }`}),
		auth.ListMerchants.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/merchants", query: `{ merchants { hasMore merchants { id } } }`}),
		auth.UpdateMerchant.Name: fixed(entry{method: http.MethodPatch, path: "/api/v1/merchants/" + aMerchant, body: map[string]any{"name": "renamed over REST"},
			query: `mutation($id: ID!) { updateMerchant(id: $id, input: {name: "renamed over GraphQL"}) { id } }`, variables: map[string]any{"id": aMerchant}}),
		auth.ListAPIKeys.Name: fixed(entry{method: http.MethodGet, path: "/api/v1/api-keys", query: `{ apiKeys { hasMore keys { id prefix } } }`}),
		// Each principal revokes keys of its own user's: to anyone else they do not exist.
		auth.RevokeAPIKey.Name: func(credential string) []entry {
			own := func() string {
				if credential == "" || !slices.Contains(scopesOfCredential(env, credential), auth.ScopeAPIKeysManage) {
					return "key_none"
				}
				return str(get(env.request(http.MethodPost, "/api/v1/api-keys", credential,
					map[string]any{"name": "to revoke", "scopes": []string{auth.ScopeAPIKeysManage}}).body, "data", "id"))
			}
			return []entry{{method: http.MethodDelete, path: "/api/v1/api-keys/" + own(),
				query: `mutation($id: ID!) { revokeAPIKey(id: $id) { revokedAt } }`, variables: map[string]any{"id": own()}}}
		},
	}

	return matrix{admin: admin, paymentID: paymentID, merchant: aMerchant, entries: entries}
}
