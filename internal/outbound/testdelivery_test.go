package outbound

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	events "github.com/paygate/paygate/internal/event"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
)

// asRole is a context of a principal with role's scopes.
func asRole(subject, role string) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: subject, UserID: subject, Role: role, Scopes: auth.ScopesOf(role), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant, Platform: true})
}

// asKey is a context whose principal is an API key of userID, with role's scopes.
func asKey(keyID, userID, role string) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: keyID, UserID: userID, Scopes: auth.ScopesOf(role), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant})
}

// received is one request a fake endpoint took.
type received struct {
	header http.Header
	body   []byte
}

// endpoint is a merchant's endpoint answering status and answer, which keeps what it receives.
func endpoint(t *testing.T, status int, answer string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 10)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Header.Clone(), body}
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(server.Close)
	return server, got
}

// merchantSecret is a signing secret of a merchant's, as Standard Webhooks secrets are.
const merchantSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// verifies checks a delivery as a merchant would, with the Standard Webhooks library: it verifies
// under secret, and not once its body is changed or under another secret.
func verifies(t *testing.T, r received, secret string) {
	t.Helper()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
		t.Errorf("the Standard Webhooks library refuses the delivery: %v", err)
	}
	if err := verifier.VerifyIgnoringTimestamp(append([]byte(" "), r.body...), r.header); err == nil {
		t.Error("a changed body verifies")
	}
	other, _ := standardwebhooks.NewWebhook(NewSigningSecret())
	if err := other.VerifyIgnoringTimestamp(r.body, r.header); err == nil {
		t.Error("the delivery verifies under another secret")
	}
}

// TestTestEventSigned: the event reaches the endpoint signed under the given secret, or under one
// made for it and answered, with its headers, in the event's shape, and the answer is reported.
func TestTestEventSigned(t *testing.T) {
	server, got := endpoint(t, http.StatusOK, "  received\n")
	at := time.Date(2026, 11, 24, 9, 30, 15, 123456789, time.UTC)
	sender := testSender(NewSender(false, 0), func() time.Time { return at })
	ctx := asRole("usr_1", "operator")

	d, err := sender.Send(ctx, TestWebhookRequest{URL: server.URL + "/hooks?x=1#frag", Secret: merchantSecret})
	if err != nil {
		t.Fatal(err)
	}
	if d.StatusCode != http.StatusOK || d.ResponseExcerpt != "received" || d.Secret != "" || d.Error != "" || d.Latency <= 0 {
		t.Errorf("delivery = %+v", d)
	}
	r := <-got
	verifies(t, r, merchantSecret)
	if r.header.Get("webhook-timestamp") != strconv.FormatInt(at.Unix(), 10) || r.header.Get("webhook-id") != d.EventID {
		t.Errorf("webhook-timestamp %q, webhook-id %q; want %d and %s", r.header.Get("webhook-timestamp"), r.header.Get("webhook-id"), at.Unix(), d.EventID)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "User-Agent": "Paygate-Webhooks/1.0"} {
		if r.header.Get(name) != want {
			t.Errorf("%s = %q, want %q", name, r.header.Get(name), want)
		}
	}
	var event struct {
		ID        string `json:"id"`
		Object    string `json:"object"`
		Type      string `json:"type"`
		CreatedAt string `json:"created_at"`
		Data      struct {
			Object map[string]any `json:"object"`
		} `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&event); err != nil {
		t.Fatalf("event %s: %v", r.body, err)
	}
	if event.ID != d.EventID || !strings.HasPrefix(event.ID, "evt_test_") || event.Type != "payment.succeeded" ||
		event.CreatedAt != "2026-11-24T09:30:15Z" || event.Object != "event" {
		t.Errorf("event = %s", r.body)
	}
	payment := event.Data.Object
	if id, _ := payment["id"].(string); !strings.HasPrefix(id, "pay_test_") || payment["object"] != "payment" ||
		payment["amount"] != json.Number("10.00") || payment["currency"] != "USD" || payment["status"] != "succeeded" {
		t.Errorf("payment = %v", payment)
	}

	// No secret: one is made, answered, and the event is signed with it.
	d, err = sender.Send(ctx, TestWebhookRequest{URL: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Secret, "whsec_") || len(d.Secret) < 40 {
		t.Fatalf("made secret %q", d.Secret)
	}
	verifies(t, <-got, d.Secret)
	again, _ := sender.Send(ctx, TestWebhookRequest{URL: server.URL})
	<-got
	if again.Secret == d.Secret || again.EventID == d.EventID {
		t.Errorf("two deliveries share a secret or an event id: %+v, %+v", d, again)
	}
}

// TestTestEventTypes: a test event may be of any type Paygate sends, and shows the sample of its
// type; another type is refused.
func TestTestEventTypes(t *testing.T) {
	server, got := endpoint(t, http.StatusNoContent, "")
	sender := testSender(NewSender(false, 0), nil)
	ctx := asRole("usr_1", "admin")
	for _, eventType := range events.Types {
		if _, err := sender.Send(ctx, TestWebhookRequest{URL: server.URL, Type: eventType}); err != nil {
			t.Fatal(err)
		}
		var event struct {
			Type string `json:"type"`
			Data struct {
				Object map[string]any `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal((<-got).body, &event); err != nil || event.Type != eventType || event.Data.Object["sample_of"] != eventType {
			t.Fatalf("%s: %+v %v", eventType, event, err)
		}
	}
	for _, eventType := range []string{"payment.created", "PAYMENT.SUCCEEDED", "charge.succeeded"} {
		_, err := sender.Send(ctx, TestWebhookRequest{URL: server.URL, Type: eventType})
		if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != apierror.InvalidRequest || apiErr.Param != "type" {
			t.Errorf("type %q: %v", eventType, err)
		}
	}
	if len(got) != 0 {
		t.Error("an event of an unknown type was sent")
	}
}

