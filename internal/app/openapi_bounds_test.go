package app

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paygate/paygate/graph/rest"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/settings/settingsstore"
)

// documentedBound is one bound the OpenAPI document states on what a client sends: a parameter's,
// or a field's of a request body, wherever the schema stating it is written.
type documentedBound struct {
	method, path string
	// in is where the input goes: query, header, path, or body.
	in string
	// name is the parameter's name; at is the body field's place (property names, 0 for an item
	// of a list, "*" for a value of a map).
	name string
	at   []any
	// kind is maxLength, maxItems, maxProperties, maximum or minimum; limit is its value, and
	// exclusive says an exclusiveMinimum.
	kind      string
	limit     float64
	exclusive bool
	// schema is the bounded schema, which says what an item of a list or a value of a map is.
	schema *openapi3.Schema
}

// param is how an answer names the input: the parameter's name, or the field's place written as
// REST errors write it (card.number, routing.rules[0].name, metadata.k).
func (b documentedBound) param() string {
	if b.in != "body" {
		return b.name
	}
	var param strings.Builder
	for _, step := range b.at {
		switch step := step.(type) {
		case int:
			fmt.Fprintf(&param, "[%d]", step)
		default:
			if param.Len() > 0 {
				param.WriteByte('.')
			}
			param.WriteString(fmt.Sprint(step))
		}
	}
	return param.String()
}

func (b documentedBound) String() string {
	return fmt.Sprintf("%s %s %s %s %s %s", b.method, b.path, b.in, b.param(), b.kind, queryText(b.limit))
}

// refusedWith is the code a value past the bound is refused with: invalid_request, but for the
// fields whose own code has always said what is wrong with them, whatever it is (a card number
// of 40 characters is no card number, a 40-digit amount is above the maximum).
func (b documentedBound) refusedWith() apierror.Code {
	if b.kind == "maxItems" || b.kind == "maxProperties" {
		return apierror.InvalidRequest
	}
	param := b.param()
	field, _, _ := strings.Cut(param[strings.LastIndex(param, ".")+1:], "[")
	switch {
	case strings.HasPrefix(param, "card."):
		return apierror.InvalidCard
	case field == "amount" || field == "amount_gte" || field == "amount_lte":
		return apierror.InvalidAmount
	case field == "currency":
		return apierror.InvalidCurrency
	}
	return apierror.InvalidRequest
}

// documentedBounds lists every bound of doc on a parameter or a request body field.
func documentedBounds(doc *openapi3.T) []documentedBound {
	var bounds []documentedBound
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(path)
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			operation := item.GetOperation(method)
			for _, p := range slices.Concat(item.Parameters, operation.Parameters) {
				param := p.Value
				schemaBounds(param.Schema.Value, nil, func(b documentedBound) {
					b.method, b.path, b.in, b.name = method, path, param.In, param.Name
					bounds = append(bounds, b)
				})
			}
			if operation.RequestBody == nil {
				continue
			}
			if media := operation.RequestBody.Value.Content.Get("application/json"); media != nil {
				schemaBounds(media.Schema.Value, nil, func(b documentedBound) {
					b.method, b.path, b.in = method, path, "body"
					bounds = append(bounds, b)
				})
			}
		}
	}
	return bounds
}

// schemaBounds finds the bounds of schema and of what it holds, at.
func schemaBounds(schema *openapi3.Schema, at []any, found func(documentedBound)) {
	bound := func(kind string, limit float64) {
		found(documentedBound{at: slices.Clone(at), kind: kind, limit: limit, exclusive: kind == "minimum" && schema.ExclusiveMin, schema: schema})
	}
	if schema.MaxLength != nil {
		bound("maxLength", float64(*schema.MaxLength))
	}
	if schema.MaxItems != nil {
		bound("maxItems", float64(*schema.MaxItems))
	}
	if schema.MaxProps != nil {
		bound("maxProperties", float64(*schema.MaxProps))
	}
	if schema.Max != nil {
		bound("maximum", *schema.Max)
	}
	if schema.Min != nil {
		bound("minimum", *schema.Min)
	}
	for _, each := range slices.Concat(schema.AllOf, schema.OneOf, schema.AnyOf) {
		schemaBounds(each.Value, at, found)
	}
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		schemaBounds(schema.Properties[name].Value, append(slices.Clone(at), name), found)
	}
	if schema.Items != nil {
		schemaBounds(schema.Items.Value, append(slices.Clone(at), 0), found)
	}
	if more := schema.AdditionalProperties.Schema; more != nil {
		schemaBounds(more.Value, append(slices.Clone(at), "*"), found)
	}
}

