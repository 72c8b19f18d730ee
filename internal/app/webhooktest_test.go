package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/internal/database/databasetest"
)

const testWebhookPath = "/api/v1/webhooks/test"

const sendTestWebhookMutation = `mutation($in: SendTestWebhookInput!) {
	sendTestWebhook(input: $in) { eventId statusCode latencyMs responseExcerpt secret error } }`

// delivery is a request a merchant's endpoint received.
type delivery struct {
	header http.Header
	body   []byte
}

// merchantEndpoint is a merchant's webhook endpoint answering status and answer; it hands over
// what it receives.
func merchantEndpoint(t *testing.T, status int, answer string) (*httptest.Server, <-chan delivery) {
	t.Helper()
	received := make(chan delivery, 10)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- delivery{r.Header.Clone(), body}
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(server.Close)
	return server, received
}

// checkSigned verifies a delivery as a merchant's endpoint would, with the Standard Webhooks
// library, which also holds its timestamp recent; the body is a test event of eventType.
func checkSigned(t *testing.T, d delivery, secret, eventID, eventType string) map[string]any {
	t.Helper()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.Verify(d.body, d.header); err != nil || d.header.Get("webhook-id") != eventID {
		t.Errorf("the delivery of %s (webhook-id %q) does not verify under %q: %v", eventID, d.header.Get("webhook-id"), secret, err)
	}
	if d.header.Get("Content-Type") != "application/json" || d.header.Get("User-Agent") != "Paygate-Webhooks/1.0" {
		t.Errorf("headers = %v", d.header)
	}
	var event map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.body))
	dec.UseNumber()
	if err := dec.Decode(&event); err != nil {
		t.Fatalf("body %s: %v", d.body, err)
	}
	created, err := time.Parse(time.RFC3339, str(event["created_at"]))
	if err != nil || created.Location() != time.UTC || time.Since(created) > time.Minute || str(event["created_at"]) != created.Format(time.RFC3339) {
		t.Errorf("created_at = %v", event["created_at"])
	}
	if timestamp := d.header.Get("webhook-timestamp"); timestamp != strconv.FormatInt(created.Unix(), 10) {
		t.Errorf("signed at %s, created at %v", timestamp, created)
	}
	if event["id"] != eventID || !strings.HasPrefix(eventID, "evt_test_") || event["type"] != eventType || event["object"] != "event" || len(event) != 5 {
		t.Errorf("event = %s, want %s of type %s", d.body, eventID, eventType)
	}
	object, _ := get(event, "data", "object").(map[string]any)
	if object == nil {
		t.Fatalf("no data.object in %s", d.body)
	}
	return object
}

