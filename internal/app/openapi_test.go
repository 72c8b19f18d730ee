package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// apiContract is an http.RoundTripper that checks every request and answer passing through it
// against the OpenAPI document Paygate serves, and notes which documented answers were seen.
type apiContract struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router

	mu sync.Mutex
	// seen holds "operationId status" of every answer that passed.
	seen map[string]bool
	// lastRequestErr is why the last request broke the document, or nil: the test's requests
	// are sequential, and a request the test means to be valid must not break it.
	lastRequestErr error
	// raw is the document as served, and answers every JSON answer that passed, for ajv to
	// check strictly as well.
	raw     string
	answers []recordedAnswer
}

// recordedAnswer is one answer, for graph/rest/lint/strict.mjs: path is the document's template.
type recordedAnswer struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// A contract failure names the field at fault; the whole schema it broke is in the document. Set
// once, before any test runs: it is kin-openapi's global, and the contract tests run in parallel.
func init() { openapi3.SchemaErrorDetailsDisabled = true }

// loadAPIContract reads the document from the server, as a client generator would, and checks
// that it is a valid OpenAPI 3.0.3 document.
func loadAPIContract(t *testing.T, env *testEnv) *apiContract {
	t.Helper()
	r := env.request(http.MethodGet, "/api/v1/openapi.json", "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json = %d %.300s", r.status, r.raw)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(r.raw))
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	// Every list of providers is the registered providers'.
	if n := strings.Count(r.raw, `"enum":["stripe","adyen","checkout"]`) + strings.Count(r.raw, `"enum": ["stripe","adyen","checkout"]`); n != 10 || strings.Contains(r.raw, "<providers>") {
		t.Errorf("%d lists of the providers in the document, want 10 and no marker left", n)
	}
	// And every list naming each provider at most once holds at most as many.
	if n := strings.Count(r.raw, `"maxItems": 3,`); n != 2 || strings.Contains(r.raw, "<number of providers>") {
		t.Errorf("%d lists bounded by the number of providers in the document, want 2 and no marker left", n)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	// Requests go to test servers on other ports than the document's example server.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &apiContract{t: t, doc: doc, router: router, seen: map[string]bool{}, raw: r.raw}
}