// past is a value just past b, made from the valid value it replaces, if any.
func (b documentedBound) past(valid any) any {
	n := int(b.limit)
	switch b.kind {
	case "maxLength":
		// The valid value, lengthened: 10.00 becomes 10.000..., still an amount of ten, and an
		// email still an email; only its length is wrong.
		text, _ := valid.(string)
		if len(text) > n {
			text = ""
		}
		return text + strings.Repeat("0", n+1-len(text))
	case "maxItems":
		item := sampleOf(b.schema.Items.Value)
		if list, _ := valid.([]any); len(list) > 0 {
			item = list[0]
		}
		items := make([]any, n+1)
		for i := range items {
			items[i] = item
		}
		return items
	case "maxProperties":
		object := map[string]any{}
		for i := range n + 1 {
			object["k"+strconv.Itoa(i)] = sampleOf(b.schema.AdditionalProperties.Schema.Value)
		}
		return object
	case "maximum":
		return b.limit + 1
	default: // minimum
		if b.exclusive {
			return b.limit
		}
		return b.limit - 1
	}
}

// queryText writes a value of past as a query parameter's.
func queryText(v any) string {
	if n, ok := v.(float64); ok {
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// sampleOf is a value of schema, for the items of a list or the values of a map made too long.
func sampleOf(schema *openapi3.Schema) any {
	switch {
	case len(schema.Enum) > 0:
		return schema.Enum[0]
	case schema.Example != nil:
		return schema.Example
	case schema.Type.Is("object"):
		return map[string]any{}
	default:
		return "0"
	}
}

// placed returns body, a decoded JSON value, with value at (creating what leads there), and the
// place at with its map keys chosen ("*" stands for the first key the map has, or k).
func placed(body any, at []any, value any) (any, []any) {
	if len(at) == 0 {
		return value, nil
	}
	switch step := at[0].(type) {
	case int:
		list, _ := body.([]any)
		list = slices.Clone(list)
		if len(list) == 0 {
			list = []any{nil}
		}
		var rest []any
		list[0], rest = placed(list[0], at[1:], value)
		return list, append([]any{0}, rest...)
	default:
		object, _ := body.(map[string]any)
		object = maps.Clone(object)
		if object == nil {
			object = map[string]any{}
		}
		key := step.(string)
		if key == "*" {
			key = "k"
			if keys := slices.Sorted(maps.Keys(object)); len(keys) > 0 {
				key = keys[0]
			}
		}
		var rest []any
		object[key], rest = placed(object[key], at[1:], value)
		return object, append([]any{key}, rest...)
	}
}

// valueAt is the decoded JSON value at, "*" taken as placed takes it; nil where there is none.
func valueAt(body any, at []any) any {
	for _, step := range at {
		switch step := step.(type) {
		case int:
			list, _ := body.([]any)
			if len(list) == 0 {
				return nil
			}
			body = list[0]
		default:
			object, _ := body.(map[string]any)
			key := step.(string)
			if key == "*" {
				if keys := slices.Sorted(maps.Keys(object)); len(keys) > 0 {
					key = keys[0]
				}
			}
			body = object[key]
		}
	}
	return body
}

// TestOpenAPIBoundsAreEnforced sends, for every bound the OpenAPI document states on a
// parameter or a request body field, a valid request of the operation with that one input just
// past its bound: each is refused 400, with the input named in param, and writes nothing to the
// database. The bounds are read from the document served, so a bound added to it is tried here.
func TestOpenAPIBoundsAreEnforced(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		s := newFuzzServer(t, db)
		doc := loadAPIContract(t, s.env).doc
		bounds := documentedBounds(doc)
		if len(bounds) < 100 {
			t.Fatalf("%d bounds in the document: the walk is missing some", len(bounds))
		}
		// The other parameters a request needs to reach the bound: an amount filter needs its
		// currency.
		queries := map[string]url.Values{"GET /api/v1/payments": {"currency": {"USD"}}}
		for _, b := range bounds {
			token := s.token(t)
			route := apiRoute{method: b.method, path: b.path}
			query := url.Values{}
			for name, values := range queries[b.method+" "+b.path] {
				query[name] = slices.Clone(values)
			}
			var headers []string
			var body any
			// The configuration as it is now: were a change let through, the next would be stale.
			s.restConfig = s.env.readConfig(token)
			if example, ok := s.restExamples()[b.method+" "+b.path]; ok {
				filled, _ := s.prepare(example, token)
				if err := json.Unmarshal([]byte(filled), &body); err != nil {
					t.Fatalf("the example of %s %s: %v", b.method, b.path, err)
				}
			}
			path := s.path(route)
			switch b.in {
			case "body":
				if body == nil {
					t.Errorf("%s: no valid body of %s %s to put past its bound", b, b.method, b.path)
					continue
				}
				body, b.at = placed(body, b.at, b.past(valueAt(body, b.at)))
			case "query":
				query.Set(b.name, queryText(b.past(query.Get(b.name))))
			case "header":
				headers = []string{b.name, queryText(b.past(nil))}
			case "path":
				segments := strings.Split(b.path, "/")
				valid := strings.Split(path, "/")
				i := slices.Index(segments, "{"+b.name+"}")
				valid[i] = queryText(b.past(valid[i]))
				path = strings.Join(valid, "/")
			}
			if len(query) > 0 {
				path += "?" + query.Encode()
			}
			credential := token
			if b.path == "/api/v1/auth/login" || b.path == "/api/v1/auth/refresh" {
				credential = ""
			}
			// The sandboxes' webhooks, which come in on their own, are in before each reading, so
			// that what changes between the two is the request's doing.
			s.env.sandboxWebhooksDelivered()
			before := databaseRows(t, db)
			r := s.env.request(b.method, path, credential, body, headers...)
			code, param := r.errorCode()
			if r.status != http.StatusBadRequest || code != string(b.refusedWith()) || param != b.param() {
				t.Errorf("%s: answered %d %s on %q, want 400 %s on %q: %.300s", b, r.status, code, param, b.refusedWith(), b.param(), r.raw)
			}
			s.env.sandboxWebhooksDelivered()
			if changed := changedTables(before, databaseRows(t, db)); len(changed) > 0 {
				t.Errorf("%s: refused, yet it wrote to %s", b, strings.Join(changed, ", "))
			}
		}
		t.Logf("%d bounds of the document tried", len(bounds))
	})
}

