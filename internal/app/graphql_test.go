package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

const createPaymentMutation = `mutation($in: CreatePaymentInput!) {
  createPayment(input: $in) {
    id amount amountRefunded currency status paymentMethod provider providerPaymentId
    failureCode failureMessage description metadata createdAt updatedAt
    customer { email name }
    card { brand last4 expMonth expYear fingerprint }
  }
}`

func gqlPaymentInput(amount any, currency, number string) map[string]any {
	return map[string]any{
		"amount": amount, "currency": currency, "paymentMethod": "CREDIT_CARD",
		"customer": map[string]any{"email": "ann@example.com", "name": "Ann Lee"},
		"card":     map[string]any{"number": number, "expMonth": 12, "expYear": cardExpYear, "cvc": "123"},
	}
}

func TestCreatePaymentGraphQL(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")

		input := gqlPaymentInput("49.99", "usd", "4242424242424242")
		input["metadata"] = map[string]any{"order": "7"}
		data := env.mustGraphQL(token, createPaymentMutation, map[string]any{"in": input})
		p := data["createPayment"].(map[string]any)
		want := map[string]string{
			"amount": "49.99", "amountRefunded": "0.00", "currency": "USD", "status": "SUCCEEDED",
			"paymentMethod": "CREDIT_CARD", "provider": "stripe", "failureCode": "",
		}
		for field, value := range want {
			if got := str(p[field]); got != value {
				t.Errorf("%s = %q, want %q", field, got, value)
			}
		}
		if get(p, "card", "last4") != "4242" || get(p, "card", "brand") != "visa" || str(get(p, "card", "expMonth")) != "12" {
			t.Errorf("card = %v", p["card"])
		}
		if get(p, "customer", "name") != "Ann Lee" || get(p, "metadata", "order") != "7" {
			t.Errorf("customer, metadata = %v, %v", p["customer"], p["metadata"])
		}

		// A Decimal may come as a JSON number in variables or inline in the document; neither
		// passes through a float (0.1 + 0.2 style drift would show in the stored minor units).
		data = env.mustGraphQL(token, createPaymentMutation, map[string]any{"in": gqlPaymentInput(json.Number("19.99"), "EUR", "4242424242424242")})
		if got := str(get(data, "createPayment", "amount")); got != "19.99" {
			t.Errorf("number variable 19.99 = %s", got)
		}
		inline := `mutation { createPayment(input: {amount: 0.29, currency: "KWD", paymentMethod: CREDIT_CARD,
			customer: {email: "ann@example.com"}, card: {number: "4242424242424242", expMonth: 1, expYear: ` + cardExpYearText + `, cvc: "123"}}) { id amount } }`
		data = env.mustGraphQL(token, inline, nil)
		if got := str(get(data, "createPayment", "amount")); got != "0.290" {
			t.Errorf("inline 0.29 KWD = %s, want 0.290", got)
		}
		if stored := env.payment(str(get(data, "createPayment", "id"))); stored.Amount != 290 {
			t.Errorf("inline 0.29 KWD stored as %d, want 290", stored.Amount)
		}
		data = env.mustGraphQL(token, `mutation { createPayment(input: {amount: 500, currency: "JPY", paymentMethod: CREDIT_CARD,
			customer: {email: "ann@example.com"}, card: {number: "4242424242424242", expMonth: 1, expYear: `+cardExpYearText+`, cvc: "123"}}) { amount } }`, nil)
		if got := str(get(data, "createPayment", "amount")); got != "500" {
			t.Errorf("inline 500 JPY = %s", got)
		}

		// A decline is data, not an error.
		data = env.mustGraphQL(token, createPaymentMutation, map[string]any{"in": gqlPaymentInput("5.00", "USD", "4000000000009995")})
		if get(data, "createPayment", "status") != "FAILED" || get(data, "createPayment", "failureCode") != "insufficient_funds" {
			t.Errorf("declined = %v", data)
		}
	})
}

