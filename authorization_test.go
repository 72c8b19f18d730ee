package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/state"
)

// TestEveryOperationIsAuthorised walks the table of operations: each one that needs a scope is
// sent along every entry path (REST route, GraphQL field, node, nodes, fragments) with no token,
// with a token holding no scope, and with a token of a role holding the scope: 401, 403 and
// success. An operation added to the table without an entry here fails it.
func TestEveryOperationIsAuthorised(t *testing.T) {
	env := newTestEnv(t, databasetest.SQLite(t))
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	paymentID := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("50.00", "USD", "4242424242424242")).body, "data", "id"))
	refundID := str(get(env.request(http.MethodPost, "/api/v1/payments/"+paymentID+"/refunds", operator, map[string]any{"amount": "1.00"}).body, "data", "id"))
	if paymentID == "" || refundID == "" {
		t.Fatal("no payment or refund to read")
	}
	// Webhook events to read, and two dead ones to retry: one over REST, one over GraphQL.
	received := time.Now().UTC().Add(-time.Hour)
	eventID := env.storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "charge.refunded", status: state.WebhookProcessed, received: received}).ID
	deadREST := env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: received}).ID
	deadGraphQL := env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: received}).ID
	// A principal with no scope at all: a token of a role that grants none.
	scopeless, err := env.app.services.auth.Tokens().Issue("usr_scopeless", "none", "")
	if err != nil {
		t.Fatal(err)
	}

	// Each entry path to each operation: its REST route where there is one, and a GraphQL document.
	type entry struct {
		method, path string
		body         any
		query        string
		variables    map[string]any
	}
	refund := map[string]any{"amount": "1.00"}
	entries := map[string][]entry{
		auth.CreatePayment.Name: {{method: http.MethodPost, path: "/api/v1/payments", body: paymentBody("5.00", "USD", "4242424242424242"),
			query: createPaymentMutation, variables: map[string]any{"in": gqlPaymentInput("5.00", "USD", "4242424242424242")}}},
		auth.ListPayments.Name: {{method: http.MethodGet, path: "/api/v1/payments",
			query: `{ payments(first: 1) { totalCount } }`}},
		auth.GetPayment.Name: {
			{method: http.MethodGet, path: "/api/v1/payments/" + paymentID,
				query: `query($id: ID!) { payment(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
			{method: http.MethodGet, path: "/api/v1/payments/" + paymentID + "/refunds",
				query: `query($id: ID!) { payment(id: $id) { refunds { id } } }`, variables: map[string]any{"id": paymentID}},
			{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
			{query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, variables: map[string]any{"ids": []string{paymentID}}},
			{query: `query($id: ID!) { ...N } fragment N on Query { a: node(id: $id) { ... on Payment { amount } } }`, variables: map[string]any{"id": paymentID}},
		},
		auth.RefundPayment.Name: {{method: http.MethodPost, path: "/api/v1/payments/" + paymentID + "/refunds", body: refund,
			query: `mutation($id: ID!) { refundPayment(input: {paymentId: $id, amount: "1.00"}) { id } }`, variables: map[string]any{"id": paymentID}}},
		auth.GetRefund.Name: {
			{query: `query($id: ID!) { refund(id: $id) { id } }`, variables: map[string]any{"id": refundID}},
			{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": refundID}},
		},
		auth.ProviderStatus.Name: {{method: http.MethodGet, path: "/api/v1/monitoring/providers",
			query: `{ providerStatus { provider circuit } }`}},
		auth.SimulateEvent.Name: {{method: http.MethodPost, path: "/api/v1/webhooks/simulate", body: map[string]any{"payment_id": paymentID, "type": "dispute"},
			query:     `mutation($id: ID!) { simulateEvent(input: {paymentId: $id, type: "dispute"}) { type } }`,
			variables: map[string]any{"id": paymentID}}},
		auth.ListWebhookEvents.Name: {{method: http.MethodGet, path: "/api/v1/webhooks/logs",
			query: `{ webhookEvents(first: 1) { totalCount } }`}},
		auth.GetWebhookEvent.Name: {
			{method: http.MethodGet, path: "/api/v1/webhooks/logs/" + eventID,
				query: `query($id: ID!) { webhookEvent(id: $id) { id attemptLog { at } } }`, variables: map[string]any{"id": eventID}},
			{query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": eventID}},
			{query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, variables: map[string]any{"ids": []string{eventID}}},
		},
		auth.WebhookMetrics.Name: {{method: http.MethodGet, path: "/api/v1/webhooks/metrics",
			query: `{ webhookMetrics { provider received } }`}},
		auth.RetryWebhookEvent.Name: {{method: http.MethodPost, path: "/api/v1/webhooks/logs/" + deadREST + "/retry",
			query: `mutation($id: ID!) { retryWebhookEvent(id: $id) { status } }`, variables: map[string]any{"id": deadGraphQL}}},
	}
	target := str(get(env.request(http.MethodPost, "/api/v1/users", env.tokenFor("admin"),
		map[string]any{"email": "target@example.com", "password": "a long enough password", "role": "viewer"}).body, "data", "id"))
	entries[auth.CreateUser.Name] = []entry{{method: http.MethodPost, path: "/api/v1/users",
		body:  map[string]any{"email": "rest@example.com", "password": "a long enough password", "role": "viewer"},
		query: `mutation { createUser(input: {email: "graphql@example.com", password: "a long enough password", role: "viewer"}) { id } }`}}
	entries[auth.ListUsers.Name] = []entry{{method: http.MethodGet, path: "/api/v1/users", query: `{ users { hasMore } }`}}
	entries[auth.UpdateUser.Name] = []entry{{method: http.MethodPatch, path: "/api/v1/users/" + target, body: map[string]any{"role": "developer"},
		query: `mutation($id: ID!) { updateUser(id: $id, input: {role: "viewer"}) { id } }`, variables: map[string]any{"id": target}}}
	// The configuration is changed through REST from version 1, then through GraphQL from version 2.
	config := routing.Default(configProviders)
	entries[auth.GetConfig.Name] = []entry{{method: http.MethodGet, path: configPath, query: `{ config { version } }`}}
	config.Version = 2
	entries[auth.UpdateConfig.Name] = []entry{{method: http.MethodPut, path: configPath, body: routing.Default(configProviders),
		query: `mutation($in: ConfigInput!) { updateConfig(input: $in) { version } }`, variables: map[string]any{"in": gqlConfigInput(config)}}}
	entries[auth.ConfigHistory.Name] = []entry{{method: http.MethodGet, path: configPath + "/history", query: `{ configHistory { version } }`}}
	// A test webhook goes to a merchant's endpoint on this machine, as outside production it may.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	entries[auth.SendTestWebhook.Name] = []entry{{method: http.MethodPost, path: "/api/v1/webhooks/test", body: map[string]any{"url": hook.URL},
		query: sendTestWebhookMutation, variables: map[string]any{"in": map[string]any{"url": hook.URL}}}}
	roles := map[string]string{auth.ScopePaymentsRead: "viewer", auth.ScopePaymentsWrite: "developer", auth.ScopeRefundsWrite: "operator",
		auth.ScopeConfigWrite: "admin", auth.ScopeMonitoringRead: "operator", auth.ScopeWebhooksManage: "operator", auth.ScopeUsersManage: "admin",
		auth.ScopeWebhooksRead: "viewer"}
	// GraphQL, too, refuses before it reads the arguments: bad input from someone who may not ask
	// is no 400.
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = paymentID
	}
	for _, who := range []struct{ token, code string }{{"", "unauthenticated"}, {scopeless, "forbidden"}} {
		_, errs := env.graphql(who.token, `mutation { createPayment(input: {amount: true, currency: "USD", paymentMethod: CREDIT_CARD, customer: {email: "a@example.com"}}) { id } }`, nil)
		if len(errs) != 1 || errs[0].code() != who.code {
			t.Errorf("createPayment with bad input, token %q = %+v, want %s", who.token, errs, who.code)
		}
		_, errs = env.graphql(who.token, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": tooMany})
		if len(errs) != 1 || errs[0].code() != who.code {
			t.Errorf("nodes of 101 ids, token %q = %+v, want %s", who.token, errs, who.code)
		}
	}
	for _, op := range auth.Operations {
		if op.Scope == "" {
			continue // open to anyone: login, refresh
		}
		if len(entries[op.Name]) == 0 {
			t.Errorf("operation %s has no entry path in this test", op.Name)
			continue
		}
		role := roles[op.Scope]
		if !slices.Contains(auth.ScopesOf(role), op.Scope) {
			t.Fatalf("%s: role %q does not grant %s", op.Name, role, op.Scope)
		}
		allowed := env.tokenFor(role)
		for _, e := range entries[op.Name] {
			for _, tc := range []struct {
				who, token, code string
				status           int
			}{
				{"no token", "", "unauthenticated", http.StatusUnauthorized},
				{"no scope", scopeless, "forbidden", http.StatusForbidden},
				{role, allowed, "", 0},
			} {
				if e.path != "" {
					r := env.request(e.method, e.path, tc.token, e.body)
					code, _ := r.errorCode()
					if tc.code == "" && (r.status < 200 || r.status > 299) || tc.code != "" && (r.status != tc.status || code != tc.code) {
						t.Errorf("%s %s, %s = %d %.200s", e.method, e.path, tc.who, r.status, r.raw)
					}
					// Refused before the request is read: a route authorised by the wrong
					// operation would answer its bad input 400 first.
					if tc.code != "" {
						r := env.request(e.method, e.path+"?unknown=1", tc.token, `{"unknown": true}`)
						if code, _ := r.errorCode(); r.status != tc.status || code != tc.code {
							t.Errorf("%s %s with bad input, %s = %d %.200s", e.method, e.path, tc.who, r.status, r.raw)
						}
					}
				}
				data, errs := env.graphql(tc.token, e.query, e.variables)
				switch {
				case tc.code == "" && len(errs) > 0:
					t.Errorf("%s, %s = %+v", e.query, tc.who, errs)
				case tc.code != "" && (len(errs) == 0 || errs[0].code() != tc.code):
					t.Errorf("%s, %s = %v %+v, want %s", e.query, tc.who, data, errs, tc.code)
				}
			}
		}
	}
}