// databaseRows reads every row of every table of db, as text by table.
func databaseRows(t *testing.T, db *database.DB) map[string]string {
	t.Helper()
	tablesQuery := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if db.Dialect == dialect.Postgres {
		tablesQuery = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	tables, err := queryStrings(db.SQL, tablesQuery)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tables, "payments") {
		t.Fatalf("the tables read are %v: not the database's", tables)
	}
	rows := map[string]string{}
	for _, table := range tables {
		all, err := db.SQL.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		columns, _ := all.Columns()
		var text strings.Builder
		for all.Next() {
			values := make([]any, len(columns))
			pointers := make([]any, len(columns))
			for i := range values {
				pointers[i] = &values[i]
			}
			if err := all.Scan(pointers...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&text, "%v\n", values)
		}
		if err := all.Err(); err != nil {
			t.Fatal(err)
		}
		all.Close()
		// Rows come in no set order; the same rows read twice give the same lines.
		lines := strings.Split(text.String(), "\n")
		slices.Sort(lines)
		rows[table] = strings.Join(lines, "\n")
	}
	return rows
}

func queryStrings(db *sql.DB, query string) ([]string, error) {
	rows, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var values []string
	for rows.Next() {
		var value string
		if err := rows.Scan(&value); err != nil {
			return nil, err
		}
		values = append(values, value)
	}
	return values, rows.Err()
}

// changedTables lists the tables whose rows differ between two readings.
func changedTables(before, after map[string]string) []string {
	var changed []string
	for table, rows := range after {
		if before[table] != rows {
			changed = append(changed, table)
		}
	}
	slices.Sort(changed)
	return changed
}

