package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

func repeatf(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// TestHostileDocumentsAnswerOneShortError: the floods found on /query, sent without a token, each
// answer one short error with its code, as a request error: no data entry.
func TestHostileDocumentsAnswerOneShortError(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	var chain strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&chain, "fragment C%d on Query { ...C%d }\n", i, i+1)
	}
	chain.WriteString("fragment C3000 on Query { __typename }\n{ ...C0 }")
	for name, query := range map[string]string{
		"one alias, 1,000 arguments": "{" + repeatf(1000, ` a:payment(id:"%d"){id}`) + "}",
		"20,000 __typename":          "{" + strings.Repeat(" __typename", 20000) + "}",
		"3,000 chained fragments":    chain.String(),
		"200 distinct aliases":       "{" + repeatf(200, ` a%d:payment(id:"1"){id}`) + "}",
		"fields 28 deep":             "{ payments { edges { node" + strings.Repeat(" { refunds { payment", 12) + " { id }" + strings.Repeat(" } }", 12) + " } } }",
	} {
		for accept, status := range map[string]int{"application/json": http.StatusOK, "application/graphql-response+json": http.StatusBadRequest} {
			r := env.request(http.MethodPost, "/query", "", map[string]any{"query": query}, "Accept", accept)
			errs, _ := get(r.body, "errors").([]any)
			_, hasData := r.body["data"]
			if r.status != status || len(errs) != 1 || str(get(errs, 0, "extensions", "code")) != "query_too_complex" || hasData || len(r.raw) > 300 {
				t.Errorf("%s (%s) = %d, %d bytes: %.300s", name, accept, r.status, len(r.raw), r.raw)
			}
		}
	}
}

// TestOneLoginPerRequest: aliases of login test no password at all, so their errors tell nothing.
func TestOneLoginPerRequest(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	if _, err := env.app.services.auth.CreateUser(databasetest.AsMerchant(), "guess@example.com", "the right password", "viewer"); err != nil {
		t.Fatal(err)
	}
	var guesses strings.Builder
	for i, password := range []string{"one", "two", "the right password", "four", "five", "six", "seven", "eight"} {
		fmt.Fprintf(&guesses, ` a%d: login(input: {email: "guess@example.com", password: %q}) { accessToken }`, i, password)
	}
	data, errs := env.graphql("", "mutation {"+guesses.String()+"}", nil)
	if len(errs) != 1 || errs[0].code() != "invalid_request" || data != nil {
		t.Errorf("8 logins = %v %+v", data, errs)
	}
	r := env.request(http.MethodPost, "/query", "", map[string]any{"query": "mutation {" + guesses.String() + "}"}, "Accept", "application/graphql-response+json")
	if r.status != http.StatusBadRequest {
		t.Errorf("8 logins under application/graphql-response+json = %d %s", r.status, r.raw)
	}
	if n, _ := env.db.Ent.RefreshToken.Query().Count(databasetest.AsMerchant()); n != 0 {
		t.Errorf("%d sessions were opened by a refused request", n)
	}
	data = env.mustGraphQL("", `mutation { login(input: {email: "guess@example.com", password: "the right password"}) { accessToken } }`, nil)
	if str(get(data, "login", "accessToken")) == "" {
		t.Errorf("one login = %v", data)
	}
}

