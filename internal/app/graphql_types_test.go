package app

import (
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestGraphQLAnswersWhatItsTypesPromise: what the schema says is always there is there, as a
// typed client reads it: an empty metadata is {} and empty lists are [], a refund's answer
// carries its payment as it is after the refund, an event its object typed, and the custom
// scalars say where they are defined.
func TestGraphQLAnswersWhatItsTypesPromise(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")

		made := env.mustGraphQL(admin, `mutation($in: CreatePaymentInput!) { createPayment(input: $in) {
			id status metadata refunds { id } statusHistory { from to } } }`,
			map[string]any{"in": gqlPaymentInput("20.00", "USD", "4242424242424242")})
		paid := str(get(made, "createPayment", "id"))
		if m, ok := get(made, "createPayment", "metadata").(map[string]any); !ok || len(m) != 0 {
			t.Errorf("metadata of a payment made without = %#v, want {}", get(made, "createPayment", "metadata"))
		}
		if refunds, ok := get(made, "createPayment", "refunds").([]any); !ok || len(refunds) != 0 {
			t.Errorf("refunds of a new payment = %#v, want []", get(made, "createPayment", "refunds"))
		}
		nothing := env.mustGraphQL(admin, `{ payments(first: 5, where: {customerEmail: "nobody@example.com"}) { totalCount edges { node { id } } } }`, nil)
		if edges, ok := get(nothing, "payments", "edges").([]any); !ok || len(edges) != 0 {
			t.Errorf("edges of an empty page = %#v, want []", get(nothing, "payments", "edges"))
		}

		// The refund's answer carries its payment as it is now, the same as reading it again.
		const paymentFields = `id status amount amountRefunded metadata statusHistory { from to }`
		refunded := env.mustGraphQL(admin, `mutation($id: ID!) { refundPayment(input: {paymentId: $id, amount: "5.00"}) {
			id status payment { `+paymentFields+` } } }`, map[string]any{"id": paid})
		refund := str(get(refunded, "refundPayment", "id"))
		if get(refunded, "refundPayment", "status") != "SUCCEEDED" || get(refunded, "refundPayment", "payment", "status") != "PARTIALLY_REFUNDED" ||
			get(refunded, "refundPayment", "payment", "amountRefunded") != "5.00" {
			t.Errorf("refundPayment = %v", refunded)
		}
		again := env.mustGraphQL(admin, `query($id: ID!) { payment(id: $id) { `+paymentFields+` } }`, map[string]any{"id": paid})
		if !reflect.DeepEqual(get(refunded, "refundPayment", "payment"), get(again, "payment")) {
			t.Errorf("the refund's payment %v is not the payment read again %v", get(refunded, "refundPayment", "payment"), get(again, "payment"))
		}

		// Events carry what they tell of typed: the refund, and the payment, as they are now.
		events := env.mustGraphQL(admin, `{ events(first: 10, orderBy: {field: CREATED_AT, direction: ASC}) { edges { node { type
			object { __typename ... on Payment { id status } ... on Refund { id refundStatus: status payment { id } } } } } } }`, nil)
		kinds := map[string]string{}
		edges, _ := get(events, "events", "edges").([]any)
		for _, edge := range edges {
			eventType, object := str(get(edge, "node", "type")), get(edge, "node", "object")
			kinds[eventType] = str(get(object, "__typename"))
			switch {
			case strings.HasPrefix(eventType, "refund.") && (get(object, "id") != refund || get(object, "payment", "id") != paid):
				t.Errorf("%s shows %v, want refund %s of %s", eventType, object, refund, paid)
			case strings.HasPrefix(eventType, "payment.") && (get(object, "id") != paid || get(object, "status") != "PARTIALLY_REFUNDED"):
				t.Errorf("%s shows %v, want payment %s as it is now", eventType, object, paid)
			}
		}
		if want := map[string]string{"payment.succeeded": "Payment", "refund.succeeded": "Refund", "payment.refunded": "Payment"}; !reflect.DeepEqual(kinds, want) {
			t.Errorf("events' objects are %v, want %v", kinds, want)
		}
		// Reading the object needs payments:read besides the events' scope: refused once, before
		// any event is read, not once per event.
		webhooksOnly := env.apiKey(admin, "webhooks:read")
		for _, query := range []string{
			`{ events(first: 10) { edges { node { type object { __typename } } } } }`,
			`query { ...page } fragment page on Query { events(first: 10) { edges { node { ... on Event { object { __typename } } } } } }`,
		} {
			r := env.request(http.MethodPost, "/query", webhooksOnly, map[string]any{"query": query})
			errs, _ := get(r.body, "errors").([]any)
			if len(errs) != 1 || get(errs[0], "extensions", "code") != "forbidden" || get(r.body, "data", "events") != nil {
				t.Errorf("an events reader without payments:read reading objects = %d %s", r.status, r.raw)
			}
		}
		if _, errs := env.graphql(webhooksOnly, `{ events(first: 10) { edges { node { type } } } }`, nil); len(errs) != 0 {
			t.Errorf("an events reader without payments:read reading events: %+v", errs)
		}

		// Each custom scalar says where it is defined.
		for _, scalar := range []string{"Decimal", "StringMap", "Time", "Cursor", "JSON"} {
			out := env.mustGraphQL(admin, `query($name: String!) { __type(name: $name) { specifiedByURL } }`, map[string]any{"name": scalar})
			if u := str(get(out, "__type", "specifiedByURL")); !strings.HasPrefix(u, "https://") {
				t.Errorf("%s is specified by %q", scalar, u)
			}
		}
	})
}

// fewestRoundTrips asks query as token thrice, answering the fewest round trips to db one of them
// took, and the last answer: the pool also counts what the server does meanwhile on its own.
func fewestRoundTrips(t *testing.T, env *testEnv, db *database.DB, token, query string) (int64, map[string]any) {
	t.Helper()
	var fewest int64 = math.MaxInt64
	var out map[string]any
	for range 3 {
		before := db.RoundTrips()
		out = env.mustGraphQL(token, query, nil)
		fewest = min(fewest, db.RoundTrips()-before)
	}
	return fewest, out
}

// TestEventObjectsAreReadTogether: a page of events reads the payments and refunds it tells of
// in one read of each, however many events it holds.
func TestEventObjectsAreReadTogether(t *testing.T) {
	t.Parallel()
	db := databasetest.CountingSQLite(t)
	env := newTestEnv(t, db)
	admin := env.tokenFor("admin")
	for range 8 {
		paid := env.succeededPayment(admin, "10.00", "USD", "stripe")
		env.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", admin, map[string]any{"amount": "1.00"})
	}
	readTrips := func(query string) (int64, map[string]any) { return fewestRoundTrips(t, env, db, admin, query) }
	bare, _ := readTrips(`{ events(first: 50) { edges { node { type } } } }`)
	withObjects, out := readTrips(`{ events(first: 50) { edges { node { type
		object { ... on Payment { id status } ... on Refund { id refundStatus: status } } } } } }`)
	edges, _ := get(out, "events", "edges").([]any)
	if len(edges) != 24 { // each payment: payment.succeeded, refund.succeeded, payment.refunded
		t.Fatalf("%d events, want 24", len(edges))
	}
	for _, edge := range edges {
		if get(edge, "node", "object", "id") == nil {
			t.Errorf("an event without its object: %v", edge)
		}
	}
	if extra := withObjects - bare; extra > 2 {
		t.Errorf("reading 24 events' objects took %d round trips more than the events alone, want at most 2 (payments, refunds)", extra)
	}
}
