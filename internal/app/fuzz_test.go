package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/web"
)

// The fuzz targets send what anyone may send to every operation of both surfaces: REST bodies
// (FuzzRESTBodies), GraphQL variables (FuzzGraphQLVariables) and query strings
// (FuzzQueryParameters). The operation is picked by the input's first value, modulo the number of
// operations, so one target covers them all. Whatever is sent, the server answers without a 5xx
// (a provider's 502 provider_unavailable aside, where the document has it), without a panic and
// within fuzzAnswerWithin, and every answer that is not a success is JSON in the surface's error
// envelope. CI fuzzes each briefly (.ci/run); `go test ./internal/app` runs their seeds.
//
// One server per fuzz process, on SQLite: the fuzzing engine runs the target in several worker
// processes, each building its own. The seeds therefore name what the server holds by
// placeholders ({{payment}}, {{endpoint}}, ...), which each process replaces with its own ids; a
// mutated input may move or copy them.
//
// What an input may do that would make the inputs after it fail, or slow, or leave the machine,
// is pinned rather than skipped, so that every operation is fuzzed:
//   - logging out, or revoking the caller's token: each input is sent with a token of its own;
//   - changing the admin's password: the admin has none (changePassword answers 401
//     invalid_credentials), and resetting it, disabling the admin or the default merchant names
//     a protected id, which is not sent; the REST routes' users and merchants are others, made
//     for the fuzzing;
//   - changing the runtime configuration (rate limits, routing, providers, circuit breaker):
//     the server keeps the tests' fixed rate limits whatever the configuration says, and the
//     configuration is put back after each input that changed it;
//   - test webhooks and retried deliveries, to whatever URL the input says: dialled to a
//     receiver on 127.0.0.1;
//   - the shopper's return, which redirects to the payment's return_url: not followed.

// fuzzAnswerWithin bounds an answer: a request still unanswered is a hang.
const fuzzAnswerWithin = 20 * time.Second

// fuzzServer is the server the targets of one process fuzz, with what it holds.
type fuzzServer struct {
	env *testEnv
	// adminID is a platform admin's user: every input is sent with an access token of its own,
	// issued for it, so that logging out or revoking the token sent ends that token alone.
	adminID string
	// ids replaces the placeholders of an input with what this server holds.
	ids *strings.Replacer
	// paths are the ids the REST routes' {id} and {delivery} stand for, by route.
	paths map[string]string
	// protected are ids whose changes would leave the fuzzing blind: the admin (disabled, or its
	// password reset, every later input is 401) and the default merchant it belongs to
	// (disabled, every later input is 403). An input naming one is not sent.
	protected []string
	// baseline is the runtime configuration the server started with, put back after an input
	// changes it (pinned: a change of the routing, the providers or the circuit breaker would
	// make what follows depend on what came before).
	baseline settings.Document
	// version is the configuration's version after the last input: another is an input's change.
	version int
	// restConfig is GET /api/v1/admin/config's document, PUT's valid body.
	restConfig map[string]any
	// openapi is the OpenAPI document, for the request bodies' schemas and the query parameters.
	openapi map[string]any
}