func TestGraphQLErrorsCarryTheErrorTableCodes(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		developer := env.tokenFor("developer")
		with := func(change func(map[string]any)) map[string]any {
			in := gqlPaymentInput("10.00", "USD", "4242424242424242")
			change(in)
			return in
		}
		cardOf := func(in map[string]any) map[string]any { return in["card"].(map[string]any) }
		tests := []struct {
			name, token string
			input       map[string]any
			code, param string
		}{
			{"no token", "", with(func(map[string]any) {}), "unauthenticated", ""},
			{"expired token", expiredToken(t, env), with(func(map[string]any) {}), "token_expired", ""},
			{"viewer", env.tokenFor("viewer"), with(func(map[string]any) {}), "forbidden", ""},
			{"zero", developer, with(func(in map[string]any) { in["amount"] = "0" }), "invalid_amount", "amount"},
			{"too precise", developer, with(func(in map[string]any) { in["amount"] = "1.001" }), "invalid_amount", "amount"},
			{"bad decimal", developer, with(func(in map[string]any) { in["amount"] = "1,00" }), "invalid_amount", "amount"},
			{"currency", developer, with(func(in map[string]any) { in["currency"] = "XTS" }), "invalid_currency", "currency"},
			{"empty currency", developer, with(func(in map[string]any) { in["currency"] = "" }), "missing_field", "currency"},
			{"card number", developer, with(func(in map[string]any) { cardOf(in)["number"] = "1234567890123" }), "invalid_card", "card.number"},
			{"exp month", developer, with(func(in map[string]any) { cardOf(in)["expMonth"] = 0 }), "invalid_card", "card.expMonth"},
			{"no card", developer, with(func(in map[string]any) { delete(in, "card") }), "missing_field", "card"},
			{"bad email", developer, with(func(in map[string]any) { in["customer"] = map[string]any{"email": "a@"} }), "invalid_request", "customer.email"},
		}
		for _, tt := range tests {
			data, errs := env.graphql(tt.token, createPaymentMutation, map[string]any{"in": tt.input})
			if len(errs) != 1 || errs[0].code() != tt.code || str(errs[0].Extensions["param"]) != tt.param {
				t.Errorf("%s: errors = %+v, want %s on %q", tt.name, errs, tt.code, tt.param)
			}
			if data != nil && data["createPayment"] != nil {
				t.Errorf("%s: data = %v", tt.name, data)
			}
		}
		// Values the schema itself refuses fail validation, before any resolver runs.
		for name, input := range map[string]map[string]any{
			"unknown method": with(func(in map[string]any) { in["paymentMethod"] = "PAYPAL" }),
			"float amount":   with(func(in map[string]any) { in["amount"] = true }),
			"unknown field":  with(func(in map[string]any) { in["amout"] = "1" }),
		} {
			if _, errs := env.graphql(developer, createPaymentMutation, map[string]any{"in": input}); len(errs) == 0 {
				t.Errorf("%s: accepted", name)
			}
		}
		if n := env.paymentCount(); n != 0 {
			t.Errorf("refused mutations wrote %d payments", n)
		}
	})
}