// TestOpenAPIBoundsAreTheServers: every bound the OpenAPI document states on what a client sends
// is the constant the server checks it with, so the document neither promises more than the
// server takes nor less. A bound added to the document needs its constant here.
func TestOpenAPIBoundsAreTheServers(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	doc := loadAPIContract(t, env).doc
	providers := float64(len(providerNames()))
	// By "in param kind", or "METHOD path in param kind" where the same name is bounded otherwise
	// elsewhere. Numbers written out are bounds of what the values are: months, four-digit
	// years, three-letter currency codes, four-digit security codes, rates between 0 and 1.
	constants := map[string]float64{
		"header Idempotency-Key maxLength":  idempotency.MaxKeyLength,
		"header Paygate-Merchant maxLength": prefixid.MaxLength,
		"path id maxLength":                 prefixid.MaxLength,
		"path delivery maxLength":           prefixid.MaxLength,

		"query limit maximum": paging.MaxPageSize,
		"GET /api/v1/admin/config/history query limit maximum": settingsstore.MaxHistoryPage,
		"query limit minimum":            1,
		"query starting_after maxLength": prefixid.MaxLength,
		"query ending_before maxLength":  prefixid.MaxLength,
		"query created_gte maxLength":    rest.MaxTimeText,
		"query created_lte maxLength":    rest.MaxTimeText,
		"query currency maxLength":       3,
		"query customer_email maxLength": paging.MaxFilterText,
		"query amount_gte maxLength":     money.MaxText,
		"query amount_lte maxLength":     money.MaxText,
		"query type maxLength":           paging.MaxFilterText,
		"query before maximum":           settings.MaxVersion,
		"query before minimum":           1,

		"body email maxLength":            auth.MaxEmailLength,
		"body password maxLength":         auth.MaxPasswordBytes,
		"body current_password maxLength": auth.MaxPasswordBytes,
		"body new_password maxLength":     auth.MaxPasswordBytes,
		"body refresh_token maxLength":    auth.MaxTokenLength,
		"body token maxLength":            auth.MaxTokenLength,
		"body scopes maxItems":            float64(len(auth.AllScopes())),
		"body expires_at maxLength":       rest.MaxTimeText,

		"POST /api/v1/merchants body name maxLength":       auth.MaxMerchantNameBytes,
		"PATCH /api/v1/merchants/{id} body name maxLength": auth.MaxMerchantNameBytes,
		"POST /api/v1/api-keys body name maxLength":        auth.MaxAPIKeyName,

		"body amount maxLength":                                           money.MaxText,
		"body currency maxLength":                                         3,
		"body customer.email maxLength":                                   auth.MaxEmailLength,
		"body customer.name maxLength":                                    payment.MaxCustomerName,
		"body card.number maxLength":                                      card.MaxNumberText,
		"body card.cvc maxLength":                                         4,
		"body card.exp_month minimum":                                     1,
		"body card.exp_month maximum":                                     12,
		"body card.exp_year minimum":                                      1000,
		"body card.exp_year maximum":                                      9999,
		"body metadata maxProperties":                                     payment.MaxMetadataKeys,
		"body metadata.* maxLength":                                       payment.MaxMetadataValue,
		"body return_url maxLength":                                       payment.MaxReturnURL,
		"body reason maxLength":                                           payment.MaxRefundReason,
		"POST /api/v1/payments body description maxLength":                payment.MaxDescription,
		"POST /api/v1/webhook-endpoints body description maxLength":       outbound.MaxDescription,
		"PATCH /api/v1/webhook-endpoints/{id} body description maxLength": outbound.MaxDescription,

		"body version minimum":                              1,
		"body version maximum":                              settings.MaxVersion,
		"body routing.rules maxItems":                       settings.MaxRules,
		"body routing.rules[0].name maxLength":              settings.MaxRuleName,
		"body routing.rules[0].currency maxItems":           settings.MaxConditionValues,
		"body routing.rules[0].currency[0] maxLength":       3,
		"body routing.rules[0].brand maxItems":              settings.MaxConditionValues,
		"body routing.rules[0].brand[0] maxLength":          settings.MaxBrand,
		"body routing.rules[0].merchants maxItems":          settings.MaxConditionValues,
		"body routing.rules[0].merchants[0] maxLength":      settings.MaxMerchantID,
		"body routing.rules[0].amount_gte maxLength":        money.MaxText,
		"body routing.rules[0].amount_lte maxLength":        money.MaxText,
		"body routing.rules[0].providers maxItems":          providers,
		"body routing.rules[0].providers[0].weight minimum": 1,
		"body routing.rules[0].providers[0].weight maximum": settings.MaxWeight,
		"body routing.fallback maxItems":                    providers,
		"body providers.*.timeout_ms minimum":               settings.MinTimeoutMS,
		"body providers.*.timeout_ms maximum":               settings.MaxTimeoutMS,
		"body circuit_breaker.window_s minimum":             1,
		"body circuit_breaker.window_s maximum":             settings.MaxWindowS,
		"body circuit_breaker.min_requests minimum":         1,
		"body circuit_breaker.min_requests maximum":         settings.MaxCount,
		"body circuit_breaker.error_rate minimum":           0,
		"body circuit_breaker.error_rate maximum":           1,
		"body circuit_breaker.open_s minimum":               1,
		"body circuit_breaker.open_s maximum":               settings.MaxWindowS,
		"body webhook_retry.base_s minimum":                 1,
		"body webhook_retry.base_s maximum":                 settings.MaxWindowS,
		"body webhook_retry.factor minimum":                 1,
		"body webhook_retry.factor maximum":                 settings.MaxRetryFactor,
		"body webhook_retry.max_attempts minimum":           1,
		"body webhook_retry.max_attempts maximum":           settings.MaxRetryAttempts,
		"body rate_limits.per_second minimum":               1,
		"body rate_limits.per_second maximum":               settings.MaxCount,
		"body rate_limits.burst minimum":                    1,
		"body rate_limits.burst maximum":                    settings.MaxCount,
		"body rate_limits.login_per_minute minimum":         1,
		"body rate_limits.login_per_minute maximum":         settings.MaxLoginsPerMinute,
		"body alerts.provider_error_rate minimum":           0,
		"body alerts.provider_error_rate maximum":           1,
		"body alerts.refund_share minimum":                  0,
		"body alerts.refund_share maximum":                  1,
		"body capture.window_h minimum":                     1,
		"body capture.window_h maximum":                     settings.MaxCaptureWindowH,
		"body updated_at maxLength":                         rest.MaxTimeText,
		"body updated_by maxLength":                         prefixid.MaxLength,

		"query return_secret maxLength": payment.MaxReturnSecret,

		"body payment_id maxLength":  prefixid.MaxLength,
		"body type maxLength":        inbound.MaxSimulationType,
		"body endpoint_id maxLength": prefixid.MaxLength,
		"body url maxLength":         outbound.MaxURL,
		"body secret maxLength":      float64(outbound.MaxSigningSecret),
		"body events maxItems":       float64(len(event.Types)),
	}
	used := map[string]bool{}
	for _, b := range documentedBounds(doc) {
		key := fmt.Sprintf("%s %s %s", b.in, b.param(), b.kind)
		want, ok := constants[b.method+" "+b.path+" "+key]
		if ok {
			used[b.method+" "+b.path+" "+key] = true
		} else if want, ok = constants[key]; ok {
			used[key] = true
		}
		switch {
		case !ok:
			t.Errorf("%s: no constant of the server's is named for it here", b)
		case b.limit != want:
			t.Errorf("%s: the server's bound is %v", b, want)
		}
	}
	for key := range constants {
		if !used[key] {
			t.Errorf("%s: the document states no such bound", key)
		}
	}
}