// testSender sends test events through sender, timed by now (default time.Now), with a sample
// object that says its type.
func testSender(sender *Sender, now func() time.Time) *TestSender {
	return &TestSender{
		Deliveries: NewDeliveries(Deliveries{Sender: sender, Now: now}),
		Sample: func(eventType string, at time.Time) any {
			return map[string]any{"id": "pay_test_1", "object": "payment", "amount": json.Number("10.00"), "currency": "USD",
				"status": "succeeded", "sample_of": eventType}
		},
	}
}

// TestTestEventAnswers: what the endpoint answers, or fails to, is reported as it is.
func TestTestEventAnswers(t *testing.T) {
	ctx := asRole("usr_1", "operator")
	sender := testSender(NewSender(false, 0), nil)

	failing, _ := endpoint(t, http.StatusInternalServerError, `{"error":"boom"}`)
	d, err := sender.Send(ctx, TestWebhookRequest{URL: failing.URL})
	if err != nil || d.StatusCode != 500 || d.ResponseExcerpt != `{"error":"boom"}` || d.Error != "" {
		t.Errorf("500: %+v, %v", d, err)
	}

	// A redirect is reported, not followed.
	var followed atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusFound))
	defer redirecting.Close()
	d, err = sender.Send(ctx, TestWebhookRequest{URL: redirecting.URL})
	if err != nil || d.StatusCode != http.StatusFound || followed.Load() {
		t.Errorf("redirect: %+v, %v, followed %v", d, err, followed.Load())
	}

	// A 5 MB answer: its first KiB is read, and no more.
	big := strings.Repeat("a", 5<<20)
	large, _ := endpoint(t, http.StatusOK, big)
	d, err = sender.Send(ctx, TestWebhookRequest{URL: large.URL})
	if err != nil || d.StatusCode != 200 || d.ResponseExcerpt != big[:maxExcerpt] || d.Error != "" {
		t.Errorf("5 MB answer: excerpt of %d bytes, %+v, %v", len(d.ResponseExcerpt), d.Error, err)
	}
	// An answer without end: had more than the excerpt been read, this would never return.
	written := make(chan int64, 1)
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("b", 32<<10))
		var n int64
		for n < 1<<30 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			n += int64(len(chunk))
		}
		written <- n
	}))
	defer endless.Close()
	d, err = sender.Send(ctx, TestWebhookRequest{URL: endless.URL})
	if err != nil || d.StatusCode != 200 || len(d.ResponseExcerpt) != maxExcerpt {
		t.Errorf("endless answer: %+v, %v", d, err)
	}
	if n := <-written; n >= 1<<30 {
		t.Errorf("the endpoint wrote %d bytes: the answer was read to the end", n)
	}

	// An endpoint that never answers stops at the timeout.
	// (Each reads the event first: the server notices the client gone only once it has.)
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer hanging.Close()
	quick := testSender(NewSender(false, 100*time.Millisecond), nil)
	start := time.Now()
	d, err = quick.Send(ctx, TestWebhookRequest{URL: hanging.URL})
	if err != nil || d.StatusCode != 0 || !strings.Contains(d.Error, "timeout") || time.Since(start) > 5*time.Second {
		t.Errorf("hanging endpoint: %+v, %v after %s", d, err, time.Since(start))
	}
	// So does one that answers its headers and then trickles: the timeout bounds it all.
	trickling := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer trickling.Close()
	d, err = quick.Send(ctx, TestWebhookRequest{URL: trickling.URL})
	if err != nil || d.StatusCode != 200 || d.ResponseExcerpt != "partial" || !strings.Contains(d.Error, "timeout") {
		t.Errorf("trickling endpoint: %+v, %v", d, err)
	}
}

