package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/background"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/logtest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/crypto/bcrypt"
)

const (
	testJWTSecret      = "test-secret-test-secret-test-secret-0123"
	testFingerprintKey = "test-fingerprint-key-test-fingerprint-key"
	testAPIKeySecret   = "test-api-key-secret-test-api-key-secret-0"
)

// testEnv is Paygate's real HTTP handler on a real database, wired as serve wires it.
type testEnv struct {
	t   testing.TB
	db  *database.DB
	app *App
	url string
	// server serves app at url.
	server *httptest.Server
	logs   *logtest.Buffer
	// clock is the server's: a test advances it to pass hours or days at once.
	clock *clock.Adjustable
	// client sends request's requests: http.DefaultClient unless a test checks them on the way.
	client *http.Client
}

func newTestEnv(t testing.TB, db *database.DB, extraEnv ...string) *testEnv {
	t.Helper()
	return newTestEnvWriting(t, db, 0, extraEnv...)
}

// newTestEnvWriting is newTestEnv whose server cuts a request's answer after writeTimeout, as
// serve's does (0: never).
func newTestEnvWriting(t testing.TB, db *database.DB, writeTimeout time.Duration, extraEnv ...string) *testEnv {
	t.Helper()
	logs, clk := &logtest.Buffer{}, &clock.Adjustable{}
	// Its address is known before Paygate is built, as a deployment's public address is.
	server := httptest.NewUnstartedServer(nil)
	public := "PAYGATE_PUBLIC_URL=http://" + server.Listener.Addr().String()
	paygate := newTestAppWithClock(t, db, NewLogger(logs, "debug"), clk.Now, append([]string{public}, extraEnv...)...)
	server.Config.Handler = paygate.handler
	server.Config.WriteTimeout = writeTimeout
	server.Config.RegisterOnShutdown(paygate.AbortStreams) // as serve's
	server.Start()
	t.Cleanup(server.Close)
	return &testEnv{t: t, db: db, app: paygate, url: server.URL, server: server, logs: logs, clock: clk}
}

// newTestApp builds Paygate as serve does, from a test configuration.
func newTestApp(t testing.TB, db *database.DB, logger *slog.Logger, extraEnv ...string) *App {
	t.Helper()
	return newTestAppWithClock(t, db, logger, clock.System, extraEnv...)
}

func newTestAppWithClock(t testing.TB, db *database.DB, logger *slog.Logger, now clock.Clock, extraEnv ...string) *App {
	t.Helper()
	// Passwords are hashed at bcrypt's least cost, but where a test asks for the real one: the
	// tests hash thousands, each a second at cost 12 under the race detector.
	base := []string{"PAYGATE_DATA_DIR=" + t.TempDir(), "PAYGATE_JWT_SECRET=" + testJWTSecret, "PAYGATE_API_KEY_SECRET=" + testAPIKeySecret}
	if !slices.Contains(extraEnv, "PAYGATE_ENV=production") { // production holds to the real cost
		base = append(base, "PAYGATE_PASSWORD_COST=4")
	}
	cfg, err := config.Load(append(base, extraEnv...), Providers)
	if err != nil {
		t.Fatal(err)
	}
	paygate, err := New(t.Context(), cfg, db, logger, now)
	if err != nil {
		t.Fatal(err)
	}
	// Tests send many requests from one address and log one user in many times a minute: the
	// limits are out of their way, except where a test puts them back (limitedByConfig).
	paygate.fixedRateLimits.Store(&settings.RateLimits{PerSecond: 1_000_000, Burst: 1_000_000, LoginPerMinute: 1_000_000})
	return paygate
}

// limitedByConfig puts the runtime configuration's rate limits in force, as in production.
func (e *testEnv) limitedByConfig() { e.app.fixedRateLimits.Store(nil) }

// newTestServers starts one server per pool, as separate processes over one database would run:
// they share the database and the configured secrets, nothing else.
func newTestServers(t testing.TB, pools []*database.DB, extraEnv ...string) []*testEnv {
	t.Helper()
	shared := append([]string{"PAYGATE_CARD_FINGERPRINT_KEY=" + testFingerprintKey}, extraEnv...)
	servers := make([]*testEnv, len(pools))
	for i, pool := range pools {
		servers[i] = newTestEnv(t, pool, shared...)
	}
	return servers
}

// tokenFor returns an access token of a new user of the default merchant with the role. The user
// gets no usable password: tests that log in create their users through auth.Service.CreateUser
// instead. An admin is the platform's staff, as the admins of a database from before merchants are.
func (e *testEnv) tokenFor(role string) string {
	e.t.Helper()
	return e.userToken(tenant.DefaultMerchant, role, role == "admin")
}