func TestReadPaymentsBackOverGraphQL(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		var ids []string
		for i, number := range []string{"4242424242424242", "4000000000000002", "4242424242424242", "4000000000000002"} {
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody(i+1, "USD", number))
			ids = append(ids, str(r.data()["id"]))
		}
		viewer := env.tokenFor("viewer")

		// One ID on both surfaces: the REST id resolves through payment(id:) and node(id:).
		data := env.mustGraphQL(viewer, `query($id: ID!) {
			payment(id: $id) { id amount status }
			node(id: $id) { id __typename ... on Payment { amount currency } }
		}`, map[string]any{"id": ids[1]})
		if get(data, "payment", "id") != ids[1] || get(data, "payment", "status") != "FAILED" || str(get(data, "payment", "amount")) != "2.00" {
			t.Errorf("payment = %v", data["payment"])
		}
		if get(data, "node", "id") != ids[1] || get(data, "node", "__typename") != "Payment" || get(data, "node", "currency") != "USD" {
			t.Errorf("node = %v", data["node"])
		}
		data = env.mustGraphQL(viewer, `{ node(id: "usr_nothing") { id } nodes(ids: ["pay_missing"]) { id } }`, nil)
		if data["node"] != nil || get(data, "nodes", 0) != nil {
			t.Errorf("unknown ids = %v", data)
		}
		_, errs := env.graphql(viewer, `{ payment(id: "pay_missing") { id } }`, nil)
		if len(errs) != 1 || errs[0].code() != "not_found" {
			t.Errorf("missing payment = %+v", errs)
		}
		_, errs = env.graphql("", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": ids[0]})
		if len(errs) != 1 || errs[0].code() != "unauthenticated" {
			t.Errorf("node without a token = %+v", errs)
		}

		// The Relay connection: where, orderBy, totalCount, paging forwards and backwards.
		list := func(args string) (ids []string, total string, page map[string]any) {
			data := env.mustGraphQL(viewer, `{ payments(`+args+`) { totalCount
				pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
				edges { cursor node { id } } } }`, nil)
			for _, edge := range get(data, "payments", "edges").([]any) {
				ids = append(ids, str(get(edge, "node", "id")))
			}
			return ids, str(get(data, "payments", "totalCount")), get(data, "payments", "pageInfo").(map[string]any)
		}
		got, total, _ := list(`where: {status: FAILED}, orderBy: {field: CREATED_AT, direction: DESC}`)
		if strings.Join(got, ",") != ids[3]+","+ids[1] || total != "2" {
			t.Errorf("failed payments newest first = %v (total %s)", got, total)
		}
		got, total, page := list(`first: 2, orderBy: {field: CREATED_AT, direction: ASC}`)
		if strings.Join(got, ",") != ids[0]+","+ids[1] || total != "4" || page["hasNextPage"] != true {
			t.Errorf("first page = %v %v", got, page)
		}
		got, _, page = list(`first: 2, after: "` + str(page["endCursor"]) + `", orderBy: {field: CREATED_AT, direction: ASC}`)
		if strings.Join(got, ",") != ids[2]+","+ids[3] || page["hasNextPage"] != false {
			t.Errorf("second page = %v %v", got, page)
		}
		got, _, page = list(`last: 1, before: "` + str(page["startCursor"]) + `", orderBy: {field: CREATED_AT, direction: ASC}`)
		if strings.Join(got, ",") != ids[1] || page["hasPreviousPage"] != true {
			t.Errorf("page before = %v %v", got, page)
		}
		got, _, _ = list(`orderBy: {field: AMOUNT, direction: DESC}, where: {currency: "USD", amountGTE: 200, amountLTE: 300}`)
		if strings.Join(got, ",") != ids[2]+","+ids[1] {
			t.Errorf("amounts 2.00 to 3.00 by amount = %v", got)
		}
		for _, where := range []string{`{amountGTE: 200}`, `{or: [{currency: "USD"}, {amountGTE: 200}]}`,
			`{and: [{currency: "USD"}, {not: {amountIn: [200]}}]}`, `{not: {currency: "USD"}, amountNEQ: 200}`} {
			_, errs = env.graphql(viewer, `{ payments(where: `+where+`) { totalCount } }`, nil)
			if len(errs) != 1 || errs[0].code() != "missing_field" {
				t.Errorf("amount filter without currency %s = %+v", where, errs)
			}
		}
		got, _, _ = list(`where: {currency: "USD", or: [{amountLT: 200}, {amountGT: 300}]}`)
		if slices.Contains(got, ids[1]) || slices.Contains(got, ids[2]) || len(got) == 0 {
			t.Errorf("amounts outside 2.00 to 3.00 = %v", got)
		}
		got, total, _ = list(`where: {customerEmail: "nobody@example.com"}`)
		if len(got) != 0 || total != "0" {
			t.Errorf("filter by email = %v", got)
		}
		// Currency codes are case-insensitive in, at any depth.
		for _, where := range []string{`{currency: "usd"}`, `{currencyIn: ["eur", "usd"]}`, `{or: [{currency: "usd"}]}`} {
			if _, total, _ = list(`where: ` + where); total != "4" {
				t.Errorf("payments(where: %s) = %s payments, want 4", where, total)
			}
		}
		// A cursor pages only the order it was taken under.
		got, _, byAmount := list(`first: 2, orderBy: {field: AMOUNT, direction: DESC}`)
		got2, _, _ := list(`first: 2, after: "` + str(byAmount["endCursor"]) + `", orderBy: {field: AMOUNT, direction: DESC}`)
		if strings.Join(append(got, got2...), ",") != ids[3]+","+ids[2]+","+ids[1]+","+ids[0] {
			t.Errorf("pages by amount = %v then %v", got, got2)
		}
		_, _, byTime := list(`first: 1, orderBy: {field: CREATED_AT, direction: ASC}`)
		// A cursor of the id alone, as the list's order by id (before it was newest first by
		// default) gave.
		var byID bytes.Buffer
		ent.Cursor{ID: ids[0]}.MarshalGQL(&byID)
		for _, args := range []string{
			`after: "` + str(byTime["endCursor"]) + `", orderBy: {field: AMOUNT, direction: ASC}`,
			`before: "` + str(byAmount["endCursor"]) + `", last: 1, orderBy: {field: CREATED_AT, direction: ASC}`,
			`after: ` + byID.String() + `, orderBy: {field: CREATED_AT, direction: ASC}`,
			`after: ` + byID.String(),
			`after: "` + str(byAmount["endCursor"]) + `"`,
		} {
			_, errs = env.graphql(viewer, `{ payments(`+args+`) { totalCount } }`, nil)
			if len(errs) != 1 || errs[0].code() != "invalid_request" {
				t.Errorf("payments(%s) = %+v, want invalid_request", args, errs)
			}
		}
	})
}