// newFuzzServer builds the server over db and what the operations act on: a payment of each kind,
// a refund, a user, a merchant, an API key, webhook endpoints with a delivery, an event, a webhook
// event and an alert. TestOpenAPIBoundsAreEnforced builds one too, for its valid requests.
func newFuzzServer(f testing.TB, db *database.DB) *fuzzServer {
	f.Helper()
	env := newTestEnv(f, db)
	// Out of the way, as in every test: an input answered 429 would test the limiter alone.
	env.app.fixedRateLimits.Store(&settings.RateLimits{PerSecond: 1_000_000, Burst: 1_000_000, LoginPerMinute: 1_000_000})
	// Every request goes to this server on 127.0.0.1, and no redirect is followed: the shopper's
	// return answers 303 to the payment's return_url, which is anyone's.
	env.client = &http.Client{
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4},
		Timeout:       fuzzAnswerWithin,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	// Test webhooks and retried deliveries go to a URL the input names: every try is dialled to a
	// receiver on 127.0.0.1 instead, whatever the URL says, so nothing leaves the machine.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	f.Cleanup(sink.Close)
	var dialer net.Dialer
	env.app.services.deliveries.Sender = outbound.NewSenderOver(&http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", sink.Listener.Addr().String())
		},
		DisableKeepAlives: true,
	}, 2*time.Second)

	returnSecrets := env.returnSecrets()
	token, adminID := env.adminOf()
	if err := env.app.services.auth.Directory().Load(context.Background()); err != nil {
		f.Fatal(err)
	}
	s := &fuzzServer{env: env, adminID: adminID, protected: []string{adminID, tenant.DefaultMerchant}}
	must := func(r response, want int, what string) map[string]any {
		f.Helper()
		if r.status != want {
			f.Fatalf("%s = %d %.300s", what, r.status, r.raw)
		}
		return r.data()
	}
	post := func(path string, body any, want int) map[string]any {
		f.Helper()
		return must(env.request(http.MethodPost, path, token, body), want, "POST "+path)
	}
	manual := paymentBody("40.00", "USD", "4242424242424242")
	manual["capture_method"] = "manual"
	authenticating := paymentBody("10.00", "USD", provider.AuthenticateThenApprove)
	authenticating["return_url"] = "http://127.0.0.1:9/back"
	loginEmail := env.userWith("viewer")
	_, refreshToken := env.login(loginEmail)
	ids := map[string]string{
		"payment":      env.succeededPayment(token, "500.00", "USD", "stripe"),
		"simulated":    env.succeededPayment(token, "20.00", "USD", "stripe"),
		"capturable":   str(post("/api/v1/payments", manual, http.StatusCreated)["id"]),
		"cancelable":   str(post("/api/v1/payments", manual, http.StatusCreated)["id"]),
		"returning":    str(post("/api/v1/payments", authenticating, http.StatusCreated)["id"]),
		"user":         str(post("/api/v1/users", map[string]any{"email": "fuzzed@example.com", "password": testPassword, "role": "viewer"}, http.StatusCreated)["id"]),
		"merchant":     str(post("/api/v1/merchants", map[string]any{"name": "Fuzzed Shop"}, http.StatusCreated)["id"]),
		"apikey":       str(post("/api/v1/api-keys", map[string]any{"name": "fuzzed", "scopes": []string{"payments:read"}}, http.StatusCreated)["id"]),
		"endpoint":     str(post("/api/v1/webhook-endpoints", map[string]any{"url": sink.URL + "/events", "events": []string{"*"}}, http.StatusCreated)["id"]),
		"doomed":       str(post("/api/v1/webhook-endpoints", map[string]any{"url": sink.URL + "/doomed", "events": []string{"*"}}, http.StatusCreated)["id"]),
		"email":        loginEmail,
		"password":     testPassword,
		"refresh":      refreshToken,
		"expyear":      cardExpYearText,
		"sink":         sink.URL,
		"webhookevent": env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: time.Now().UTC()}).ID,
	}
	ids["returnsecret"] = returnSecrets(ids["returning"])
	ids["refund"] = str(post("/api/v1/payments/"+ids["payment"]+"/refunds", map[string]any{"amount": "1.00"}, http.StatusCreated)["id"])
	ids["delivery"] = str(post("/api/v1/webhooks/test", map[string]any{"endpoint_id": ids["endpoint"]}, http.StatusOK)["delivery_id"])
	events := env.request(http.MethodGet, "/api/v1/events?limit=1", token, nil)
	ids["event"] = str(get(events.body, "data", 0, "id"))
	alert, err := env.db.Ent.Alert.Create().SetRule("fuzzing").SetSubject("fuzzing").SetSeverity(state.AlertWarning).
		SetMessage("raised for the fuzz targets").Save(databasetest.AsMerchant())
	if err != nil {
		f.Fatal(err)
	}
	ids["alert"] = alert.ID
	cursor := env.mustGraphQL(token, `{ payments(first: 1) { edges { cursor } } }`, nil)
	ids["cursor"] = str(get(cursor, "payments", "edges", 0, "cursor"))
	var pairs []string
	for name, id := range ids {
		if id == "" {
			f.Fatalf("no %s to fuzz with", name)
		}
		pairs = append(pairs, "{{"+name+"}}", id)
	}
	s.ids = strings.NewReplacer(pairs...)
	s.paths = map[string]string{
		"/api/v1/merchants/{id}": ids["merchant"], "/api/v1/users/{id}": ids["user"], "/api/v1/users/{id}/password": ids["user"],
		"/api/v1/api-keys/{id}": ids["apikey"], "/api/v1/payments/{id}": ids["payment"], "/api/v1/payments/{id}/refunds": ids["payment"],
		"/api/v1/payments/{id}/capture": ids["capturable"], "/api/v1/payments/{id}/cancel": ids["cancelable"],
		"/api/v1/payments/{id}/return": ids["returning"], "/api/v1/monitoring/alerts/{id}/acknowledge": ids["alert"],
		"/api/v1/monitoring/alerts/{id}/resolve": ids["alert"], "/api/v1/webhooks/logs/{id}": ids["webhookevent"],
		"/api/v1/webhooks/logs/{id}/retry": ids["webhookevent"], "/api/v1/events/{id}": ids["event"],
		"/api/v1/webhook-endpoints/{id}": ids["endpoint"], "/api/v1/webhook-endpoints/{id}/rotate-secret": ids["endpoint"],
		"/api/v1/webhook-endpoints/{id}/deliveries": ids["endpoint"], "/api/v1/webhook-endpoints/{id}/deliveries/{delivery}": ids["endpoint"],
		"/api/v1/webhook-endpoints/{id}/deliveries/{delivery}/retry": ids["endpoint"],
	}
	s.paths["{delivery}"] = ids["delivery"]

	s.baseline = env.app.services.configs.Current()
	s.version = s.baseline.Version
	s.restConfig = env.readConfig(token)

	raw, err := os.ReadFile("../../graph/rest/openapi.json")
	if err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s.openapi); err != nil {
		f.Fatal(err)
	}
	return s
}