// staffToken returns an access token of a new user of the platform's staff with the role: who
// reads what is platform-wide (alerts, provider status, provider webhooks).
func (e *testEnv) staffToken(role string) string {
	e.t.Helper()
	return e.userToken(tenant.DefaultMerchant, role, true)
}

// merchantToken returns an access token of a new user of merchant with the role.
func (e *testEnv) merchantToken(merchant, role string) string {
	e.t.Helper()
	return e.userToken(merchant, role, false)
}

func (e *testEnv) userToken(merchant, role string, platform bool) string {
	e.t.Helper()
	u, err := e.db.Ent.User.Create().
		SetEmail(prefixid.New(role) + "@example.com").
		SetPasswordHash("!").SetRole(user.Role(role)).SetPlatform(platform).Save(tenant.For(context.Background(), merchant))
	if err != nil {
		e.t.Fatal(err)
	}
	// Made behind the server's back: it learns of the user now, as it would within a second.
	if err := e.app.services.auth.Directory().Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	token, err := e.app.services.auth.Tokens().Issue(u.ID, role, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return token
}

// scopesOf returns the scopes a token of tokenFor's user with role holds: an admin's are the
// platform's staff's, who manage merchants too.
func (e *testEnv) scopesOf(role string) []string {
	if role == "admin" {
		return slices.Concat(auth.ScopesOf(role), []string{auth.ScopeMerchantsManage})
	}
	return auth.ScopesOf(role)
}

// apiKey makes an API key with scopes through the API, as the holder of credential, and returns
// the key.
func (e *testEnv) apiKey(credential string, scopes ...string) string {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/api-keys", credential, map[string]any{"name": "test key", "scopes": scopes})
	key := str(get(r.body, "data", "key"))
	if r.status != http.StatusCreated || key == "" {
		e.t.Fatalf("making an API key with %v = %d %s", scopes, r.status, r.raw)
	}
	return key
}

// response is a decoded answer; numbers stay json.Number so amounts are compared as text.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// request sends body (a string is sent as is, anything else as JSON) with the token, if any.
// Concurrency tests call it from many goroutines, so a failure to send or read marks the test
// failed with Errorf (safe from any goroutine, unlike Fatal) and answers what it has (nothing, or
// an answer whose body is not JSON), which fails the caller's own checks in turn.
func (e *testEnv) request(method, path, token string, body any, headers ...string) response {
	e.t.Helper()
	r, err := e.send(method, path, token, body, headers...)
	if err != nil {
		e.t.Errorf("%s %s: %v", method, path, err)
	}
	return r
}

func (e *testEnv) send(method, path, token string, body any, headers ...string) (response, error) {
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = strings.NewReader(b)
	default:
		encoded, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequest(method, e.url+path, reader)
	if err != nil {
		return response{}, err
	}
	if reader != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := http.DefaultClient
	if e.client != nil {
		client = e.client
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&r.body); err != nil {
			return r, fmt.Errorf("answer is not JSON: %v\n%s", err, raw)
		}
	}
	return r, nil
}

// graphql posts a GraphQL document and returns data and errors; under application/json every
// answer to a well-formed request is 200. Like request, it is safe from any goroutine.
func (e *testEnv) graphql(token, query string, variables map[string]any, headers ...string) (map[string]any, []gqlError) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/query", token, map[string]any{"query": query, "variables": variables}, headers...)
	if r.status != http.StatusOK {
		e.t.Errorf("graphql answered %d: %s", r.status, r.raw)
		return nil, nil
	}
	var decoded struct {
		Data   map[string]any `json:"data"`
		Errors []gqlError     `json:"errors"`
	}
	dec := json.NewDecoder(strings.NewReader(r.raw))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		e.t.Errorf("graphql answer: %v", err)
	}
	return decoded.Data, decoded.Errors
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

func (g gqlError) code() string { s, _ := g.Extensions["code"].(string); return s }

// mustGraphQL fails the test on any GraphQL error; it is safe from any goroutine.
func (e *testEnv) mustGraphQL(token, query string, variables map[string]any) map[string]any {
	e.t.Helper()
	data, errs := e.graphql(token, query, variables)
	if len(errs) > 0 {
		e.t.Errorf("graphql errors: %+v", errs)
	}
	return data
}

// errorCode returns the REST error envelope's code and param.
func (r response) errorCode() (code, param string) {
	errBody, _ := r.body["error"].(map[string]any)
	code, _ = errBody["code"].(string)
	param, _ = errBody["param"].(string)
	return code, param
}