// TestTestEventNetworkFailures: an endpoint that cannot be reached is reported, in words that
// name no address of Paygate's.
func TestTestEventNetworkFailures(t *testing.T) {
	ctx := asRole("usr_1", "operator")
	sender := testSender(NewSender(false, 5*time.Second), nil)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake refused, as wanted
	tlsServer.StartTLS()
	defer tlsServer.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer hangUp.Close()
	for _, tc := range []struct{ name, url, want string }{
		{"refused", closed.URL, "refused"},
		{"untrusted certificate", tlsServer.URL, "unknown authority"},
		{"https to http", strings.Replace(plain.URL, "http:", "https:", 1), "plain HTTP"},
		{"hung up", hangUp.URL, "closed before"},
		{"unknown host", "http://paygate-test.invalid/", "could not be resolved"},
	} {
		d, err := sender.Send(ctx, TestWebhookRequest{URL: tc.url})
		if err != nil || d.StatusCode != 0 || !strings.Contains(d.Error, tc.want) || strings.Contains(d.Error, "127.0.0.1") {
			t.Errorf("%s: %+v, %v; want an error saying %q", tc.name, d, err, tc.want)
		}
	}
}

// TestTestEventRefusedURLs: a URL that is not one to send to is refused before anything is sent.
func TestTestEventRefusedURLs(t *testing.T) {
	server, got := endpoint(t, http.StatusOK, "")
	sender := testSender(NewSender(false, 0), nil)
	ctx := asRole("usr_1", "operator")
	host := strings.TrimPrefix(server.URL, "http://")
	for _, tc := range []struct {
		url  string
		code apierror.Code
	}{
		{"", apierror.MissingField},
		{"ftp://" + host + "/", apierror.InvalidRequest},
		{"file:///etc/passwd", apierror.InvalidRequest},
		{"gopher://" + host, apierror.InvalidRequest},
		{"http://", apierror.InvalidRequest},
		{"http:///path", apierror.InvalidRequest},
		{"http://:8080/", apierror.InvalidRequest},
		{"/relative/path", apierror.InvalidRequest},
		{host, apierror.InvalidRequest},
		{"http:" + host, apierror.InvalidRequest},
		{"http://user:pass@" + host + "/", apierror.InvalidRequest},
		{"http://user@" + host + "/", apierror.InvalidRequest},
		{"http://" + host + "/\r\nX-Injected: 1", apierror.InvalidRequest},
		{"http://" + host + "/" + strings.Repeat("a", MaxURL), apierror.InvalidRequest},
	} {
		_, err := sender.Send(ctx, TestWebhookRequest{URL: tc.url})
		if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != tc.code || apiErr.Param != "url" {
			t.Errorf("%.60q: %v", tc.url, err)
		}
	}
	// At the limit, a URL is taken.
	atLimit := server.URL + "/" + strings.Repeat("a", MaxURL-len(server.URL)-1)
	if d, err := sender.Send(ctx, TestWebhookRequest{URL: atLimit}); err != nil || d.StatusCode != 200 {
		t.Errorf("a URL of %d characters: %+v, %v", len(atLimit), d, err)
	}
	<-got
	key := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n))) }
	for _, secret := range []string{"whsec_", "whsec_a b", "sk_live_secretvalue", "whsec_é" + strings.Repeat("x", 10),
		"whsec_" + key(minSigningKey-1), "whsec_" + key(maxSigningKey+1), "whsec_\x00abcdef", key(32)} {
		_, err := sender.Send(ctx, TestWebhookRequest{URL: server.URL, Secret: secret})
		apiErr, _ := errors.AsType[*apierror.Error](err)
		if apiErr == nil || apiErr.Param != "secret" || len(secret) > len("whsec_") && strings.Contains(apiErr.Message, secret) {
			t.Errorf("secret %.20q: %v", secret, err)
		}
	}
	for _, n := range []int{minSigningKey, maxSigningKey} {
		if _, err := sender.Send(ctx, TestWebhookRequest{URL: server.URL, Secret: "whsec_" + key(n)}); err != nil {
			t.Errorf("a secret of %d bytes: %v", n, err)
		}
		<-got
	}
	if len(got) != 0 {
		t.Error("a refused request was sent")
	}
}