// TestGraphQLHoldsTheSameBounds: the bounds the OpenAPI document states are the domain's, so
// GraphQL's twins of the REST operations refuse the same inputs past them, naming the field as
// GraphQL spells it.
func TestGraphQLHoldsTheSameBounds(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	admin := env.tokenFor("admin")
	payment := env.succeededPayment(admin, "10.00", "USD", "stripe")
	past := func(n int) string { return strings.Repeat("0", n+1) }
	withPayment := func(change func(in map[string]any)) map[string]any {
		in := gqlPaymentInput("10.00", "USD", "4242424242424242")
		change(in)
		return in
	}
	config := gqlConfigInput(env.app.services.configs.Current())
	config["version"] = settings.MaxVersion + 1
	for _, tc := range []struct {
		name, document string
		variables      map[string]any
		code           apierror.Code
		param          string
	}{
		{"login email", `mutation($in: LoginInput!) { login(input: $in) { accessToken } }`,
			map[string]any{"in": map[string]any{"email": past(auth.MaxEmailLength) + "@example.com", "password": "x"}}, apierror.InvalidRequest, "email"},
		{"login password", `mutation($in: LoginInput!) { login(input: $in) { accessToken } }`,
			map[string]any{"in": map[string]any{"email": "a@example.com", "password": past(auth.MaxPasswordBytes)}}, apierror.InvalidRequest, "password"},
		{"refresh token", `mutation($t: String!) { refreshToken(refreshToken: $t) { accessToken } }`,
			map[string]any{"t": past(auth.MaxTokenLength)}, apierror.InvalidRequest, "refreshToken"},
		{"revoked token", `mutation($t: String!) { revokeToken(token: $t) { revoked } }`,
			map[string]any{"t": past(auth.MaxTokenLength)}, apierror.InvalidRequest, "token"},
		{"user email", `mutation($in: CreateUserInput!) { createUser(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"email": past(auth.MaxEmailLength), "password": testPassword, "role": "viewer"}}, apierror.InvalidRequest, "email"},
		{"scopes", `mutation($in: CreateAPIKeyInput!) { createAPIKey(input: $in) { key } }`,
			map[string]any{"in": map[string]any{"name": "k", "scopes": slices.Repeat([]string{"payments:read"}, len(auth.AllScopes())+1)}}, apierror.InvalidRequest, "scopes"},
		{"amount", createPaymentMutation, map[string]any{"in": withPayment(func(in map[string]any) { in["amount"] = "10." + past(money.MaxText-3) })},
			apierror.InvalidAmount, "amount"},
		{"card number", createPaymentMutation, map[string]any{"in": withPayment(func(in map[string]any) {
			in["card"].(map[string]any)["number"] = "4242424242424242" + strings.Repeat(" ", card.MaxNumberText)
		})}, apierror.InvalidCard, "card.number"},
		{"customer email", createPaymentMutation, map[string]any{"in": withPayment(func(in map[string]any) {
			in["customer"] = map[string]any{"email": past(auth.MaxEmailLength) + "@example.com"}
		})}, apierror.InvalidRequest, "customer.email"},
		{"simulated type", `mutation($in: SimulateEventInput!) { simulateEvent(input: $in) { type } }`,
			map[string]any{"in": map[string]any{"paymentId": payment, "type": past(inbound.MaxSimulationType)}}, apierror.InvalidRequest, "type"},
		{"simulated payment", `mutation($in: SimulateEventInput!) { simulateEvent(input: $in) { type } }`,
			map[string]any{"in": map[string]any{"paymentId": past(prefixid.MaxLength), "type": "refund"}}, apierror.InvalidRequest, "paymentId"},
		{"endpoint events", `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { secret } }`,
			map[string]any{"in": map[string]any{"url": "https://example.com/hooks", "events": slices.Repeat([]string{"payment.succeeded"}, len(event.Types)+1)}},
			apierror.InvalidRequest, "events"},
		{"configuration version", `mutation($in: ConfigInput!) { updateConfig(input: $in) { version } }`,
			map[string]any{"in": config}, apierror.InvalidRequest, "version"},
	} {
		data, errs := env.graphql(admin, tc.document, tc.variables)
		if len(errs) != 1 || errs[0].code() != string(tc.code) || str(errs[0].Extensions["param"]) != tc.param {
			t.Errorf("%s: errors %+v, want %s on %q", tc.name, errs, tc.code, tc.param)
		}
		for field, value := range data {
			if value != nil {
				t.Errorf("%s: %s answered %v", tc.name, field, value)
			}
		}
	}
	// The merchant a request acts for is bounded as on REST, before anything is looked up.
	_, errs := env.graphql(admin, `{ payments(first: 1) { totalCount } }`, nil, "Paygate-Merchant", past(prefixid.MaxLength))
	if len(errs) != 1 || errs[0].code() != string(apierror.InvalidRequest) || str(errs[0].Extensions["param"]) != "Paygate-Merchant" {
		t.Errorf("a Paygate-Merchant of %d characters: %+v", prefixid.MaxLength+1, errs)
	}
}