func (r response) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

// get walks a decoded JSON value by keys and list indexes: get(m, "data", "card", "last4").
func get(v any, path ...any) any {
	for _, step := range path {
		switch s := step.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[s]
		case int:
			list, _ := v.([]any)
			if s >= len(list) {
				return nil
			}
			v = list[s]
		}
	}
	return v
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case json.Number:
		return s.String()
	case nil:
		return ""
	default:
		return fmt.Sprint(s)
	}
}

func (e *testEnv) paymentCount() int {
	e.t.Helper()
	n, err := e.db.Ent.Payment.Query().Count(databasetest.AsMerchant())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *testEnv) payment(id string) *ent.Payment {
	e.t.Helper()
	p, err := e.db.Ent.Payment.Get(databasetest.AsMerchant(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// cardExpYear is an expiry year always ahead of the clock the servers run on, so the tests' cards
// never expire, whatever year the tests run in.
var cardExpYear = time.Now().Year() + 4

// cardExpYearText is cardExpYear as it is written in a JSON body.
var cardExpYearText = strconv.Itoa(cardExpYear)

// paymentBody is a valid REST payment request; change copies of it for other cases.
func paymentBody(amount any, currency, cardNumber string) map[string]any {
	cvc := "123"
	if strings.HasPrefix(cardNumber, "34") || strings.HasPrefix(cardNumber, "37") {
		cvc = "1234"
	}
	return map[string]any{
		"amount":         amount,
		"currency":       currency,
		"payment_method": "credit_card",
		"customer":       map[string]any{"email": "ann@example.com", "name": "Ann Lee"},
		"card":           map[string]any{"number": cardNumber, "exp_month": 12, "exp_year": cardExpYear, "cvc": cvc},
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// subjectOf returns who a credential authenticates as: a user's id, or a key's.
func (e *testEnv) subjectOf(credential string) string {
	e.t.Helper()
	p, err := e.app.services.auth.Authenticate(context.Background(), credential, "", nil)
	if err != nil {
		e.t.Fatalf("authenticating %.12s...: %v", credential, err)
	}
	return p.Subject
}

// adminOf returns an admin's access token and user ID: the configuration's history names who
// changed it.
func (e *testEnv) adminOf() (token, userID string) {
	e.t.Helper()
	u, err := e.db.Ent.User.Create().SetEmail(prefixid.New("admin") + "@example.com").
		SetPasswordHash("!").SetRole(user.RoleAdmin).SetPlatform(true).Save(databasetest.AsMerchant())
	if err != nil {
		e.t.Fatal(err)
	}
	token, err = e.app.services.auth.Tokens().Issue(u.ID, "admin", "")
	if err != nil {
		e.t.Fatal(err)
	}
	return token, u.ID
}

// readConfig is GET /api/v1/admin/config's document, decoded as a client would.
func (e *testEnv) readConfig(token string) map[string]any {
	e.t.Helper()
	r := e.request(http.MethodGet, configPath, token, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET %s = %d %s", configPath, r.status, r.raw)
	}
	return r.data()
}

// configHistory is GET /api/v1/admin/config/history?query: the entries and has_more.
func (e *testEnv) configHistory(token, query string) ([]any, bool) {
	e.t.Helper()
	r := e.request(http.MethodGet, configPath+"/history?"+query, token, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET history?%s = %d %s", query, r.status, r.raw)
	}
	entries, _ := r.body["data"].([]any)
	return entries, r.body["has_more"] == true
}

// watchConfig polls the database for configuration changes on e's server, as serve does, every
// interval until the test ends.
func (e *testEnv) watchConfig(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	background.Start(ctx, NewLogger(e.logs, "debug"), background.Loop{Name: "reading the runtime configuration", Every: every, Run: e.app.services.configs.Refresh})
}

// scrape reads /metrics as Prometheus does, with credential.
func (e *testEnv) scrape(credential string) map[string]*dto.MetricFamily {
	e.t.Helper()
	r := e.request(http.MethodGet, "/metrics", "", nil, "X-API-Key", credential)
	if r.status != http.StatusOK {
		e.t.Fatalf("scrape = %d %.300s", r.status, r.raw)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(r.raw))
	if err != nil {
		e.t.Fatalf("scrape is not Prometheus text: %v", err)
	}
	return families
}

// listIDs lists a REST collection at path (with its query) and returns the ids in order and
// has_more.
func (e *testEnv) listIDs(token, path string) ([]string, bool) {
	e.t.Helper()
	r := e.request(http.MethodGet, path, token, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("list %s: %d %s", path, r.status, r.raw)
	}
	var ids []string
	for _, item := range r.body["data"].([]any) {
		ids = append(ids, str(get(item, "id")))
	}
	return ids, r.body["has_more"] == true
}

// charges counts the charges the sandboxes made for a payment, by provider.
func (e *testEnv) charges(paymentID string) map[string]int {
	e.t.Helper()
	objects, err := e.db.Ent.SandboxObject.Query().
		Where(sandboxobject.Reference(paymentID), sandboxobject.KindEQ(sandboxobject.KindCharge)).All(databasetest.AsMerchant())
	if err != nil {
		e.t.Fatal(err)
	}
	byProvider := map[string]int{}
	for _, o := range objects {
		byProvider[o.Provider]++
	}
	return byProvider
}

// userWith makes a user of the default merchant with role who can log in with testPassword, and
// returns their email. An admin is the platform's staff.
func (e *testEnv) userWith(role string) string {
	e.t.Helper()
	return e.loginUser(role, role == "admin")
}

// staffWith makes a user of the platform's staff with role who can log in with testPassword.
func (e *testEnv) staffWith(role string) string {
	e.t.Helper()
	return e.loginUser(role, true)
}

func (e *testEnv) loginUser(role string, platform bool) string {
	e.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		e.t.Fatal(err)
	}
	email := prefixid.New(role) + "@example.com"
	if err := e.db.Ent.User.Create().SetEmail(email).SetPasswordHash(string(hash)).SetRole(user.Role(role)).SetPlatform(platform).Exec(databasetest.AsMerchant()); err != nil {
		e.t.Fatal(err)
	}
	return email
}

// login starts a session through REST and returns its tokens.
func (e *testEnv) login(email string) (access, refresh string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": testPassword})
	if r.status != http.StatusOK {
		e.t.Fatalf("login: %d %s", r.status, r.raw)
	}
	return str(get(r.data(), "access_token")), str(get(r.data(), "refresh_token"))
}

// answers is the status and error code a token gets reading payments.
func (e *testEnv) answers(token string) (int, string) {
	e.t.Helper()
	r := e.request(http.MethodGet, "/api/v1/payments", token, nil)
	code, _ := r.errorCode()
	return r.status, code
}

// storeLoggedEvent stores ev directly, as the ingest and the worker would have.
func (e *testEnv) storeLoggedEvent(ev loggedEvent) *ent.WebhookEvent {
	e.t.Helper()
	create := e.db.Ent.WebhookEvent.Create().SetProvider(ev.provider).SetEventID(prefixid.New("evt")).SetType(ev.eventType).
		SetStatus(ev.status).SetPayload([]byte(`{"note":"` + neverServed + `"}`)).SetReceivedAt(ev.received)
	switch ev.status {
	case state.WebhookReceived:
		create.SetNextAttemptAt(ev.received)
	case state.WebhookFailed:
		create.SetAttempts(2).SetLastError("database busy").SetNextAttemptAt(ev.received.Add(time.Minute))
	case state.WebhookDead:
		create.SetAttempts(8).SetLastError("database busy")
	case state.WebhookProcessed:
		create.SetAttempts(1).SetProcessedAt(ev.received.Add(ev.latency)).SetPaymentID("pay_logged")
	case state.WebhookIgnored:
		create.SetAttempts(1).SetProcessedAt(ev.received.Add(ev.latency)).SetIgnoredReason("no payment has the reference")
	}
	event, err := create.Save(databasetest.AsMerchant())
	if err != nil {
		e.t.Fatal(err)
	}
	return event
}

func (e *testEnv) storedEvents(provider string) []*ent.WebhookEvent {
	e.t.Helper()
	events, err := e.db.Ent.WebhookEvent.Query().Where(webhookevent.Provider(provider)).All(databasetest.AsMerchant())
	if err != nil {
		e.t.Fatal(err)
	}
	return events
}

// succeededPayment creates a payment of amount in currency, which the default routing sends to
// one provider (USD to Stripe, EUR to Adyen, GBP to Checkout.com), and checks where it went.
func (e *testEnv) succeededPayment(token, amount, currency, provider string) string {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/payments", token, paymentBody(amount, currency, "4242424242424242"))
	if r.status != http.StatusCreated || str(get(r.data(), "provider")) != provider {
		e.t.Fatalf("payment: %d %s, want it at %s", r.status, r.raw, provider)
	}
	return str(get(r.data(), "id"))
}