// TestOneMoneyMovingFieldPerRequest: a request holds at most one mutation that moves money or
// makes a credential, however it is spelled (aliases, fragments, different mutations): 60
// aliases of createPayment would otherwise charge 60 times for one rate-limit token, and, with a
// slow provider, run past the request's time limit, the client told nothing of what was charged.
func TestOneMoneyMovingFieldPerRequest(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		paid := str(get(env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242")).body, "data", "id"))
		variables := map[string]any{"in": gqlPaymentInput("1.00", "USD", "4242424242424242"), "id": paid}
		for name, document := range map[string]string{
			"60 aliases of createPayment": `mutation($in: CreatePaymentInput!) {` + repeatf(60, ` p%d: createPayment(input: $in) { id }`) + `}`,
			"createPayment twice through fragments": `mutation($in: CreatePaymentInput!) { ...A ...B }
				fragment A on Mutation { a: createPayment(input: $in) { id } }
				fragment B on Mutation { b: createPayment(input: $in) { id } }`,
			"a payment and a refund": `mutation($in: CreatePaymentInput!, $id: ID!) { createPayment(input: $in) { id }
				refundPayment(input: {paymentId: $id, amount: "1.00"}) { id } }`,
			"a payment and an API key": `mutation($in: CreatePaymentInput!) { createPayment(input: $in) { id }
				createAPIKey(input: {name: "k", scopes: ["payments:read"]}) { key } }`,
		} {
			used := map[string]any{"in": variables["in"]}
			if strings.Contains(document, "$id") {
				used["id"] = paid
			}
			data, errs := env.graphql(admin, document, used)
			if len(errs) != 1 || errs[0].code() != "invalid_request" || !strings.Contains(errs[0].Message, "createPayment") || data != nil {
				t.Errorf("%s = %v %+v", name, data, errs)
			}
		}
		if n := env.paymentCount(); n != 1 {
			t.Errorf("refused requests made %d payments", n-1)
		}
		if n, _ := env.db.Ent.APIKey.Query().Count(databasetest.AsMerchant()); n != 0 {
			t.Errorf("refused requests made %d keys", n)
		}
		// One beside what moves nothing goes through.
		endpoint := str(get(env.request(http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": "https://example.com/hooks", "events": []string{"*"}}).body, "data", "id"))
		data := env.mustGraphQL(admin, `mutation($in: CreatePaymentInput!, $endpoint: ID!) { createPayment(input: $in) { id }
			updateWebhookEndpoint(id: $endpoint, input: {description: "x"}) { id } }`, map[string]any{"in": variables["in"], "endpoint": endpoint})
		if str(get(data, "createPayment", "id")) == "" || env.paymentCount() != 2 {
			t.Errorf("one payment beside another mutation = %v", data)
		}
	})
}

// TestListsAreCounted: a query's cost is the product of the list sizes along each path.
func TestListsAreCounted(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	developer, operator, viewer := env.tokenFor("developer"), env.tokenFor("operator"), env.tokenFor("viewer")
	var paymentID, refundID string
	for i := range 100 {
		r := env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("10.00", "USD", "4242424242424242"))
		paymentID = str(get(r.body, "data", "id"))
		if i == 0 {
			for range 4 {
				r := env.request(http.MethodPost, "/api/v1/payments/"+paymentID+"/refunds", operator, map[string]any{"amount": "1.00"})
				refundID = str(get(r.body, "data", "id"))
			}
		}
	}

	nested := `query($id: ID!) { payment(id: $id) { refunds { payment { refunds { payment { refunds { payment { refunds { id } } } } } } } } }`
	_, errs := env.graphql(viewer, nested, map[string]any{"id": paymentID})
	if len(errs) != 1 || errs[0].code() != "query_too_complex" {
		t.Errorf("refunds nested 4 times = %+v", errs)
	}
	pages := "{" + repeatf(20, ` p%d: payments(first: 100) { edges { node { refunds { id } } } }`) + "}"
	if _, errs := env.graphql(viewer, pages, nil); len(errs) != 1 || errs[0].code() != "query_too_complex" {
		t.Errorf("20 pages of 100 payments with refunds = %+v", errs)
	}
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("pay_%d", i)
	}
	const nodes = `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Payment { amount refunds { id } } ... on Refund { paymentId } } }`
	if _, errs := env.graphql(viewer, nodes, map[string]any{"ids": ids}); len(errs) != 1 || errs[0].code() != "invalid_request" || errs[0].Extensions["param"] != "ids" {
		t.Errorf("nodes of 101 ids = %+v", errs)
	}
	data := env.mustGraphQL(viewer, nodes, map[string]any{"ids": []string{refundID, "pay_unknown", paymentID, "xyz"}})
	found, _ := get(data, "nodes").([]any)
	if len(found) != 4 || str(get(found, 0, "paymentId")) == "" || found[1] != nil || str(get(found, 2, "id")) != paymentID || found[3] != nil {
		t.Errorf("nodes = %v", found)
	}

	// A dashboard page of 100 payments with their refunds and history runs.
	page := `{ payments(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node {
		id amount amountRefunded currency status provider createdAt customer { email name } card { brand last4 }
		refunds { id amount status createdAt } statusHistory { from to at reason } } } } }`
	data = env.mustGraphQL(viewer, page, nil)
	if edges, _ := get(data, "payments", "edges").([]any); len(edges) != 100 {
		t.Errorf("the dashboard page held %d payments", len(edges))
	}
}

// TestHugeFiltersAreClientErrors: a filter over its bounds is invalid_request naming the field
// (or the variable, when it is over the bounds of any variable), answered without touching the
// database or logging an error.
func TestHugeFiltersAreClientErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	viewer := env.tokenFor("viewer")
	or := func(n int) []any {
		terms := make([]any, n)
		for i := range terms {
			terms[i] = map[string]any{"status": "FAILED"}
		}
		return terms
	}
	not := func(depth int) map[string]any {
		where := map[string]any{"status": "FAILED"}
		for range depth - 1 {
			where = map[string]any{"not": where}
		}
		return where
	}
	emails := func(n int) []string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf("c%d@example.com", i)
		}
		return list
	}
	const query = `query($where: PaymentWhereInput) { payments(where: $where) { totalCount } }`
	for name, tc := range map[string]struct {
		where map[string]any
		param string
	}{
		// Over the bounds of any variable: refused before gqlgen reads them.
		"or of 5,000":    {map[string]any{"or": or(5000)}, "variables.where"},
		"not 2,000 deep": {not(2000), "variables.where"},
		"40,000 emails":  {map[string]any{"customerEmailIn": emails(40000)}, "variables.where"},
		// Within them, over the bounds of a payment filter.
		"or of 60":           {map[string]any{"or": or(60)}, "where.or"},
		"not 6 deep":         {not(6), "where" + strings.Repeat(".not", 5)},
		"600 emails":         {map[string]any{"customerEmailIn": emails(600)}, "where.customerEmailIn"},
		"a 1,000-char email": {map[string]any{"customerEmailContains": strings.Repeat("x", 1000)}, "where.customerEmailContains"},
	} {
		_, errs := env.graphql(viewer, query, map[string]any{"where": tc.where})
		if len(errs) != 1 || errs[0].code() != "invalid_request" || errs[0].Extensions["param"] != tc.param {
			t.Errorf("%s = %.300v", name, errs)
		}
	}
	r := env.request(http.MethodGet, "/api/v1/payments?customer_email="+strings.Repeat("x", 300), viewer, nil)
	if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "customer_email" {
		t.Errorf("REST long customer_email = %d %s", r.status, r.raw)
	}
	if strings.Contains(env.logs.String(), `"level":"ERROR"`) {
		t.Errorf("client mistakes were logged as errors:\n%.2000s", env.logs.String())
	}
}