// TestTestEventProductionDestinations: in production the event goes to public addresses only,
// checked on the address dialled, so names that resolve to a refused address are refused too;
// the refusal names the kind of address, not the address. Outside production, a merchant's
// endpoint on this machine or its network is reached, and the cloud's metadata still is not.
func TestTestEventProductionDestinations(t *testing.T) {
	var reached atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer server.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(server.URL, "http://"))
	production := testSender(NewSender(true, 2*time.Second), nil)
	ctx := asRole("usr_1", "operator")
	for _, tc := range []struct{ url, kind string }{
		{"http://127.0.0.1:" + port + "/", "loopback"},
		{"http://localhost:" + port + "/", "loopback"},
		{"http://127.1.2.3:" + port + "/", "loopback"},
		{"http://[::1]:" + port + "/", "loopback"},
		{"http://[::ffff:127.0.0.1]:" + port + "/", "loopback"},
		{"http://0.0.0.0:" + port + "/", "unspecified"},
		{"http://[::]:" + port + "/", "unspecified"},
		{"http://10.0.0.1/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://192.168.1.1/", "private"},
		{"http://[fd00::1]/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://[fe80::1%25lo]/", "link-local"},
		{"http://100.64.0.1/", "shared"},
		{"http://100.100.100.200/", "shared"},
		{"http://192.0.0.192/", "special-purpose"},
		{"http://[::ffff:169.254.169.254]/", "link-local"},
		{"http://[64:ff9b::a9fe:a9fe]/", "link-local"},
		{"http://224.0.0.1/", "multicast"},
		{"https://127.0.0.1:" + port + "/", "loopback"},
	} {
		_, err := production.Send(ctx, TestWebhookRequest{URL: tc.url})
		apiErr, _ := errors.AsType[*apierror.Error](err)
		if apiErr == nil || apiErr.Code != apierror.InvalidRequest || apiErr.Param != "url" || !strings.Contains(apiErr.Message, tc.kind) {
			t.Errorf("%s: %v, want a refusal of a %s address", tc.url, err, tc.kind)
		} else if strings.Contains(tc.url, "localhost") && strings.Contains(apiErr.Message, "127.0.0.1") {
			t.Errorf("%s: the refusal names the address it resolved to: %s", tc.url, apiErr.Message)
		}
	}
	// Numbers some resolvers read as 127.0.0.1: refused or unresolved, never sent.
	for _, host := range []string{"2130706433", "0x7f000001", "127.1", "017700000001"} {
		d, err := production.Send(ctx, TestWebhookRequest{URL: "http://" + host + ":" + port + "/"})
		if err == nil && d.StatusCode != 0 {
			t.Errorf("%s: delivered, %+v", host, d)
		}
	}
	if reached.Load() != 0 {
		t.Fatalf("the endpoint on loopback was reached %d times in production", reached.Load())
	}

	development := testSender(NewSender(false, 2*time.Second), nil)
	for _, url := range []string{"http://127.0.0.1:" + port + "/", "http://localhost:" + port + "/"} {
		if d, err := development.Send(ctx, TestWebhookRequest{URL: url}); err != nil || d.StatusCode != 200 {
			t.Errorf("development, %s: %+v, %v", url, d, err)
		}
	}
	_, err := development.Send(ctx, TestWebhookRequest{URL: "http://169.254.169.254/latest/meta-data/"})
	if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Param != "url" {
		t.Errorf("development, the metadata address: %v", err)
	}
}