// path is a route's path with its ids filled in.
func (s *fuzzServer) path(route apiRoute) string {
	path := route.path
	if id, ok := s.paths[route.path]; ok {
		path = strings.Replace(path, "{id}", id, 1)
	}
	return strings.Replace(path, "{delivery}", s.paths["{delivery}"], 1)
}

// token is a new access token of the admin, for one input.
func (s *fuzzServer) token(t *testing.T) string {
	token, err := s.env.app.services.auth.Tokens().Issue(s.adminID, "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// prepare fills in an input's placeholders; it reports false for an input naming a protected id,
// which is not sent.
func (s *fuzzServer) prepare(input string, token string) (string, bool) {
	input = strings.ReplaceAll(s.ids.Replace(input), "{{self}}", token)
	for _, id := range s.protected {
		if strings.Contains(input, id) {
			return "", false
		}
	}
	return input, true
}

// pin puts the runtime configuration back as it was when an input changed it.
func (s *fuzzServer) pin(t *testing.T) {
	configs := s.env.app.services.configs
	if current := configs.Current().Version; current != s.version {
		doc := s.baseline
		doc.Version = current
		restored, err := configs.Update(context.Background(), doc, s.adminID)
		if err != nil {
			t.Fatalf("putting the configuration back: %v", err)
		}
		s.version = restored.Version
	}
}

// checkREST fails the input when the answer breaks the property: no 5xx but a documented 502
// provider_unavailable, no hang, and every answer that is not a success JSON in the REST error
// envelope, with the status of its code. A refusal of the fresh admin token means the fuzzing
// has lost its credential, and fails too.
func checkREST(t *testing.T, route apiRoute, sent string, r response, err error) {
	t.Helper()
	what := fmt.Sprintf("%s %s with %q", route.method, route.path, truncate(sent, 2000))
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	code, _ := r.errorCode()
	documented502 := r.status == http.StatusBadGateway && code == string(apierror.ProviderUnavailable) && strings.HasPrefix(route.path, "/api/v1/payments")
	if r.status >= 500 && !documented502 {
		t.Fatalf("%s: answered %d: %.1000s", what, r.status, r.raw)
	}
	mediaType := r.header.Get("Content-Type")
	switch {
	case r.status < 300:
		if r.body == nil || r.body["success"] != true {
			t.Fatalf("%s: answered %d without the success envelope (%s): %.1000s", what, r.status, mediaType, r.raw)
		}
	case r.status < 400:
		if route.op != auth.ShopperReturn || r.status != http.StatusSeeOther {
			t.Fatalf("%s: answered %d: %.1000s", what, r.status, r.raw)
		}
	default:
		message, _ := get(r.body, "error", "message").(string)
		if r.body == nil || r.body["success"] != false || code == "" || message == "" {
			t.Fatalf("%s: answered %d without the error envelope (%s): %.1000s", what, r.status, mediaType, r.raw)
		}
		if want := web.Status(apierror.Code(code)); want != r.status {
			t.Fatalf("%s: answered %d with code %s, whose status is %d: %.1000s", what, r.status, code, want, r.raw)
		}
		if lostCredential(route.op, code) {
			t.Fatalf("%s: the admin's fresh token was refused (%s): something the input did disabled the admin or its merchant: %.1000s", what, code, r.raw)
		}
	}
}

// lostCredential reports whether code, answered to op with a fresh admin token, says the token no
// longer works.
func lostCredential(op auth.Operation, code string) bool {
	switch apierror.Code(code) {
	case apierror.Unauthenticated, apierror.TokenInvalid, apierror.TokenExpired, apierror.TokenRevoked:
		return !op.Public
	case apierror.MerchantUnavailable:
		return true
	}
	return false
}

// checkGraphQL fails the input when the answer breaks the property: no 5xx, no hang, JSON
// always, errors in GraphQL's shape with a code, none of them internal_error.
func checkGraphQL(t *testing.T, field string, sent string, r response, err error) {
	t.Helper()
	what := fmt.Sprintf("%s with %q", field, truncate(sent, 2000))
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	if r.status >= 500 {
		t.Fatalf("%s: answered %d: %.1000s", what, r.status, r.raw)
	}
	if r.body == nil {
		t.Fatalf("%s: answered %d, not JSON (%s): %.1000s", what, r.status, r.header.Get("Content-Type"), r.raw)
	}
	errs, _ := r.body["errors"].([]any)
	_, hasData := r.body["data"]
	if r.status != http.StatusOK && len(errs) == 0 || !hasData && len(errs) == 0 {
		t.Fatalf("%s: answered %d without errors or data: %.1000s", what, r.status, r.raw)
	}
	op, named := auth.OperationNamed(field)
	for _, e := range errs {
		message, _ := get(e, "message").(string)
		code, _ := get(e, "extensions", "code").(string)
		if message == "" || code == "" {
			t.Fatalf("%s: answered %d with an error without a message or code: %.1000s", what, r.status, r.raw)
		}
		if code == string(apierror.Internal) {
			t.Fatalf("%s: answered %d with internal_error: %.1000s", what, r.status, r.raw)
		}
		if named && lostCredential(op, code) {
			t.Fatalf("%s: the admin's fresh token was refused (%s): something the input did disabled the admin or its merchant: %.1000s", what, code, r.raw)
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// FuzzRESTBodies sends fuzzed bytes as the JSON body of every REST operation that takes one
// (every POST, PUT and PATCH of the route table), as a platform admin, so that the decoder is
// reached whatever the operation's scope.
func FuzzRESTBodies(f *testing.F) {
	s := newFuzzServer(f, databasetest.SQLite(f))
	var routes []apiRoute
	for _, route := range apiRoutes {
		if route.method == http.MethodPost || route.method == http.MethodPut || route.method == http.MethodPatch {
			routes = append(routes, route)
		}
	}
	examples := s.restExamples()
	for i, route := range routes {
		example, ok := examples[route.method+" "+route.path]
		if !ok {
			f.Logf("%s %s has no example body here: seeded with {} alone", route.method, route.path)
			example = "{}"
		}
		for _, seed := range hostileBodies(i, example, s.nulBodies(route)...) {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		route := routes[int(op)%len(routes)]
		token := s.token(t)
		sent, ok := s.prepare(string(body), token)
		if !ok {
			return
		}
		r, err := s.env.send(route.method, s.path(route), token, sent)
		checkREST(t, route, sent, r, err)
		s.pin(t)
	})
}

// restExamples are a valid body of each operation, by "METHOD path".
func (s *fuzzServer) restExamples() map[string]string {
	payment := mustJSON(s.env.t, paymentBody("10.00", "USD", "4242424242424242"))
	return map[string]string{
		"POST /api/v1/auth/login":                                         `{"email":"{{email}}","password":"{{password}}"}`,
		"POST /api/v1/auth/refresh":                                       `{"refresh_token":"{{refresh}}"}`,
		"POST /api/v1/auth/logout":                                        `{"refresh_token":null}`,
		"POST /api/v1/auth/revoke":                                        `{"token":"{{self}}"}`,
		"POST /api/v1/auth/password":                                      `{"current_password":"not the password","new_password":"a new password for the fuzzing"}`,
		"POST /api/v1/merchants":                                          `{"name":"Another Shop"}`,
		"PATCH /api/v1/merchants/{id}":                                    `{"name":"Renamed Shop","status":"active"}`,
		"POST /api/v1/users":                                              `{"email":"new@example.com","password":"correct horse battery staple","role":"operator","platform":false}`,
		"PATCH /api/v1/users/{id}":                                        `{"role":"developer","disabled":false}`,
		"POST /api/v1/users/{id}/password":                                `{"new_password":"reset during the fuzzing"}`,
		"POST /api/v1/api-keys":                                           `{"name":"a key","scopes":["payments:read","webhooks:read"],"expires_at":"{{expyear}}-01-01T00:00:00Z"}`,
		"POST /api/v1/payments":                                           payment,
		"POST /api/v1/payments/{id}/refunds":                              `{"amount":"1.50","reason":"requested_by_customer"}`,
		"POST /api/v1/payments/{id}/capture":                              `{"amount":"30.00"}`,
		"POST /api/v1/payments/{id}/cancel":                               `{"reason":"duplicate"}`,
		"POST /api/v1/monitoring/alerts/{id}/acknowledge":                 `{}`,
		"POST /api/v1/monitoring/alerts/{id}/resolve":                     `{}`,
		"PUT /api/v1/admin/config":                                        mustJSON(s.env.t, s.restConfig),
		"POST /api/v1/webhooks/simulate":                                  `{"payment_id":"{{simulated}}","type":"dispute","provider":"stripe"}`,
		"POST /api/v1/webhooks/test":                                      `{"url":"{{sink}}/hooks","type":"refund.succeeded"}`,
		"POST /api/v1/webhooks/logs/{id}/retry":                           `{}`,
		"POST /api/v1/webhook-endpoints":                                  `{"url":"{{sink}}/more","events":["payment.succeeded","refund.failed"],"description":"more"}`,
		"PATCH /api/v1/webhook-endpoints/{id}":                            `{"url":"{{sink}}/events","events":["*"],"description":"changed","status":"enabled"}`,
		"POST /api/v1/webhook-endpoints/{id}/rotate-secret":               `{}`,
		"POST /api/v1/webhook-endpoints/{id}/deliveries/{delivery}/retry": `{}`,
	}
}

// nulBodies are the route's bodies with a NUL in one string field, from its schema in the
// OpenAPI document: the first and the last field stringFields finds.
func (s *fuzzServer) nulBodies(route apiRoute) []string {
	schema, _ := get(s.openapi, "paths", route.path, strings.ToLower(route.method), "requestBody", "content", "application/json", "schema").(map[string]any)
	if schema == nil {
		return nil
	}
	fields := stringFields(schema, get(s.openapi, "components", "schemas").(map[string]any), "", 0)
	var bodies []string
	for i, field := range fields {
		if i == 0 || i == len(fields)-1 {
			bodies = append(bodies, mustJSON(s.env.t, field.body))
		}
	}
	return bodies
}

// hostileBodies are example and the shapes a decoder must refuse without failing: the example's
// values as huge numbers, as the wrong types, with bytes that are not UTF-8 and with lone
// surrogates, and its first key twice; then more, and two of the shapes that are no such object
// at all (deep nesting, truncation, trailing data, a byte order mark, other JSON values), the
// n-th operation's two, so that together the operations are seeded with all of them.
func hostileBodies(n int, example string, more ...string) []string {
	bodies := []string{example}
	var decoded map[string]any
	dec := json.NewDecoder(strings.NewReader(example))
	dec.UseNumber()
	if dec.Decode(&decoded) == nil && len(decoded) > 0 {
		for _, change := range []func(any) any{hugeValue, wrongType, notUTF8, loneSurrogate} {
			changed, _ := json.Marshal(mapValues(decoded, change))
			bodies = append(bodies, unescapeMarkers(string(changed)))
		}
		keys := make([]string, 0, len(decoded))
		for key := range decoded {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		first, _ := json.Marshal(map[string]any{keys[0]: decoded[keys[0]]})
		bodies = append(bodies, string(first[:len(first)-1])+","+example[1:])
	}
	shapes := []string{
		`{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		strings.Repeat(`{"a":`, 20) + "1" + strings.Repeat("}", 20),
		`[]`, `null`, `"text"`, ``, `{`, example + `{}`, "\xef\xbb\xbf" + example, `{"a":1,}`, `0`,
	}
	return append(append(bodies, more...), shapes[n%len(shapes)], shapes[(n+len(shapes)/2)%len(shapes)])
}

// mapValues applies change to every value of v, object keys kept.
func mapValues(v any, change func(any) any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, inner := range v {
			out[k] = mapValues(inner, change)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, inner := range v {
			out[i] = mapValues(inner, change)
		}
		return out
	}
	return change(v)
}

func hugeValue(v any) any {
	switch v.(type) {
	case json.Number:
		return json.Number("1e999999")
	case string:
		return strings.Repeat("9", 40) + ".99"
	case bool, nil:
		return json.Number("-92233720368547758080")
	}
	return v
}

func wrongType(v any) any {
	switch v.(type) {
	case json.Number:
		return "12"
	case string:
		return json.Number("12.5")
	case bool:
		return "true"
	}
	return []any{map[string]any{}}
}

// marked strings are written raw by unescapeMarkers: encoding/json would mend them.
const (
	markNotUTF8   = "\u2060notutf8\u2060"
	markSurrogate = "\u2060surrogate\u2060"
)

func notUTF8(v any) any {
	if s, ok := v.(string); ok {
		return s + markNotUTF8
	}
	return v
}

func loneSurrogate(v any) any {
	if s, ok := v.(string); ok {
		return markSurrogate + s
	}
	return v
}

func unescapeMarkers(s string) string {
	s = strings.ReplaceAll(s, markNotUTF8, "\xff\xfe\xc0\x80")
	return strings.ReplaceAll(s, markSurrogate, `\ud800\udc00\udfff`)
}

// gqlOperation is a root field with arguments, asked by a fixed document whose variables are the
// field's arguments.
type gqlOperation struct {
	field, document string
	arguments       []*ast.ArgumentDefinition
}

// graphQLOperations are every query and mutation field of the schema that takes arguments.
func graphQLOperations() ([]gqlOperation, *ast.Schema) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	var ops []gqlOperation
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation} {
		for _, field := range root.Fields {
			if len(field.Arguments) == 0 {
				continue
			}
			var declared, passed []string
			for _, argument := range field.Arguments {
				declared = append(declared, "$"+argument.Name+": "+argument.Type.String())
				passed = append(passed, argument.Name+": $"+argument.Name)
			}
			selection := ""
			if def := schema.Types[field.Type.Name()]; def != nil && (def.Kind == ast.Object || def.Kind == ast.Interface || def.Kind == ast.Union) {
				selection = " { __typename }"
			}
			document := fmt.Sprintf("%s Fuzzed(%s) { %s(%s)%s }", strings.ToLower(root.Name), strings.Join(declared, ", "), field.Name, strings.Join(passed, ", "), selection)
			ops = append(ops, gqlOperation{field: field.Name, document: document, arguments: field.Arguments})
		}
	}
	return ops, schema
}

// FuzzGraphQLVariables sends fuzzed variables, as the raw JSON of the request's variables, with
// the fixed document of every query and mutation field that takes arguments.
func FuzzGraphQLVariables(f *testing.F) {
	s := newFuzzServer(f, databasetest.SQLite(f))
	ops, schema := graphQLOperations()
	examples := s.graphQLExamples()
	for i, op := range ops {
		example, ok := examples[op.field]
		if !ok {
			f.Logf("%s has no example variables here: seeded with {} alone", op.field)
			example = "{}"
		}
		// The example with a NUL in a string of its first argument holding one, from
		// graphStringFields.
		var nuls []string
		for _, argument := range op.arguments {
			if leaves := graphStringFields(schema, argument.Type, "variables."+argument.Name, map[string]bool{}); len(leaves) > 0 {
				variables := map[string]any{}
				json.Unmarshal([]byte(example), &variables)
				variables[argument.Name] = leaves[0].value
				nuls = append(nuls, mustJSON(f, variables))
				break
			}
		}
		for _, seed := range hostileBodies(i, example, nuls...) {
			f.Add(uint8(i), []byte(seed))
		}
		if op.field == "payments" { // the filters hold themselves: nested deeper than any bound
			f.Add(uint8(i), []byte(`{"where":`+strings.Repeat(`{"not":`, 40)+`{}`+strings.Repeat("}", 40)+`}`))
		}
	}
	f.Fuzz(func(t *testing.T, index uint8, variables []byte) {
		op := ops[int(index)%len(ops)]
		token := s.token(t)
		sent, ok := s.prepare(string(variables), token)
		if !ok {
			return
		}
		query, _ := json.Marshal(op.document)
		body := `{"query":` + string(query) + `,"variables":` + sent + `}`
		r, err := s.env.send(http.MethodPost, "/query", token, body)
		checkGraphQL(t, op.field, sent, r, err)
		s.pin(t)
	})
}

// graphQLExamples are valid variables of each field, by name.
func (s *fuzzServer) graphQLExamples() map[string]string {
	config := mustJSON(s.env.t, graphQLConfig(s.restConfig))
	return map[string]string{
		"node":              `{"id":"{{payment}}"}`,
		"nodes":             `{"ids":["{{payment}}","{{endpoint}}","{{refund}}"]}`,
		"alerts":            `{"first":5,"where":{"status":"open","severityIn":["warning","critical"]},"orderBy":{"field":"OPENED_AT","direction":"DESC"}}`,
		"events":            `{"first":5,"where":{"type":"payment.succeeded","createdAtGTE":"2020-01-01T00:00:00Z"}}`,
		"payments":          `{"first":5,"after":"{{cursor}}","where":{"amountGTE":100,"currency":"USD","or":[{"status":"SUCCEEDED"},{"customerEmailContainsFold":"ann"}]},"orderBy":{"field":"CREATED_AT","direction":"DESC"}}`,
		"webhookEndpoints":  `{"last":2,"before":"{{cursor}}"}`,
		"webhookEvents":     `{"first":5,"where":{"provider":"adyen","not":{"eventIDHasPrefix":"x"}}}`,
		"apiKeys":           `{"first":2,"after":"{{apikey}}"}`,
		"event":             `{"id":"{{event}}"}`,
		"webhookEndpoint":   `{"id":"{{endpoint}}"}`,
		"webhookDeliveries": `{"endpointId":"{{endpoint}}","status":"DELIVERED","first":5}`,
		"merchants":         `{"first":3,"after":"{{merchant}}"}`,
		"payment":           `{"id":"{{payment}}"}`,
		"refund":            `{"id":"{{refund}}"}`,
		"configHistory":     `{"first":5,"before":10}`,
		"users":             `{"first":5,"after":"{{user}}"}`,
		"webhookEvent":      `{"id":"{{webhookevent}}"}`,
		"__type":            `{"name":"Payment"}`,
		"login":             `{"input":{"email":"{{email}}","password":"{{password}}"}}`,
		"refreshToken":      `{"refreshToken":"{{refresh}}"}`,
		"logout":            `{"refreshToken":null}`,
		"revokeToken":       `{"token":"{{self}}"}`,
		"createPayment": `{"input":{"amount":"10.00","currency":"USD","paymentMethod":"CREDIT_CARD","customer":{"email":"ann@example.com","name":"Ann Lee"},` +
			`"card":{"number":"4242424242424242","expMonth":12,"expYear":` + cardExpYearText + `,"cvc":"123"},"metadata":{"order":"1"},"captureMethod":"AUTOMATIC"}}`,
		"refundPayment":               `{"input":{"paymentId":"{{payment}}","amount":"1.25","reason":"requested_by_customer"}}`,
		"capturePayment":              `{"input":{"paymentId":"{{capturable}}","amount":"30.00"}}`,
		"cancelPayment":               `{"input":{"paymentId":"{{cancelable}}","reason":"DUPLICATE"}}`,
		"updateConfig":                `{"input":` + config + `}`,
		"createAPIKey":                `{"input":{"name":"a key","scopes":["payments:read"],"expiresAt":"{{expyear}}-01-01T00:00:00Z"}}`,
		"revokeAPIKey":                `{"id":"{{apikey}}"}`,
		"createWebhookEndpoint":       `{"input":{"url":"{{sink}}/more","events":["payment.succeeded"],"description":"more"}}`,
		"updateWebhookEndpoint":       `{"id":"{{endpoint}}","input":{"url":"{{sink}}/events","events":["*"],"description":"changed","status":"ENABLED"}}`,
		"deleteWebhookEndpoint":       `{"id":"{{doomed}}"}`,
		"rotateWebhookEndpointSecret": `{"id":"{{endpoint}}"}`,
		"retryWebhookDelivery":        `{"endpointId":"{{endpoint}}","id":"{{delivery}}"}`,
		"createMerchant":              `{"input":{"name":"Another Shop"}}`,
		"updateMerchant":              `{"id":"{{merchant}}","input":{"name":"Renamed Shop","status":"active"}}`,
		"acknowledgeAlert":            `{"id":"{{alert}}"}`,
		"resolveAlert":                `{"id":"{{alert}}"}`,
		"changePassword":              `{"input":{"currentPassword":"not the password","newPassword":"a new password for the fuzzing"}}`,
		"resetPassword":               `{"id":"{{user}}","input":{"newPassword":"reset during the fuzzing"}}`,
		"createUser":                  `{"input":{"email":"new@example.com","password":"correct horse battery staple","role":"operator"}}`,
		"updateUser":                  `{"id":"{{user}}","input":{"role":"developer","disabled":false}}`,
		"retryWebhookEvent":           `{"id":"{{webhookevent}}"}`,
		"simulateEvent":               `{"input":{"paymentId":"{{simulated}}","type":"late_failure"}}`,
		"sendTestWebhook":             `{"input":{"url":"{{sink}}/hooks","type":"refund.succeeded"}}`,
	}
}

// graphQLConfig is REST's configuration document as updateConfig's input: names in camelCase,
// the providers a list.
func graphQLConfig(rest map[string]any) map[string]any {
	var camel func(v any) any
	camel = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, inner := range v {
				parts := strings.Split(k, "_")
				for i := 1; i < len(parts); i++ {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
				out[strings.Join(parts, "")] = camel(inner)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, inner := range v {
				out[i] = camel(inner)
			}
			return out
		}
		return v
	}
	input := camel(rest).(map[string]any)
	delete(input, "updatedAt")
	delete(input, "updatedBy")
	byName, _ := input["providers"].(map[string]any)
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	var providers []any
	for _, name := range names {
		settings := byName[name].(map[string]any)
		settings["name"] = name
		providers = append(providers, settings)
	}
	input["providers"] = providers
	return input
}

// queryTarget is a route read by GET, or GraphQL over GET (route.path "/query").
type queryTarget struct {
	route apiRoute
	// item is the placeholder of an item the route lists, for starting_after and ending_before.
	item string
}

// FuzzQueryParameters sends a fuzzed raw query string to every GET route of the route table, and
// to GraphQL over GET.
func FuzzQueryParameters(f *testing.F) {
	s := newFuzzServer(f, databasetest.SQLite(f))
	items := map[string]string{
		"/api/v1/merchants": "merchant", "/api/v1/users": "user", "/api/v1/api-keys": "apikey", "/api/v1/payments": "payment",
		"/api/v1/payments/{id}/refunds": "refund", "/api/v1/monitoring/alerts": "alert", "/api/v1/webhooks/logs": "webhookevent",
		"/api/v1/events": "event", "/api/v1/webhook-endpoints": "endpoint", "/api/v1/webhook-endpoints/{id}/deliveries": "delivery",
	}
	var targets []queryTarget
	for _, route := range apiRoutes {
		if route.method == http.MethodGet {
			targets = append(targets, queryTarget{route: route, item: items[route.path]})
		}
	}
	graphQL := len(targets)
	targets = append(targets, queryTarget{route: apiRoute{method: http.MethodGet, path: "/query"}})
	for i, target := range targets {
		for _, seed := range s.querySeeds(target) {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, index uint8, query string) {
		target := targets[int(index)%len(targets)]
		token := s.token(t)
		sent, ok := s.prepare(query, token)
		if !ok {
			return
		}
		path := s.path(target.route) + "?" + requestTargetQuery(sent)
		r, err := s.env.send(http.MethodGet, path, token, nil)
		if int(index)%len(targets) == graphQL {
			checkGraphQL(t, "GET /query", path, r, err)
		} else {
			checkREST(t, target.route, path, r, err)
		}
	})
}

// requestTargetQuery escapes what cannot be sent in a request line as it is (control bytes, space
// and #), and leaves every other byte raw: stray %, bytes that are not UTF-8, repeated and empty
// parameters reach the server as the fuzzer wrote them.
func requestTargetQuery(query string) string {
	var b strings.Builder
	for i := 0; i < len(query); i++ {
		c := query[i]
		if c <= ' ' || c == 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// querySeeds are, for target, no query, each of its documented query parameters with a valid
// value and with a few hostile ones, and some broken query strings.
func (s *fuzzServer) querySeeds(target queryTarget) []string {
	if target.route.path == "/query" {
		return []string{
			`query={payments(first:2){totalCount}}`,
			`query=query+Q($id:ID!){payment(id:$id){id}}&variables={"id":"{{payment}}"}&operationName=Q`,
			`query=query+Q($n:Int){payments(first:$n){totalCount}}&variables={"n":1e999}`,
			`query={__schema{types{name}}}&extensions={"persistedQuery":{"version":1}}`,
			`query=mutation{logout{revoked}}`, `query=%7B&variables=%ff`, `variables=[]&query={__typename}`, ``,
		}
	}
	seeds := []string{"", "limit=1", "limit=99999999999999999999&limit=-1", "%zz=%&&==&;", "a=%00", "starting_after=%ff%fe", "created_gte=99999999999999999"}
	var all []string // every parameter at once
	operation, _ := get(s.openapi, "paths", target.route.path, "get").(map[string]any)
	parameters, _ := operation["parameters"].([]any)
	for _, parameter := range parameters {
		p, _ := parameter.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			p, _ = get(s.openapi, "components", "parameters", strings.TrimPrefix(ref, "#/components/parameters/")).(map[string]any)
		}
		if p["in"] != "query" {
			continue
		}
		name, _ := p["name"].(string)
		value := "2"
		schema, _ := p["schema"].(map[string]any)
		if ref, ok := schema["$ref"].(string); ok {
			schema, _ = get(s.openapi, "components", "schemas", strings.TrimPrefix(ref, "#/components/schemas/")).(map[string]any)
		}
		switch {
		case name == payment.ReturnSecretParam:
			value = "{{returnsecret}}"
		case name == "starting_after" || name == "ending_before":
			if target.item == "" {
				continue
			}
			value = "{{" + target.item + "}}"
		case get(schema, "enum", 0) != nil:
			value = str(get(schema, "enum", 0))
		case schema["format"] == "date-time":
			value = "2020-01-01T00:00:00Z"
		case p["example"] != nil || schema["example"] != nil:
			value = str(cmpOr(p["example"], schema["example"]))
		case schema["type"] == "string":
			value = "ann@example.com"
		}
		hostile := []string{name + "=" + value + "%00", name + "=" + value + "&" + name + "=x", name + "=1e400", name + "=%ff" + value}
		seeds = append(seeds, name+"="+value, hostile[len(seeds)%len(hostile)])
		if name != "ending_before" {
			all = append(all, name+"="+value)
		}
	}
	if len(all) > 1 {
		seeds = append(seeds, strings.Join(all, "&"))
	}
	return seeds
}

func cmpOr(values ...any) any {
	for _, v := range values {
		if v != nil {
			return v
		}
	}
	return nil
}