// TestProductionGraphQLGivesNothingAway: no introspection (a client error, not logged as one) and
// no hints at field names in validation errors; development keeps both.
func TestProductionGraphQLGivesNothingAway(t *testing.T) {
	t.Parallel()
	db := databasetest.SQLite(t)
	production := newTestEnv(t, db, "PAYGATE_ENV=production", "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
	development := newTestEnv(t, db)
	token := production.tokenFor("viewer")
	for name, query := range map[string]string{
		"schema": `{ __schema { types { name } } }`,
		"type":   `{ __type(name: "Payment") { fields { name } } }`,
	} {
		for accept, status := range map[string]int{"application/json": http.StatusOK, "application/graphql-response+json": http.StatusBadRequest} {
			r := production.request(http.MethodPost, "/query", token, map[string]any{"query": query}, "Accept", accept)
			if _, hasData := r.body["data"]; r.status != status || str(get(r.body, "errors", 0, "extensions", "code")) != "introspection_disabled" || hasData {
				t.Errorf("production %s introspection (%s) = %d %s", name, accept, r.status, r.raw)
			}
		}
		r := development.request(http.MethodPost, "/query", token, map[string]any{"query": query})
		if get(r.body, "errors") != nil {
			t.Errorf("development %s introspection = %.300s", name, r.raw)
		}
	}
	for _, query := range []string{
		`{ payments(first: 1) { totalCont } }`,
		`{ payments(frist: 1) { totalCount } }`,
		`{ payments(where: {statu: FAILED}) { totalCount } }`,
		`{ payments(where: {status: FAILD}) { totalCount } }`,
	} {
		_, errs := production.graphql(token, query, nil)
		if len(errs) == 0 || strings.Contains(errs[0].Message, "Did you mean") {
			t.Errorf("production %s = %+v", query, errs)
		}
		_, errs = development.graphql(token, query, nil)
		if len(errs) == 0 || !strings.Contains(errs[0].Message, "Did you mean") {
			t.Errorf("development %s = %+v", query, errs)
		}
	}
	if logs := production.logs.String(); strings.Contains(logs, `"level":"ERROR"`) || strings.Contains(logs, `"level":"WARN"`) {
		t.Errorf("refused introspection was logged above debug:\n%.2000s", logs)
	}
}

// TestGraphQLScalarsAreStrict: a String takes a string only (a card number sent as a number is
// refused), an Int a whole number, a Boolean true or false; nothing is written.
func TestGraphQLScalarsAreStrict(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	developer := env.tokenFor("developer")
	numberCard := gqlPaymentInput("5.00", "USD", "4242424242424242")
	numberCard["card"].(map[string]any)["number"] = 4242424242424242
	textMonth := gqlPaymentInput("5.00", "USD", "4242424242424242")
	textMonth["card"].(map[string]any)["expMonth"] = "12"
	numberKey := gqlPaymentInput("5.00", "USD", "4242424242424242")
	numberKey["idempotencyKey"] = 123
	for name, in := range map[string]map[string]any{"card number as a number": numberCard, "expMonth as a string": textMonth, "idempotencyKey as a number": numberKey} {
		r := env.request(http.MethodPost, "/query", developer, map[string]any{"query": createPaymentMutation, "variables": map[string]any{"in": in}})
		// invalid_request, as the value is not read at all: a number read as text would reach the
		// card checks and answer invalid_card, or be charged.
		if str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" || get(r.body, "data", "createPayment") != nil || strings.Contains(r.raw, "4242424242424242") {
			t.Errorf("%s = %s", name, r.raw)
		}
	}
	_, errs := env.graphql(developer, `query($nil: Boolean) { payments(where: {failureCodeIsNil: $nil}) { totalCount } }`, map[string]any{"nil": "true"})
	if len(errs) != 1 {
		t.Errorf("Boolean as a string = %+v", errs)
	}
	if n := env.paymentCount(); n != 0 {
		t.Errorf("%d payments written by refused requests", n)
	}
}