// TestDialGuard checks the guard on the addresses a dial is given, resolved.
func TestDialGuard(t *testing.T) {
	for _, tc := range []struct {
		network, address       string
		production, developing bool // allowed in each mode
	}{
		{"tcp4", "93.184.215.14:443", true, true},
		{"tcp6", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", true, true},
		{"tcp4", "8.8.8.8:80", true, true},
		{"tcp4", "127.0.0.1:80", false, true},
		{"tcp4", "127.255.255.254:80", false, true},
		{"tcp6", "[::1]:80", false, true},
		{"tcp6", "[::ffff:127.0.0.1]:80", false, true},
		{"tcp6", "[::ffff:7f00:1]:80", false, true},
		{"tcp4", "10.0.0.1:80", false, true},
		{"tcp4", "172.31.255.255:80", false, true},
		{"tcp4", "172.32.0.1:80", true, true},
		{"tcp4", "192.168.0.1:80", false, true},
		{"tcp6", "[fc00::1]:80", false, true},
		{"tcp6", "[fdff:ffff::1]:80", false, true},
		{"tcp6", "[::ffff:10.1.2.3]:80", false, true},
		{"tcp4", "100.64.0.1:80", false, true},
		{"tcp4", "100.127.255.255:80", false, true},
		{"tcp4", "100.128.0.1:80", true, true},
		{"tcp4", "169.254.169.254:80", false, false},
		{"tcp6", "[::ffff:169.254.169.254]:80", false, false},
		{"tcp6", "[64:ff9b::a9fe:a9fe]:80", false, false},
		{"tcp6", "[64:ff9b::7f00:1]:80", false, true},
		{"tcp6", "[64:ff9b::808:808]:80", true, true},
		{"tcp6", "[::7f00:1]:80", false, false},          // IPv4-compatible
		{"tcp6", "[64:ff9b:1::7f00:1]:80", false, false}, // local-use NAT64
		{"tcp6", "[2002:7f00:1::1]:80", false, false},    // 6to4
		{"tcp6", "[fe80::1]:80", false, false},
		{"tcp6", "[fe80::1%eth0]:80", false, false},
		{"tcp6", "[febf::1]:80", false, false},
		{"tcp4", "0.0.0.0:80", false, false},
		{"tcp4", "0.1.2.3:80", false, false},
		{"tcp6", "[::]:80", false, false},
		{"tcp4", "224.0.0.1:80", false, false},
		{"tcp6", "[ff02::1]:80", false, false},
		{"tcp4", "255.255.255.255:80", false, false},
		{"tcp4", "192.0.0.192:80", false, false},
		{"tcp4", "not an address", false, false},
		{"udp4", "8.8.8.8:53", false, false},
	} {
		for mode, allowed := range map[bool]bool{true: tc.production, false: tc.developing} {
			err := dialGuard(mode)(context.Background(), tc.network, tc.address, nil)
			if (err == nil) != allowed {
				t.Errorf("%s %s, production %v: %v, want allowed %v", tc.network, tc.address, mode, err, allowed)
			}
			if refused, ok := errors.AsType[*refusedAddress](err); err != nil && (!ok || strings.Contains(refused.Error(), tc.address)) {
				t.Errorf("%s: %v names the address or is no refusal", tc.address, err)
			}
		}
	}
}

// TestTestEventAuthorised: only those who manage webhooks send test events, and nothing is sent
// for anyone else.
func TestTestEventAuthorised(t *testing.T) {
	server, got := endpoint(t, http.StatusOK, "")
	sender := testSender(NewSender(false, 0), nil)
	for _, tc := range []struct {
		ctx  context.Context
		want apierror.Code
	}{
		{context.Background(), apierror.Unauthenticated},
		{asRole("usr_v", "viewer"), apierror.Forbidden},
		{asRole("usr_d", "developer"), apierror.Forbidden},
	} {
		_, err := sender.Send(tc.ctx, TestWebhookRequest{URL: server.URL})
		if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != tc.want {
			t.Errorf("%v, want %s", err, tc.want)
		}
	}
	if len(got) != 0 {
		t.Error("an event was sent for someone who may not send one")
	}
}

// TestTestEventsInFlight: one delivery at a time per user, whichever of their keys asks, and a
// bounded number on the server.
func TestTestEventsInFlight(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
	}))
	defer server.Close()
	sender := testSender(NewSender(false, 0), nil)
	first := make(chan error, 1)
	go func() {
		_, err := sender.Send(asRole("usr_1", "operator"), TestWebhookRequest{URL: server.URL + "/slow"})
		first <- err
	}()
	<-arrived
	_, err := sender.Send(asRole("usr_1", "operator"), TestWebhookRequest{URL: server.URL})
	if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != apierror.InvalidState {
		t.Errorf("a second delivery of the same principal: %v", err)
	}
	// A user with many keys takes one slot, not one a key.
	_, err = sender.Send(asKey("key_1", "usr_1", "operator"), TestWebhookRequest{URL: server.URL})
	if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != apierror.InvalidState {
		t.Errorf("a second delivery of the same user, through a key of theirs: %v", err)
	}
	if d, err := sender.Send(asRole("usr_2", "operator"), TestWebhookRequest{URL: server.URL}); err != nil || d.StatusCode != 200 {
		t.Errorf("another principal's: %+v, %v", d, err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if d, err := sender.Send(asRole("usr_1", "operator"), TestWebhookRequest{URL: server.URL}); err != nil || d.StatusCode != 200 {
		t.Errorf("after the first came back: %+v, %v", d, err)
	}

	for i := range maxTestsInFlight {
		done, err := sender.claim("usr_busy" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		defer done()
	}
	_, err = sender.Send(asRole("usr_3", "operator"), TestWebhookRequest{URL: server.URL})
	if apiErr, _ := errors.AsType[*apierror.Error](err); apiErr == nil || apiErr.Code != apierror.ServiceUnavailable {
		t.Errorf("past %d deliveries under way: %v", maxTestsInFlight, err)
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  ok \n", "ok"},
		{"caf\xc3", "caf"},
		{"caf\xc3\xa9", "café"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe2\x82", ""},
		{"", ""},
	} {
		if got := excerptOf([]byte(tc.in)); got != tc.want {
			t.Errorf("excerptOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