func (c *apiContract) RoundTrip(req *http.Request) (*http.Response, error) {
	route, pathParams, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Errorf("%s %s is not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
		return http.DefaultTransport.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	requestInput := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	requestErr := openapi3filter.ValidateRequest(context.Background(), requestInput)
	req.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	c.lastRequestErr = requestErr
	c.mu.Unlock()

	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	operation := route.Operation.OperationID
	if route.Operation.Responses.Status(resp.StatusCode) == nil {
		c.t.Errorf("%s %s answered %d, which %s does not document: %.300s", req.Method, req.URL.Path, resp.StatusCode, operation, answer)
		return resp, nil
	}
	responseInput := &openapi3filter.ResponseValidationInput{RequestValidationInput: requestInput, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(answer)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), responseInput); err != nil {
		c.t.Errorf("%s %s answered %d against %s's document: %v\n%.500s", req.Method, req.URL.Path, resp.StatusCode, operation, err, answer)
		return resp, nil
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", operation, resp.StatusCode)] = true
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && json.Valid(answer) {
		c.answers = append(c.answers, recordedAnswer{Method: req.Method, Path: route.Path, Status: resp.StatusCode, Body: answer})
	}
	c.mu.Unlock()
	return resp, nil
}

// checkStrictly validates every answer that passed kin-openapi with ajv in strict mode too, which
// reads nullable and allOf exactly as OpenAPI 3.0 defines them, as typed clients do.
func (c *apiContract) checkStrictly() {
	c.t.Helper()
	node := lintTools(c.t)
	document := tempFile(c.t, "openapi.json", []byte(c.raw))
	c.mu.Lock()
	answers := slices.Clone(c.answers)
	c.mu.Unlock()
	if report := strictCheck(c.t, node, document, answers); report.Checked == 0 {
		c.t.Errorf("ajv checked %d of %d answers", report.Checked, len(answers))
	}
}

// use sends env's requests through the contract. A redirect is an answer to check, not to follow:
// where it leads is not Paygate's.
func (c *apiContract) use(env *testEnv) {
	env.client = &http.Client{Transport: c, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// expect sends a request through env, which must be using the contract, and checks its status.
// A request answered 2xx must itself be as the document describes.
func (c *apiContract) expect(env *testEnv, want int, method, path, credential string, body any, headers ...string) response {
	c.t.Helper()
	r := env.request(method, path, credential, body, headers...)
	if r.status != want {
		c.t.Errorf("%s %s = %d, want %d: %.300s", method, path, r.status, want, r.raw)
	}
	c.mu.Lock()
	requestErr := c.lastRequestErr
	c.mu.Unlock()
	if want < 300 && requestErr != nil {
		c.t.Errorf("%s %s succeeded with a request the document does not allow: %v", method, path, requestErr)
	}
	return r
}

// unseen lists the documented answers (all but default) no request has had.
func (c *apiContract) unseen() []string {
	var missing []string
	for path, item := range c.doc.Paths.Map() {
		for method, operation := range item.Operations() {
			for status := range operation.Responses.Map() {
				if status != "default" && !c.seen[operation.OperationID+" "+status] {
					missing = append(missing, fmt.Sprintf("%s %s (%s) %s", method, path, operation.OperationID, status))
				}
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// TestOpenAPIDocumentDescribesEveryRoute: the OpenAPI document names every REST route with the
// scope the route's operation needs, and nothing else.
func TestOpenAPIDocumentDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	contract := loadAPIContract(t, env)
	documented := map[string]bool{}
	for path, item := range contract.doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/api/v1/") {
				documented[method+" "+path] = true
			}
		}
	}
	delete(documented, "GET /api/v1/openapi.json") // the document itself, open to anyone
	for _, route := range apiRoutes {
		key := route.method + " " + route.path
		if !documented[key] {
			t.Errorf("%s is served and not documented", key)
			continue
		}
		delete(documented, key)
		operation := contract.doc.Paths.Find(route.path).GetOperation(route.method)
		scope, _ := operation.Extensions["x-required-scope"].(string)
		public := operation.Security != nil && len(*operation.Security) == 0
		if scope != route.op.Scope || public != route.op.Public {
			t.Errorf("%s documents scope %q, public %v; its operation %s needs %q, public %v", key, scope, public, route.op.Name, route.op.Scope, route.op.Public)
		}
	}
	for key := range documented {
		t.Errorf("%s is documented and not served", key)
	}
}

// TestEveryRouteAnswersAsDocumented sends real requests to every documented route, one for its
// success and one for each error status it documents, and checks each request and answer
// against the document with kin-openapi's openapi3filter, then each answer again with ajv in
// strict mode: a field, status or route that is not as the document says fails, and so does a
// documented answer no request could bring about.
func TestEveryRouteAnswersAsDocumented(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		contract := loadAPIContract(t, env)
		contract.use(env)
		checkDocumentedAnswers(t, contract, env, db)
		if missing := contract.unseen(); len(missing) > 0 {
			t.Errorf("documented answers no request brought about:\n%s", strings.Join(missing, "\n"))
		}
		// Last, as it skips without node: what came before stands on kin-openapi alone.
		contract.checkStrictly()
	})
}

func checkDocumentedAnswers(t *testing.T, c *apiContract, env *testEnv, db *database.DB) {
	ctx := databasetest.AsMerchant()
	admin := env.tokenFor("admin")
	viewer := env.staffToken("viewer") // the platform's, who reads the monitoring and the providers' webhooks
	developer := env.tokenFor("developer")
	// Keys holding one scope each: the one needed for each operation is missing from one of them.
	readPayments := env.apiKey(admin, "payments:read")
	readMonitoring := env.apiKey(admin, "monitoring:read")
	lacking := func(scope string) string {
		if scope == "payments:read" {
			return readMonitoring
		}
		return readPayments
	}
	tooLarge := `{"padding":"` + strings.Repeat("x", maxBodyBytes) + `"}`

	paymentID := str(get(c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/payments", admin,
		paymentBody("25.00", "USD", "4242424242424242")).data(), "id"))

	// The answers operations have in common: no credential, a credential without the scope, a
	// body too large, a body that is not JSON. They are asked of every route the operation's
	// rules say must give them, whatever the document says.
	for _, route := range apiRoutes {
		path := strings.NewReplacer("{id}", "none", "{delivery}", "none").Replace(route.path)
		if !route.op.Public {
			c.expect(env, http.StatusUnauthorized, route.method, path, "", nil)
		}
		if route.op.Scope != "" {
			c.expect(env, http.StatusForbidden, route.method, path, lacking(route.op.Scope), nil)
		}
		if route.method == http.MethodPost || route.method == http.MethodPut || route.method == http.MethodPatch {
			c.expect(env, http.StatusRequestEntityTooLarge, route.method, path, admin, tooLarge)
			c.expect(env, http.StatusUnsupportedMediaType, route.method, path, admin, `{}`, "Content-Type", "text/plain")
		}
	}

	// auth
	password := "correct horse battery staple"
	email := prefixid.New("user") + "@example.com"
	user := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": email, "password": password, "role": "operator"})
	userID := str(get(user.data(), "id"))
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": email, "password": password, "role": "viewer"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": "x@example.com", "password": password, "role": "owner"})
	login := c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	c.expect(env, http.StatusUnauthorized, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": "wrong password here"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"password": password})
	refreshToken := str(get(login.data(), "refresh_token"))
	refreshed := c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refreshToken})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{})
	c.expect(env, http.StatusUnauthorized, http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": "not a token"})
	session := str(get(refreshed.data(), "access_token"))
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/auth/logout", session, map[string]any{"unknown": true})
	// Another user's refresh token is theirs to end.
	otherEmail := prefixid.New("user") + "@example.com"
	c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": otherEmail, "password": password, "role": "viewer"})
	other := c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": otherEmail, "password": password}).data()
	c.expect(env, http.StatusForbidden, http.MethodPost, "/api/v1/auth/logout", session, map[string]any{"refresh_token": str(other["refresh_token"])})
	c.expect(env, http.StatusForbidden, http.MethodPost, "/api/v1/auth/revoke", session, map[string]any{"token": str(other["refresh_token"])})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/logout", session, map[string]any{"refresh_token": str(get(refreshed.data(), "refresh_token"))})
	second := c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": password}).data()
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/auth/revoke", str(second["access_token"]), map[string]any{})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/revoke", str(second["access_token"]), map[string]any{"token": str(second["refresh_token"])})

	// passwords: one's own, changed given the current one (an API key has none), and another's,
	// reset by an admin
	changer := prefixid.New("user") + "@example.com"
	changerID := str(get(c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": changer, "password": password, "role": "viewer"}).data(), "id"))
	mine := str(get(c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": changer, "password": password}).data(), "access_token"))
	newPassword := "a new password for the contract"
	c.expect(env, http.StatusUnauthorized, http.MethodPost, "/api/v1/auth/password", mine, map[string]any{"current_password": "not the password", "new_password": newPassword})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/auth/password", mine, map[string]any{"current_password": password, "new_password": "password123456"})
	c.expect(env, http.StatusForbidden, http.MethodPost, "/api/v1/auth/password", readPayments, map[string]any{"current_password": password, "new_password": newPassword})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/auth/password", mine, map[string]any{"current_password": password, "new_password": newPassword})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/users/"+changerID+"/password", admin, map[string]any{"new_password": "reset by an admin for the contract"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/users/"+changerID+"/password", admin, map[string]any{"new_password": "qwertyuiopas"})
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/users/usr_none/password", admin, map[string]any{"new_password": newPassword})

	// users
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/users?limit=2", admin, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/users?limit=many", admin, nil)
	c.expect(env, http.StatusOK, http.MethodPatch, "/api/v1/users/"+userID, admin, map[string]any{"role": "viewer"})
	c.expect(env, http.StatusBadRequest, http.MethodPatch, "/api/v1/users/"+userID, admin, map[string]any{"role": "owner"})
	c.expect(env, http.StatusNotFound, http.MethodPatch, "/api/v1/users/usr_none", admin, map[string]any{"disabled": true})
	c.expect(env, http.StatusConflict, http.MethodPatch, "/api/v1/users/"+env.subjectOf(admin), admin, map[string]any{"role": "viewer"})

	// merchants, and acting for one
	merchant := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "Acme Shoes"})
	merchantID := str(get(merchant.data(), "id"))
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/merchants", admin, map[string]any{})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/merchants?limit=1", admin, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/merchants?limit=0", admin, nil)
	c.expect(env, http.StatusOK, http.MethodPatch, "/api/v1/merchants/"+merchantID, admin, map[string]any{"name": "Acme Boots", "status": "disabled"})
	c.expect(env, http.StatusOK, http.MethodPatch, "/api/v1/merchants/"+merchantID, admin, map[string]any{"status": "active"})
	c.expect(env, http.StatusBadRequest, http.MethodPatch, "/api/v1/merchants/"+merchantID, admin, map[string]any{"status": "paused"})
	c.expect(env, http.StatusNotFound, http.MethodPatch, "/api/v1/merchants/mer_none", admin, map[string]any{"name": "none"})
	c.expect(env, http.StatusConflict, http.MethodPatch, "/api/v1/merchants/"+tenant.DefaultMerchant, admin, map[string]any{"status": "disabled"})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/users", admin, nil, "Paygate-Merchant", merchantID)
	c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": prefixid.New("user") + "@example.com", "password": password, "role": "admin"}, "Paygate-Merchant", merchantID)
	c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/users", admin, map[string]any{"email": prefixid.New("user") + "@example.com", "password": password, "role": "viewer", "platform": true})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/monitoring/metrics", admin, nil, "Paygate-Merchant", merchantID)
	c.expect(env, http.StatusForbidden, http.MethodGet, "/api/v1/users", admin, nil, "Paygate-Merchant", "mer_none")
	c.expect(env, http.StatusForbidden, http.MethodGet, "/api/v1/payments", developer, nil, "Paygate-Merchant", merchantID)

	// API keys
	key := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/api-keys", developer, map[string]any{"name": "ci", "scopes": []string{"payments:read"}})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/api-keys", developer, map[string]any{"scopes": []string{"payments:read"}})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/api-keys", developer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/api-keys?limit=0", developer, nil)
	c.expect(env, http.StatusOK, http.MethodDelete, "/api/v1/api-keys/"+str(get(key.data(), "id")), developer, nil)
	c.expect(env, http.StatusNotFound, http.MethodDelete, "/api/v1/api-keys/key_none", developer, nil)
	for range 100 { // the most a user holds in force
		env.apiKey(developer, "payments:read")
	}
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/api-keys", developer, map[string]any{"name": "one more", "scopes": []string{"payments:read"}})

	// payments
	c.expect(env, http.StatusPaymentRequired, http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4000000000000002"))
	stripeSwitches := env.app.services.providers.sandboxes["stripe"].Switches()
	stripeSwitches.LoseAnswers.Store(true)
	c.expect(env, http.StatusAccepted, http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242"))
	stripeSwitches.LoseAnswers.Store(false)
	missing := paymentBody("10.00", "USD", "4242424242424242")
	delete(missing, "currency")
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/payments", admin, missing)
	body := paymentBody("11.00", "USD", "4242424242424242")
	c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/payments", admin, body, "Idempotency-Key", "contract-1")
	replay := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/payments", admin, body, "Idempotency-Key", "contract-1")
	if replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a replay says Idempotent-Replayed %q", replay.header.Get("Idempotent-Replayed"))
	}
	c.expect(env, http.StatusUnprocessableEntity, http.MethodPost, "/api/v1/payments", admin, paymentBody("12.00", "USD", "4242424242424242"), "Idempotency-Key", "contract-1")
	// A key still held by a request under way.
	held, err := db.Ent.IdempotencyKey.Query().First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ent.IdempotencyKey.Create().SetPrincipal(env.subjectOf(admin)).SetKey("contract-running").SetRequestHash(held.RequestHash).
		SetResourceID("pay_running").SetExpiresAt(time.Now().Add(idempotency.TTL)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/payments", admin, body, "Idempotency-Key", "contract-running")
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/payments?limit=5&status=succeeded&currency=USD&amount_gte=1.00&created_gte=2020-01-01T00:00:00Z", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/payments?status=paid", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/payments/"+paymentID, viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/payments/pay_none", viewer, nil)

	// refunds
	refunds := "/api/v1/payments/" + paymentID + "/refunds"
	c.expect(env, http.StatusCreated, http.MethodPost, refunds, admin, map[string]any{"amount": "5.00", "reason": "requested_by_customer"}, "Idempotency-Key", "contract-refund")
	c.expect(env, http.StatusUnprocessableEntity, http.MethodPost, refunds, admin, map[string]any{"amount": "100.00"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, refunds, admin, map[string]any{"amount": nil})
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/payments/pay_none/refunds", admin, nil)
	declined := str(get(env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4000000000000002")).body, "data", "id"))
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/payments/"+declined+"/refunds", admin, nil)
	c.expect(env, http.StatusOK, http.MethodGet, refunds+"?limit=1", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, refunds+"?limit=0", viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/payments/pay_none/refunds", viewer, nil)

	// captures and cancellations: USD goes to Stripe, which captures at once
	manual := func() string {
		return str(get(env.request(http.MethodPost, "/api/v1/payments", admin, manualBody("20.00", "USD")).body, "data", "id"))
	}
	authorised := manual()
	c.expect(env, http.StatusUnprocessableEntity, http.MethodPost, "/api/v1/payments/"+authorised+"/capture", admin, map[string]any{"amount": "20.01"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/payments/"+authorised+"/capture", admin, map[string]any{"amount": nil})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/payments/"+authorised+"/capture", admin, map[string]any{"amount": "10.00"}, "Idempotency-Key", "contract-capture")
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/payments/"+authorised+"/capture", admin, nil)
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/payments/pay_none/capture", admin, nil)
	voided := manual()
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/payments/"+voided+"/cancel", admin, map[string]any{"reason": "expired"})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/payments/"+voided+"/cancel", admin, map[string]any{"reason": "duplicate"}, "Idempotency-Key", "contract-cancel")
	c.expect(env, http.StatusUnprocessableEntity, http.MethodPost, "/api/v1/payments/"+voided+"/cancel", admin, map[string]any{"reason": "fraudulent"}, "Idempotency-Key", "contract-cancel")
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/payments/"+voided+"/cancel", admin, nil)
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/payments/pay_none/cancel", admin, nil)
	// A lost answer is 202; a provider that did nothing, 502.
	lostCapture, lostCancel, refusedCapture, refusedCancel := manual(), manual(), manual(), manual()
	stripeSwitches.LoseAnswers.Store(true)
	c.expect(env, http.StatusAccepted, http.MethodPost, "/api/v1/payments/"+lostCapture+"/capture", admin, nil)
	c.expect(env, http.StatusAccepted, http.MethodPost, "/api/v1/payments/"+lostCancel+"/cancel", admin, nil)
	stripeSwitches.LoseAnswers.Store(false)
	stripeSwitches.Outage.Store(true)
	c.expect(env, http.StatusBadGateway, http.MethodPost, "/api/v1/payments/"+refusedCapture+"/capture", admin, nil)
	c.expect(env, http.StatusBadGateway, http.MethodPost, "/api/v1/payments/"+refusedCancel+"/cancel", admin, nil)

	// 3-D Secure: a payment waiting for its shopper, whose browser comes back with the payment's
	// return secret before and after authenticating; without it, or for a payment without a
	// return_url, the payment is not found.
	returnSecrets := env.returnSecrets()
	waiting := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/payments", admin,
		authenticationBody("15.00", "USD", provider.AuthenticateThenApprove, "https://shop.example/back?order=1"))
	authenticating := str(get(waiting.data(), "id"))
	c.expect(env, http.StatusSeeOther, http.MethodGet, "/api/v1/payments/"+authenticating+"/return?"+payment.ReturnQuery(returnSecrets(authenticating)), "", nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/payments/"+authenticating+"/return", "", nil)
	back, err := url.Parse(returnOf(t, str(get(waiting.data(), "next_action", "redirect_to_url", "url")), "complete"))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.expect(env, http.StatusSeeOther, http.MethodGet, back.RequestURI(), "", nil); !strings.Contains(r.header.Get("Location"), "status=succeeded") {
		t.Errorf("the shopper back from authenticating is sent to %s", r.header.Get("Location"))
	}
	plain := str(get(env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("16.00", "USD", provider.AuthenticateThenApprove)).data(), "id"))
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/payments/"+plain+"/return", "", nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/payments/"+plain+"/return?x="+strings.Repeat("a", 9000), "", nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/payments/pay_none/return", "", nil)
	stripeSwitches.Outage.Store(false)

	// monitoring
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/monitoring/metrics", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/monitoring/overview?period=week", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/monitoring/overview?period=year", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/monitoring/providers", viewer, nil)
	alert, err := db.Ent.Alert.Create().SetRule("circuit_open").SetSubject("stripe").SetSeverity(state.AlertCritical).
		SetMessage("stripe's circuit opened").SetOpenedAt(time.Now().UTC()).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/monitoring/alerts?status=open&limit=5", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/monitoring/alerts?status=closed", viewer, nil)
	alertPath := "/api/v1/monitoring/alerts/" + alert.ID
	for _, action := range []string{"acknowledge", "resolve"} {
		c.expect(env, http.StatusBadRequest, http.MethodPost, alertPath+"/"+action, admin, map[string]any{"note": "x"})
		c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/monitoring/alerts/alr_none/"+action, admin, nil)
	}
	c.expect(env, http.StatusOK, http.MethodPost, alertPath+"/acknowledge", admin, map[string]any{})
	c.expect(env, http.StatusOK, http.MethodPost, alertPath+"/resolve", admin, nil)
	c.expect(env, http.StatusConflict, http.MethodPost, alertPath+"/acknowledge", admin, nil)
	c.expect(env, http.StatusConflict, http.MethodPost, alertPath+"/resolve", admin, nil)

	// configuration
	config := c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/admin/config", admin, nil)
	document := config.data()
	c.expect(env, http.StatusOK, http.MethodPut, "/api/v1/admin/config", admin, document)
	c.expect(env, http.StatusConflict, http.MethodPut, "/api/v1/admin/config", admin, document)
	delete(document, "version")
	c.expect(env, http.StatusBadRequest, http.MethodPut, "/api/v1/admin/config", admin, document)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/admin/config/history?limit=1", admin, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/admin/config/history?before=zero", admin, nil)

	// webhooks: simulated, tested, received, logged and retried
	c.expect(env, http.StatusAccepted, http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": paymentID, "type": "dispute"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"type": "dispute"})
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": "pay_none", "type": "dispute"})
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": declined, "type": "refund"})
	endpoint, _ := merchantEndpoint(t, http.StatusOK, "thanks")
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"url": endpoint.URL + "/hooks"})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"url": "ftp://example.com/hooks"})
	// One test webhook at a time per caller: another while the first waits on its endpoint is 409.
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
	}))
	defer slow.Close()
	first := make(chan response, 1)
	go func() {
		first <- env.request(http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"url": slow.URL + "/hooks"})
	}()
	select {
	case <-arrived:
		c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"url": endpoint.URL + "/hooks"})
	case <-time.After(20 * time.Second):
		t.Error("the first test webhook never reached its endpoint")
	}
	close(release)
	if r := <-first; r.status != http.StatusOK {
		t.Errorf("the first test webhook = %d %s", r.status, r.raw)
	}

	now := time.Now()
	stripeBody := stripeEventBody(prefixid.New("evt"), "payment_intent.succeeded", map[string]any{"id": "pi_contract", "metadata": map[string]any{}})
	c.expect(env, http.StatusOK, http.MethodPost, "/webhooks/stripe", "", stripeBody, stripeDelivery(stripeBody, testStripeSecret, now)...)
	c.expect(env, http.StatusUnauthorized, http.MethodPost, "/webhooks/stripe", "", stripeBody)
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/webhooks/stripe", "", `{"id":"x"}`, stripeDelivery(`{"id":"x"}`, testStripeSecret, now)...)
	c.expect(env, http.StatusNotFound, http.MethodPost, "/webhooks/paypal", "", stripeBody)
	c.expect(env, http.StatusRequestEntityTooLarge, http.MethodPost, "/webhooks/stripe", "", tooLarge)
	checkoutBody := `{"id":"` + prefixid.New("evt") + `","type":"payment_approved","data":{"id":"pay_cko","reference":"pay_none"}}`
	c.expect(env, http.StatusOK, http.MethodPost, "/webhooks/checkout", "", checkoutBody, checkoutSignature(checkoutBody, testCheckoutSecret)...)

	dead := env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: now})
	processed := env.storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "charge.refunded", status: state.WebhookProcessed, received: now})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/webhooks/logs?provider=adyen&status=dead&limit=5", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/webhooks/logs?provider=paypal", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/webhooks/logs/"+dead.ID, viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/webhooks/logs/whe_none", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhooks/logs/"+dead.ID+"/retry", admin, map[string]any{"now": true})
	c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/webhooks/logs/"+dead.ID+"/retry", admin, nil)
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/webhooks/logs/"+processed.ID+"/retry", admin, nil)
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/webhooks/logs/whe_none/retry", admin, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/webhooks/metrics", viewer, nil)

	// events: every change of a payment's status, and every refund's outcome, wrote one
	all := c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events?limit=100", viewer, nil)
	if list, _ := all.body["data"].([]any); len(list) == 0 {
		t.Error("no events listed after payments were made")
	}
	succeeded := c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events?limit=5&type=payment.succeeded", viewer, nil)
	eventID := str(get(succeeded.body, "data", 0, "id"))
	if eventID == "" {
		t.Fatalf("no payment.succeeded event: %.300s", succeeded.raw)
	}
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events?type=refund.succeeded", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events?limit=1&starting_after="+eventID, viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events?ending_before="+eventID, viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/events?type=payment.paid", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/events?status=succeeded", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/events?starting_after=evt_none", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/events/"+eventID, viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/events/evt_none", viewer, nil)

	// webhook endpoints, on a loopback server (development takes one), and their deliveries
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	made := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/webhook-endpoints", admin,
		map[string]any{"url": receiver.URL + "/events", "events": []string{"payment.succeeded"}, "description": "contract"})
	endpointID := str(get(made.data(), "id"))
	if str(get(made.data(), "secret")) == "" {
		t.Errorf("a new endpoint is answered without its secret: %s", made.raw)
	}
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": "ftp://example.com/hooks", "events": []string{"*"}})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": receiver.URL, "events": []string{"payment.paid"}})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": receiver.URL})
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/webhook-endpoints?limit=2", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/webhook-endpoints?limit=0", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, "/api/v1/webhook-endpoints?status=enabled", viewer, nil)
	endpointPath := "/api/v1/webhook-endpoints/" + endpointID
	if r := c.expect(env, http.StatusOK, http.MethodGet, endpointPath, viewer, nil); get(r.data(), "secret") != nil {
		t.Errorf("an endpoint read is answered with its secret: %s", r.raw)
	}
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/webhook-endpoints/we_none", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodPatch, endpointPath, admin, map[string]any{"events": []string{"*"}, "description": "contract, changed"})
	c.expect(env, http.StatusOK, http.MethodPatch, endpointPath, admin, map[string]any{"status": "disabled"})
	c.expect(env, http.StatusOK, http.MethodPatch, endpointPath, admin, map[string]any{"status": "enabled", "url": receiver.URL + "/hooks"})
	c.expect(env, http.StatusBadRequest, http.MethodPatch, endpointPath, admin, map[string]any{"status": "paused"})
	c.expect(env, http.StatusBadRequest, http.MethodPatch, endpointPath, admin, map[string]any{"events": []string{}})
	c.expect(env, http.StatusNotFound, http.MethodPatch, "/api/v1/webhook-endpoints/we_none", admin, map[string]any{"description": "none"})
	rotated := c.expect(env, http.StatusOK, http.MethodPost, endpointPath+"/rotate-secret", admin, nil)
	if secret := str(get(rotated.data(), "secret")); secret == "" || secret == str(get(made.data(), "secret")) {
		t.Errorf("a rotated endpoint is answered with the secret %q", secret)
	}
	c.expect(env, http.StatusOK, http.MethodPost, endpointPath+"/rotate-secret", admin, map[string]any{})
	c.expect(env, http.StatusBadRequest, http.MethodPost, endpointPath+"/rotate-secret", admin, map[string]any{"now": true})
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/webhook-endpoints/we_none/rotate-secret", admin, nil)

	// A test event to the endpoint is one of its deliveries.
	tested := c.expect(env, http.StatusOK, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"endpoint_id": endpointID, "type": "refund.succeeded"})
	deliveryID := str(get(tested.data(), "delivery_id"))
	if deliveryID == "" {
		t.Fatalf("a test event to an endpoint names no delivery: %s", tested.raw)
	}
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"endpoint_id": endpointID, "url": receiver.URL})
	c.expect(env, http.StatusBadRequest, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{})
	c.expect(env, http.StatusNotFound, http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"endpoint_id": "we_none"})
	deliveries := endpointPath + "/deliveries"
	c.expect(env, http.StatusOK, http.MethodGet, deliveries+"?limit=5&status=delivered", viewer, nil)
	c.expect(env, http.StatusOK, http.MethodGet, deliveries+"?starting_after="+deliveryID, viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, deliveries+"?status=lost", viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodGet, deliveries+"?starting_after=wd_none", viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/webhook-endpoints/we_none/deliveries", viewer, nil)
	if r := c.expect(env, http.StatusOK, http.MethodGet, deliveries+"/"+deliveryID, viewer, nil); get(r.data(), "attempt_log", 0) == nil {
		t.Errorf("a delivered test event has no tries in its log: %s", r.raw)
	}
	c.expect(env, http.StatusNotFound, http.MethodGet, deliveries+"/wd_none", viewer, nil)
	c.expect(env, http.StatusNotFound, http.MethodGet, "/api/v1/webhook-endpoints/we_none/deliveries/"+deliveryID, viewer, nil)
	c.expect(env, http.StatusBadRequest, http.MethodPost, deliveries+"/"+deliveryID+"/retry", admin, map[string]any{"now": true})
	c.expect(env, http.StatusOK, http.MethodPost, deliveries+"/"+deliveryID+"/retry", admin, nil)
	c.expect(env, http.StatusNotFound, http.MethodPost, deliveries+"/wd_none/retry", admin, nil)

	// At most 16 endpoints exist at once; the ones made to reach the limit go again.
	existing, _ := env.listIDs(viewer, "/api/v1/webhook-endpoints?limit=100")
	var extra []string
	for range 16 - len(existing) {
		r := c.expect(env, http.StatusCreated, http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": receiver.URL, "events": []string{"dispute.created"}})
		extra = append(extra, str(get(r.data(), "id")))
	}
	c.expect(env, http.StatusConflict, http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": receiver.URL, "events": []string{"dispute.created"}})
	for _, id := range extra {
		c.expect(env, http.StatusOK, http.MethodDelete, "/api/v1/webhook-endpoints/"+id, admin, nil)
	}
	c.expect(env, http.StatusNotFound, http.MethodDelete, "/api/v1/webhook-endpoints/we_none", admin, nil)

	// what is not under /api/v1
	c.expect(env, http.StatusOK, http.MethodGet, "/metrics", readMonitoring, nil)
	c.expect(env, http.StatusUnauthorized, http.MethodGet, "/metrics", "", nil)
	c.expect(env, http.StatusForbidden, http.MethodGet, "/metrics", readPayments, nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/healthz", "", nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/readyz", "", nil)
	c.expect(env, http.StatusOK, http.MethodGet, "/api/v1/openapi.json", "", nil)

	// When every provider is down, a payment fails with nothing charged, and so does a refund.
	down := newTestEnv(t, db, "PAYGATE_SANDBOX_OUTAGE=stripe,adyen,checkout")
	c.use(down)
	c.expect(down, http.StatusBadGateway, http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242"))
	c.expect(down, http.StatusBadGateway, http.MethodPost, refunds, admin, map[string]any{"amount": "1.00"})

	// A server whose database is gone is not ready.
	gone := databasetest.SQLite(t)
	unready := newTestEnv(t, gone)
	c.use(unready)
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}
	c.expect(unready, http.StatusServiceUnavailable, http.MethodGet, "/readyz", "", nil)

	// Spent rate limits: one request a second, one at a time, for every caller.
	limited := newTestEnv(t, db)
	c.use(limited)
	limited.app.fixedRateLimits.Store(&settings.RateLimits{PerSecond: 1, Burst: 1, LoginPerMinute: 1})
	limitedAdmin := limited.tokenFor("admin")
	type limitedRoute struct {
		method, path string
		public       bool
	}
	routes := []limitedRoute{{http.MethodGet, "/api/v1/openapi.json", true}}
	for _, route := range apiRoutes {
		routes = append(routes, limitedRoute{route.method, route.path, route.op.Public})
	}
	for _, route := range routes {
		path := strings.NewReplacer("{id}", "none", "{delivery}", "none").Replace(route.path)
		credential := limitedAdmin
		if route.public {
			credential = ""
		}
		var body any
		if route.method != http.MethodGet && route.method != http.MethodDelete {
			body = map[string]any{}
		}
		// The first request may spend the last token; a bucket refills one a second, far slower
		// than these requests come.
		for attempt := 0; ; attempt++ {
			r := limited.request(route.method, path, credential, body)
			if r.status == http.StatusTooManyRequests {
				break
			}
			if attempt == 3 {
				t.Errorf("%s %s was never rate limited", route.method, path)
				break
			}
		}
	}
}