// TestRESTRefundOfNullAmountIsRefused: null is not "refund the rest"; leaving amount out is.
func TestRESTRefundOfNullAmountIsRefused(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	id := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("20.00", "USD", "4242424242424242")).body, "data", "id"))
	r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, `{"amount": null}`)
	if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_amount" || param != "amount" {
		t.Errorf("amount null = %d %s", r.status, r.raw)
	}
	if p := env.payment(id); p.AmountRefunded != 0 {
		t.Errorf("refunded %d after a refused refund", p.AmountRefunded)
	}
	r = env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, `{"reason": "requested_by_customer"}`)
	if r.status != http.StatusCreated || str(get(r.body, "data", "amount")) != "20.00" {
		t.Errorf("amount left out = %d %s", r.status, r.raw)
	}
}

// TestGraphQLIDsHoldText: an ID argument with a control character (NUL above all, which
// PostgreSQL's text refuses) is the client's error, on every database, never a server error.
func TestGraphQLIDsHoldText(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		for _, query := range []string{
			`query($id: ID!) { payment(id: $id) { id } }`,
			`query($id: ID!) { node(id: $id) { id } }`,
			`mutation($id: ID!) { revokeAPIKey(id: $id) { id } }`,
		} {
			_, errs := env.graphql(admin, query, map[string]any{"id": "pay_\x00"})
			if len(errs) != 1 || errs[0].code() == "internal_error" {
				t.Errorf("%s with NUL = %+v", query, errs)
			}
		}
	})
}
