package main

import (
	"net/http"
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestEveryOperationIsAuthorised sends every operation that needs a scope, on both surfaces,
// with no token, with a token holding no scope, and with a token of a role holding the scope:
// 401, 403 and success. Removing any one check fails it.
func TestEveryOperationIsAuthorised(t *testing.T) {
	env := newTestEnv(t, databasetest.SQLite(t))
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	paymentID := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("50.00", "USD", "4242424242424242")).body, "data", "id"))
	refundID := str(get(env.request(http.MethodPost, "/api/v1/payments/"+paymentID+"/refunds", operator, map[string]any{"amount": "1.00"}).body, "data", "id"))
	if paymentID == "" || refundID == "" {
		t.Fatal("no payment or refund to read")
	}
	// A principal with no scope at all: a token of a role that grants none.
	scopeless, err := env.app.services.auth.Tokens().Issue("usr_scopeless", "none")
	if err != nil {
		t.Fatal(err)
	}

	type operation struct {
		name, scope, role string
		// The REST route, where there is one, and the GraphQL twin.
		method, path string
		body         any
		query        string
		variables    map[string]any
	}
	refund := map[string]any{"amount": "1.00"}
	operations := []operation{
		{name: "create payment", scope: auth.ScopePaymentsWrite, role: "developer", method: http.MethodPost, path: "/api/v1/payments", body: paymentBody("5.00", "USD", "4242424242424242"),
			query: createPaymentMutation, variables: map[string]any{"in": gqlPaymentInput("5.00", "USD", "4242424242424242")}},
		{name: "list payments", scope: auth.ScopePaymentsRead, role: "viewer", method: http.MethodGet, path: "/api/v1/payments",
			query: `{ payments(first: 1) { totalCount } }`},
		{name: "get payment", scope: auth.ScopePaymentsRead, role: "viewer", method: http.MethodGet, path: "/api/v1/payments/" + paymentID,
			query: `query($id: ID!) { payment(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
		{name: "refund payment", scope: auth.ScopeRefundsWrite, role: "operator", method: http.MethodPost, path: "/api/v1/payments/" + paymentID + "/refunds", body: refund,
			query: `mutation($id: ID!) { refundPayment(input: {paymentId: $id, amount: "1.00"}) { id } }`, variables: map[string]any{"id": paymentID}},
		{name: "list refunds", scope: auth.ScopePaymentsRead, role: "viewer", method: http.MethodGet, path: "/api/v1/payments/" + paymentID + "/refunds",
			query: `query($id: ID!) { payment(id: $id) { refunds { id } } }`, variables: map[string]any{"id": paymentID}},
		{name: "get refund", scope: auth.ScopePaymentsRead, role: "viewer",
			query: `query($id: ID!) { refund(id: $id) { id } }`, variables: map[string]any{"id": refundID}},
		{name: "node", scope: auth.ScopePaymentsRead, role: "viewer",
			query: `query($id: ID!) { node(id: $id) { id } }`, variables: map[string]any{"id": paymentID}},
		{name: "nodes", scope: auth.ScopePaymentsRead, role: "viewer",
			query: `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, variables: map[string]any{"ids": []string{paymentID, refundID}}},
		{name: "node through a fragment", scope: auth.ScopePaymentsRead, role: "viewer",
			query: `query($id: ID!) { ...N } fragment N on Query { a: node(id: $id) { ... on Payment { amount } } }`, variables: map[string]any{"id": paymentID}},
	}
	for _, op := range operations {
		if !slices.Contains(auth.ScopesOf(op.role), op.scope) {
			t.Fatalf("%s: role %s does not grant %s", op.name, op.role, op.scope)
		}
		allowed := env.tokenFor(op.role)
		for _, tc := range []struct {
			who, token, code string
			status           int
		}{
			{"no token", "", "unauthenticated", http.StatusUnauthorized},
			{"no scope", scopeless, "forbidden", http.StatusForbidden},
			{op.role, allowed, "", 0},
		} {
			if op.path != "" {
				r := env.request(op.method, op.path, tc.token, op.body)
				code, _ := r.errorCode()
				if tc.code == "" && (r.status < 200 || r.status > 299) || tc.code != "" && (r.status != tc.status || code != tc.code) {
					t.Errorf("REST %s, %s = %d %.200s", op.name, tc.who, r.status, r.raw)
				}
			}
			data, errs := env.graphql(tc.token, op.query, op.variables)
			switch {
			case tc.code == "" && len(errs) > 0:
				t.Errorf("GraphQL %s, %s = %+v", op.name, tc.who, errs)
			case tc.code != "" && (len(errs) == 0 || errs[0].code() != tc.code):
				t.Errorf("GraphQL %s, %s = %v %+v, want %s", op.name, tc.who, data, errs, tc.code)
			}
		}
	}
}