// TestNodesFailWithTheDatabase: a failure to look answers node and nodes with internal_error,
// never with the nulls of IDs nothing has, whether one ID is looked up or several of one or two
// types.
func TestNodesFailWithTheDatabase(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	viewer := env.tokenFor("viewer")
	env.db.SQL.Close()
	for _, ids := range [][]string{{"pay_a"}, {"pay_a", "pay_b"}, {"pay_a", "re_b", "xyz"}} {
		data, errs := env.graphql(viewer, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids})
		if len(errs) != 1 || errs[0].code() != "internal_error" || !slices.Equal(errs[0].Path, []any{"nodes"}) || data != nil {
			t.Errorf("nodes(%v) without a database = %v %+v", ids, data, errs)
		}
	}
	data, errs := env.graphql(viewer, `{ node(id: "pay_a") { id } }`, nil)
	if len(errs) != 1 || errs[0].code() != "internal_error" || data["node"] != nil {
		t.Errorf("node without a database = %v %+v", data, errs)
	}
}

func TestGraphQLOverHTTP(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("viewer")

	// GET runs queries.
	r := env.request(http.MethodGet, "/query?query="+url.QueryEscape(`{ payments(first: 1) { totalCount } }`), token, nil)
	if r.status != http.StatusOK || str(get(r.body, "data", "payments", "totalCount")) != "0" {
		t.Errorf("GET query = %d %s", r.status, r.raw)
	}
	// GET never runs a mutation.
	r = env.request(http.MethodGet, "/query?query="+url.QueryEscape(`mutation { refreshToken(refreshToken: "x") { accessToken } }`), token, nil)
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != http.MethodPost {
		t.Errorf("GET mutation = %d %s", r.status, r.raw)
	}
	// application/graphql-response+json is honoured, with 4xx for a document that cannot run,
	// answered, as under application/json, without a data entry.
	for accept, status := range map[string]int{"application/graphql-response+json": http.StatusBadRequest, "application/json": http.StatusOK} {
		for _, query := range []string{"{ payments( }", "{ nothing }"} {
			r = env.request(http.MethodPost, "/query", token, map[string]any{"query": query}, "Accept", accept)
			if _, hasData := r.body["data"]; r.status != status || !strings.HasPrefix(r.header.Get("Content-Type"), accept) || hasData {
				t.Errorf("%s under %s = %d %s %s", query, accept, r.status, r.header.Get("Content-Type"), r.raw)
			}
		}
	}
	// Parameters that are not a GraphQL request are 400 whatever the client accepts.
	for name, path := range map[string]string{
		"GET without a query":          "/query",
		"GET with variables not a map": "/query?query=" + url.QueryEscape("{ __typename }") + "&variables=" + url.QueryEscape("[1]"),
	} {
		r = env.request(http.MethodGet, path, token, nil)
		if r.status != http.StatusBadRequest || str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" {
			t.Errorf("%s = %d %s", name, r.status, r.raw)
		}
	}
	for _, body := range []string{`{"qeury": "{ __typename }"}`, `{"query": 1}`, `null`} {
		r = env.request(http.MethodPost, "/query", token, body)
		if r.status != http.StatusBadRequest || str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" {
			t.Errorf("POST %s = %d %s", body, r.status, r.raw)
		}
	}
	r = env.request(http.MethodPost, "/query", token, map[string]any{"query": "{ payments(first: 1) { totalCount } }"}, "Accept", "application/json")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("application/json = %d %s", r.status, r.header.Get("Content-Type"))
	}
	// A malformed body is refused without being echoed back: it may hold a card number.
	r = env.request(http.MethodPost, "/query", token, `{"query": "mutation", "variables": {"number": "4242424242424242"`)
	if r.status != http.StatusBadRequest || strings.Contains(r.raw, "4242424242424242") {
		t.Errorf("malformed body = %d %s", r.status, r.raw)
	}
	// Bodies over 1 MiB are refused before GraphQL sees them, in GraphQL's error shape.
	r = env.request(http.MethodPost, "/query", token, map[string]any{"query": "{ __typename }", "variables": map[string]any{"x": strings.Repeat("y", 1<<20)}})
	if r.status != http.StatusRequestEntityTooLarge || str(get(r.body, "errors", 0, "extensions", "code")) != "payload_too_large" {
		t.Errorf("large body = %d %s", r.status, r.raw)
	}
}