// TestSendTestWebhook: REST and GraphQL send one signed test event and say what came back: the
// secret made for it when none was given, the endpoint's status and the start of its answer.
func TestSendTestWebhook(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	operator := env.tokenFor("operator")
	endpoint, received := merchantEndpoint(t, http.StatusOK, "  thanks\n")

	r := env.request(http.MethodPost, testWebhookPath, operator, map[string]any{"url": endpoint.URL + "/webhooks/paygate"})
	if r.status != http.StatusOK {
		t.Fatalf("POST %s = %d %s", testWebhookPath, r.status, r.raw)
	}
	data := r.data()
	secret := str(data["secret"])
	if !strings.HasPrefix(secret, "whsec_") || str(data["status_code"]) != "200" || data["response_excerpt"] != "thanks" ||
		data["error"] != nil || data["latency_ms"] == nil {
		t.Errorf("REST answer = %s", r.raw)
	}
	payment := checkSigned(t, <-received, secret, str(data["event_id"]), "payment.succeeded")
	if !strings.HasPrefix(str(payment["id"]), "pay_test_") || payment["object"] != "payment" || str(payment["amount"]) != "10.00" ||
		payment["currency"] != "USD" || payment["status"] != "succeeded" {
		t.Errorf("payment = %v", payment)
	}

	// GraphQL, with a secret of the merchant's and another type.
	out := env.mustGraphQL(operator, sendTestWebhookMutation, map[string]any{"in": map[string]any{
		"url": endpoint.URL, "type": "refund.failed", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	sent, _ := out["sendTestWebhook"].(map[string]any)
	if sent["secret"] != nil || str(sent["statusCode"]) != "200" || sent["responseExcerpt"] != "thanks" || sent["error"] != nil {
		t.Errorf("GraphQL answer = %v", out)
	}
	refund := checkSigned(t, <-received, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", str(sent["eventId"]), "refund.failed")
	if !strings.HasPrefix(str(refund["id"]), "re_test_") || refund["object"] != "refund" || refund["status"] != "failed" {
		t.Errorf("refund = %v", refund)
	}

	// To a webhook endpoint: signed with its secret, and one of its deliveries, in its log.
	made := env.request(http.MethodPost, "/api/v1/webhook-endpoints", operator, map[string]any{"url": endpoint.URL, "events": []string{"refund.succeeded"}})
	endpointID, endpointSecret := str(made.data()["id"]), str(made.data()["secret"])
	r = env.request(http.MethodPost, testWebhookPath, operator, map[string]any{"endpoint_id": endpointID, "type": "payment.canceled"})
	data = r.data()
	if r.status != http.StatusOK || data["secret"] != nil || str(data["status_code"]) != "200" || !strings.HasPrefix(str(data["delivery_id"]), "wd_") {
		t.Fatalf("a test event to an endpoint = %d %s", r.status, r.raw)
	}
	checkSigned(t, <-received, endpointSecret, str(data["event_id"]), "payment.canceled")
	logged := env.request(http.MethodGet, "/api/v1/webhook-endpoints/"+endpointID+"/deliveries/"+str(data["delivery_id"]), operator, nil).data()
	if logged["event_id"] != data["event_id"] || logged["type"] != "payment.canceled" || logged["status"] != "delivered" || len(get(logged, "attempt_log").([]any)) != 1 {
		t.Errorf("the test delivery in the endpoint's log = %v", logged)
	}
	if r := env.request(http.MethodPost, testWebhookPath, operator, map[string]any{"endpoint_id": endpointID, "url": endpoint.URL}); r.status != http.StatusBadRequest {
		t.Errorf("an endpoint and a url = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPost, testWebhookPath, operator, map[string]any{"endpoint_id": "we_none"}); r.status != http.StatusNotFound {
		t.Errorf("an unknown endpoint = %d %s", r.status, r.raw)
	}
}

// TestTestWebhookOutcomesAgree: whatever the endpoint does, REST and GraphQL report it alike, and
// an endpoint that answers nothing is a 200 saying why.
func TestTestWebhookOutcomesAgree(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	operator := env.tokenFor("operator")
	failing, _ := merchantEndpoint(t, http.StatusInternalServerError, `{"error":"database down"}`)
	var followed atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusMovedPermanently))
	defer redirecting.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	big, _ := merchantEndpoint(t, http.StatusOK, strings.Repeat("x", 5<<20))

	for _, tc := range []struct {
		name, url, status, excerpt, error string
	}{
		{"500", failing.URL, "500", `{"error":"database down"}`, ""},
		{"redirect", redirecting.URL, "301", "", ""},
		{"5 MB", big.URL, "200", strings.Repeat("x", 1024), ""},
		{"refused", closed.URL, "", "", "refused"},
	} {
		r := env.request(http.MethodPost, testWebhookPath, operator, map[string]any{"url": tc.url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		out := env.mustGraphQL(operator, sendTestWebhookMutation, map[string]any{"in": map[string]any{"url": tc.url, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
		rest, gql := r.data(), get(out, "sendTestWebhook")
		if r.status != http.StatusOK {
			t.Errorf("%s: REST %d %s", tc.name, r.status, r.raw)
		}
		for _, answer := range []struct {
			surface                        string
			status, excerpt, error, secret any
		}{
			{"REST", rest["status_code"], rest["response_excerpt"], rest["error"], rest["secret"]},
			{"GraphQL", get(gql, "statusCode"), get(gql, "responseExcerpt"), get(gql, "error"), get(gql, "secret")},
		} {
			if str(answer.status) != tc.status || answer.excerpt != tc.excerpt || answer.secret != nil ||
				(tc.error == "") != (answer.error == nil) || !strings.Contains(str(answer.error), tc.error) {
				t.Errorf("%s over %s: status %v, excerpt %.40q, error %v, secret %v", tc.name, answer.surface, answer.status, answer.excerpt, answer.error, answer.secret)
			}
		}
		if tc.status == "" && (rest["status_code"] != nil || !strings.Contains(r.raw, `"status_code":null`)) {
			t.Errorf("%s: status_code should be null: %s", tc.name, r.raw)
		}
	}
	if followed.Load() != 0 {
		t.Error("a redirect was followed")
	}
}

// TestTestWebhookRefused: a request that may not be sent is refused alike over REST and GraphQL,
// before anything is sent: bad input (400 naming it), a destination in Paygate's own networks in
// production (400 on url, naming the kind of address and not the address), a principal without
// webhooks:manage (401, 403).
func TestTestWebhookRefused(t *testing.T) {
	t.Parallel()
	db := databasetest.SQLite(t)
	development := newTestEnv(t, db)
	production := newTestEnv(t, db, "PAYGATE_ENV=production", "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
	var reached atomic.Int32
	endpoint := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer endpoint.Close()
	port := endpoint.URL[strings.LastIndex(endpoint.URL, ":")+1:]
	host := strings.TrimPrefix(endpoint.URL, "http://")

	type attempt struct {
		env          *testEnv
		token        string
		input        map[string]any
		status       int
		code, param  string
		mustNotName  string
		messageNames string
	}
	var attempts []attempt
	operator := development.tokenFor("operator")
	for _, url := range []string{"ftp://" + host + "/", "http://", "http:///no-host", "/relative", "http://user:pw@" + host + "/",
		"http://" + host + "/" + strings.Repeat("a", 2048)} {
		attempts = append(attempts, attempt{env: development, token: operator, input: map[string]any{"url": url},
			status: 400, code: "invalid_request", param: "url"})
	}
	attempts = append(attempts,
		attempt{env: development, token: operator, input: map[string]any{"url": endpoint.URL, "type": "payment.created"}, status: 400, code: "invalid_request", param: "type"},
		attempt{env: development, token: operator, input: map[string]any{"url": endpoint.URL, "secret": "short"}, status: 400, code: "invalid_request", param: "secret"},
		attempt{env: development, token: operator, input: map[string]any{"url": ""}, status: 400, code: "missing_field", param: "url"},
		attempt{env: development, token: "", input: map[string]any{"url": endpoint.URL}, status: 401, code: "unauthenticated"},
		attempt{env: development, token: development.tokenFor("viewer"), input: map[string]any{"url": endpoint.URL}, status: 403, code: "forbidden"},
		attempt{env: development, token: development.tokenFor("developer"), input: map[string]any{"url": endpoint.URL}, status: 403, code: "forbidden"},
		attempt{env: development, token: operator, input: map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, status: 400, code: "invalid_request", param: "url", messageNames: "link-local"},
	)
	admin := production.tokenFor("admin")
	for url, kind := range map[string]string{
		"http://127.0.0.1:" + port + "/":                 "loopback",
		"http://localhost:" + port + "/":                 "loopback",
		"http://[::1]:" + port + "/":                     "loopback",
		"http://[::ffff:127.0.0.1]:" + port + "/":        "loopback",
		"http://10.0.0.1/":                               "private",
		"http://169.254.169.254/latest/meta-data/":       "link-local",
		"http://100.64.0.1/":                             "shared",
		"https://localhost:" + port + "/?to=10.0.0.1:80": "loopback",
	} {
		attempts = append(attempts, attempt{env: production, token: admin, input: map[string]any{"url": url}, status: 400,
			code: "invalid_request", param: "url", messageNames: kind, mustNotName: "127.0.0.1"})
	}

	for _, a := range attempts {
		r := a.env.request(http.MethodPost, testWebhookPath, a.token, a.input)
		code, param := r.errorCode()
		message := str(get(r.body, "error", "message"))
		if r.status != a.status || code != a.code || param != a.param || !strings.Contains(message, a.messageNames) {
			t.Errorf("REST %.80v = %d %s", a.input, r.status, r.raw)
		}
		_, errs := a.env.graphql(a.token, sendTestWebhookMutation, map[string]any{"in": a.input})
		if len(errs) != 1 || errs[0].code() != a.code || str(errs[0].Extensions["param"]) != a.param || errs[0].Message != message {
			t.Errorf("GraphQL %.80v = %+v, REST said %q", a.input, errs, message)
		}
		if a.mustNotName != "" && !strings.Contains(str(a.input["url"]), a.mustNotName) && strings.Contains(message, a.mustNotName) {
			t.Errorf("%v: the refusal names an address the URL did not: %s", a.input, message)
		}
	}
	if reached.Load() != 0 {
		t.Errorf("the endpoint was reached %d times by refused requests", reached.Load())
	}

	// The REST body is read strictly, and the route takes POST alone.
	r := development.request(http.MethodPost, testWebhookPath, operator, map[string]any{"url": endpoint.URL, "URL": endpoint.URL})
	if code, param := r.errorCode(); r.status != 400 || code != "invalid_request" || param != "URL" {
		t.Errorf("unknown field = %d %s", r.status, r.raw)
	}
	r = development.request(http.MethodGet, testWebhookPath, operator, nil)
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Errorf("GET %s = %d %v", testWebhookPath, r.status, r.header)
	}
}

// TestOneTestWebhookPerRequest: aliases of sendTestWebhook send nothing, so one request cannot
// make Paygate call a URL a hundred times.
func TestOneTestWebhookPerRequest(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	endpoint, received := merchantEndpoint(t, http.StatusOK, "")
	var aliases strings.Builder
	for i := range 10 {
		fmt.Fprintf(&aliases, ` a%d: sendTestWebhook(input: {url: %q}) { statusCode }`, i, endpoint.URL)
	}
	data, errs := env.graphql(env.tokenFor("operator"), "mutation {"+aliases.String()+"}", nil)
	if len(errs) != 1 || errs[0].code() != "invalid_request" || data != nil {
		t.Errorf("10 sendTestWebhook = %v %+v", data, errs)
	}
	if len(received) != 0 {
		t.Errorf("%d test webhooks were sent by a refused request", len(received))
	}
}