func TestGraphQLRefusesBadPagingAsClientErrors(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("viewer")
	for _, args := range []string{`first: 1, last: 1`, `first: 0`, `first: 101`, `last: -1`, `after: "not-a-cursor", first: 1`} {
		_, errs := env.graphql(token, `{ payments(`+args+`) { totalCount } }`, nil)
		if len(errs) != 1 || errs[0].code() != "invalid_request" {
			t.Errorf("payments(%s) = %+v, want invalid_request", args, errs)
		}
	}
	if strings.Contains(env.logs.String(), `"level":"ERROR"`) {
		t.Errorf("client mistakes were logged as server errors:\n%s", env.logs.String())
	}
	// Without first or last a page still has a bound.
	for range paging.DefaultPageSize + 1 {
		env.request(http.MethodPost, "/api/v1/payments", env.tokenFor("developer"), paymentBody("1.00", "USD", "4242424242424242"))
	}
	data := env.mustGraphQL(token, `{ payments { totalCount edges { node { id } } } }`, nil)
	if n := len(get(data, "payments", "edges").([]any)); n != paging.DefaultPageSize {
		t.Errorf("an unbounded page held %d payments, want %d", n, paging.DefaultPageSize)
	}
}

func TestGraphQLStatusCodes(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("viewer")
	r := env.request(http.MethodPut, "/query", token, map[string]any{"query": "{ __typename }"})
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT = %d %v", r.status, r.header)
	}
	r = env.request(http.MethodPost, "/query", token, map[string]any{"query": "{ __typename }"}, "Content-Type", "text/plain")
	if r.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain = %d %s", r.status, r.raw)
	}
	r = env.request(http.MethodPost, "/query", token, map[string]any{"query": "{ nothing }"}, "Accept", "application/json")
	if r.status != http.StatusOK || len(get(r.body, "errors").([]any)) != 1 {
		t.Errorf("invalid document under application/json = %d %s", r.status, r.raw)
	}
}

// TestConcurrentInlineDecimals runs documents with inline amounts side by side; with -race it
// shows that preparing a document never touches one another request holds.
func TestConcurrentInlineDecimals(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("developer")
	const query = `mutation($card: CardInput) { createPayment(input: {amount: 10.25, currency: "USD",
		paymentMethod: CREDIT_CARD, customer: {email: "a@example.com"}, card: $card}) { amount } }`
	card := map[string]any{"number": "4242424242424242", "expMonth": 12, "expYear": cardExpYear, "cvc": "123"}
	const requests = 20
	amounts := make(chan string, requests)
	for range requests {
		go func() {
			r := env.request(http.MethodPost, "/query", token, map[string]any{"query": query, "variables": map[string]any{"card": card}})
			amounts <- str(get(r.body, "data", "createPayment", "amount"))
		}()
	}
	for range requests {
		if amount := <-amounts; amount != "10.25" {
			t.Errorf("amount = %q, want 10.25", amount)
		}
	}
}
