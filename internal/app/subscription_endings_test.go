package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/golang-jwt/jwt/v5"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
)

// wsClient is a graphql-transport-ws client over a real WebSocket: it hands over what the server
// sends, then how the server closed the connection.
type wsClient struct {
	t        *testing.T
	conn     *websocket.Conn
	messages chan wsFrame
	// closeCode and closeReason are how the server closed the connection, once messages is closed
	// (closeCode -1: the connection broke without a close).
	closeCode   websocket.StatusCode
	closeReason string
}

// wsFrame is a graphql-transport-ws message, its payload as sent.
type wsFrame struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialWS opens a WebSocket to env's /query and initialises it with credential.
func dialWS(t *testing.T, env *testEnv, credential string) *wsClient {
	t.Helper()
	conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(env.url, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	c := &wsClient{t: t, conn: conn, messages: make(chan wsFrame, 100)}
	go c.read()
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + credential}})
	if m, ok := c.next(); !ok || m.Type != "connection_ack" {
		t.Fatalf("connection_init answered %+v, then closed %d %q", m, c.closeCode, c.closeReason)
	}
	return c
}

func (c *wsClient) read() {
	defer close(c.messages)
	for {
		var m wsFrame
		if err := wsjson.Read(context.Background(), c.conn, &m); err != nil {
			c.closeCode = -1
			if closed, ok := errors.AsType[websocket.CloseError](err); ok {
				c.closeCode, c.closeReason = closed.Code, closed.Reason
			}
			return
		}
		c.messages <- m
	}
}

func (c *wsClient) send(message any) {
	c.t.Helper()
	if err := wsjson.Write(c.t.Context(), c.conn, message); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) subscribe(id, document string) {
	c.t.Helper()
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": document}})
}

// next is the next message the server sent; false once it closed the connection. It fails the
// test after 20 seconds without either.
func (c *wsClient) next() (wsFrame, bool) {
	c.t.Helper()
	return receive(c.t, c.messages, "the WebSocket")
}

// receive is the next value from ch, false once ch is closed. After 20 seconds without either it
// fails the test, saying that listener heard nothing.
func receive[T any](t *testing.T, ch <-chan T, listener string) (T, bool) {
	t.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(20 * time.Second):
		t.Fatal(listener + " heard nothing for 20 seconds")
		var none T
		return none, false
	}
}

// sseClient is a graphql-sse client in distinct connections mode over a real request: it hands
// over the events the server sends, then how the stream ended.
type sseClient struct {
	t      *testing.T
	events chan sseEvent
	// err is how the stream ended once events is closed: nil when the server ended it, else
	// why not (io.ErrUnexpectedEOF: the connection was cut mid-response).
	err error
}

type sseEvent struct {
	event string
	data  string
}

// subscribeSSE subscribes to document over Server-Sent Events on env's /query with credential.
func subscribeSSE(t *testing.T, env *testEnv, credential, document string) *sseClient {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": document})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, env.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+credential)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("subscribing over Server-Sent Events: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	c := &sseClient{t: t, events: make(chan sseEvent, 100)}
	go func() {
		defer close(c.events)
		scanner := bufio.NewScanner(resp.Body)
		var e sseEvent
		for scanner.Scan() {
			line := scanner.Text()
			switch {
			case line == "" && e.event != "":
				c.events <- e
				e = sseEvent{}
			case strings.HasPrefix(line, "event:"):
				e.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				e.data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
		c.err = scanner.Err()
	}()
	return c
}

// next is the next event the server sent; false once the stream ended. It fails the test after
// 20 seconds without either.
func (c *sseClient) next() (sseEvent, bool) {
	c.t.Helper()
	return receive(c.t, c.events, "the event stream")
}

// subscribeOverBoth subscribes to document with credential on env's /query twice: over a
// WebSocket, as operation id, and over Server-Sent Events.
func subscribeOverBoth(t *testing.T, env *testEnv, credential, id, document string) (*wsClient, *sseClient) {
	t.Helper()
	ws := dialWS(t, env, credential)
	ws.subscribe(id, document)
	return ws, subscribeSSE(t, env, credential, document)
}

// result is a GraphQL result as a subscription sends it.
type result struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []gqlError                 `json:"errors"`
}

func decodeResult(t *testing.T, raw []byte) result {
	t.Helper()
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("a result %s: %v", raw, err)
	}
	return r
}

// paymentIDOf is the id of the payment a paymentUpdated result carries.
func paymentIDOf(t *testing.T, raw []byte) string {
	t.Helper()
	var payment struct{ ID string }
	json.Unmarshal(decodeResult(t, raw).Data["paymentUpdated"], &payment)
	return payment.ID
}

// quietServers starts two servers over pools and, while no one subscribes, makes 40 payments
// through them in turn: more than the 32 changes that ended the first subscriber once. It then
// moves their clocks on, so that those payments are out of the look-back of any subscriber from
// now on, and returns the server to watch, the one to pay through, and the admin token the
// payments were made with.
func quietServers(t *testing.T, pools []*database.DB) (watched, paying *testEnv, admin string) {
	t.Helper()
	servers := newTestServers(t, pools)
	for _, s := range servers {
		s.app.Start(t.Context())
	}
	watched, paying = servers[0], servers[1]
	admin = paying.tokenFor("admin")
	for i := range 40 {
		servers[i%2].succeededPayment(admin, "10.00", "USD", "stripe")
	}
	for _, s := range servers {
		s.clock.Advance(2 * live.LookBack)
	}
	return watched, paying, admin
}

// TestSubscriberAfterAQuietSpell: after many payments made while no one subscribed, on either of
// two servers over one database, a subscriber over each transport is sent none of them, and is
// sent the next payments made, on either server; it is not ended for the changes it never asked
// for.
func TestSubscriberAfterAQuietSpell(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		watched, paying, admin := quietServers(t, pools)
		document := `subscription { paymentUpdated { id status } }`
		overWS, overSSE := subscribeOverBoth(t, watched, admin, "quiet", document)
		hub := watched.app.services.hub
		waitFor(t, "both subscriptions to be in place", func() bool { return hub.Subscribers(live.Payment) == 2 })

		for i, s := range []*testEnv{paying, watched} {
			paid := s.succeededPayment(admin, "11.00", "USD", "stripe")
			if m, ok := overWS.next(); !ok || m.Type != "next" || paymentIDOf(t, m.Payload) != paid {
				t.Fatalf("payment %d after the quiet spell: the WebSocket heard %s %s (closed %d %q), want %s",
					i+1, m.Type, m.Payload, overWS.closeCode, overWS.closeReason, paid)
			}
			if e, ok := overSSE.next(); !ok || e.event != "next" || paymentIDOf(t, []byte(e.data)) != paid {
				t.Fatalf("payment %d after the quiet spell: the event stream heard %+v (ended: %v), want %s", i+1, e, overSSE.err, paid)
			}
		}
		if n := hub.Subscribers(live.Payment); n != 2 {
			t.Errorf("%d subscriptions left, want both", n)
		}
	})
}

// claimsOf are an access token's claims.
func claimsOf(t *testing.T, token string) jwt.RegisteredClaims {
	t.Helper()
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// userOf is the user an access token was issued to.
func userOf(t *testing.T, token string) string {
	t.Helper()
	return claimsOf(t, token).Subject
}

// endedOverWS waits for c's connection to be closed for its credential: 4403, with the code as
// the reason, and no subscription completed before.
func endedOverWS(t *testing.T, name string, c *wsClient, code string) {
	t.Helper()
	for {
		m, ok := c.next()
		if !ok {
			break
		}
		t.Errorf("%s: the WebSocket heard %s %s before it closed", name, m.Type, m.Payload)
	}
	if c.closeCode != 4403 || c.closeReason != code {
		t.Errorf("%s: the WebSocket closed %d %q, want 4403 %q", name, c.closeCode, c.closeReason, code)
	}
}

// endedOverSSE waits for c's subscription to end with an error of code in a `next` event, then
// `complete`, and the stream to end.
func endedOverSSE(t *testing.T, name string, c *sseClient, code string) {
	t.Helper()
	e, ok := c.next()
	if !ok || e.event != "next" {
		t.Errorf("%s: the event stream heard %+v (ended: %v), want its reason", name, e, c.err)
		return
	}
	if errs := decodeResult(t, []byte(e.data)).Errors; len(errs) != 1 || errs[0].code() != code || errs[0].Message == "" {
		t.Errorf("%s: the event stream's last result %s, want one error %s", name, e.data, code)
	}
	if e, ok := c.next(); !ok || e.event != "complete" {
		t.Errorf("%s: after its reason, the event stream heard %+v (ended: %v), want complete", name, e, c.err)
	}
	if e, ok := c.next(); ok || c.err != nil {
		t.Errorf("%s: after complete, the event stream heard %+v and ended with %v", name, e, c.err)
	}
}

// TestSubscriptionEndingsSayWhy: a subscription whose credential stops being good, through the
// other of two servers, ends and says why: over a WebSocket, whose credential is the
// connection's, the connection is closed with 4403 and the error's code as the reason, which a
// graphql-ws client answers by connecting again with a credential asked for anew; over
// Server-Sent Events, an error with the code in a last result, then complete. A subscription
// whose credential lost the scope it needs ends with forbidden over either, the WebSocket kept.
func TestSubscriptionEndingsSayWhy(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		watched, other := servers[0], servers[1]
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		admin := other.tokenFor("admin")
		merchant := str(get(other.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "to disable"}).body, "data", "id"))
		payments := `subscription { paymentUpdated { id } }`
		cases := []struct {
			name, credential, code string
			end                    func(credential string) response
		}{
			{"logout", watched.tokenFor("viewer"), "token_revoked", func(token string) response {
				return other.request(http.MethodPost, "/api/v1/auth/logout", token, nil)
			}},
			{"revoke", watched.tokenFor("viewer"), "token_revoked", func(token string) response {
				return other.request(http.MethodPost, "/api/v1/auth/revoke", admin, map[string]any{"token": token})
			}},
			{"user disabled", watched.tokenFor("viewer"), "user_disabled", func(token string) response {
				return other.request(http.MethodPatch, "/api/v1/users/"+userOf(t, token), admin, map[string]any{"disabled": true})
			}},
			{"merchant disabled", watched.merchantToken(merchant, "viewer"), "merchant_unavailable", func(string) response {
				return other.request(http.MethodPatch, "/api/v1/merchants/"+merchant, admin, map[string]any{"status": "disabled"})
			}},
		}
		hub := watched.app.services.hub
		type subscribers struct {
			ws  *wsClient
			sse *sseClient
		}
		var subscribed []subscribers
		for _, c := range cases {
			ws, sse := subscribeOverBoth(t, watched, c.credential, c.name, payments)
			subscribed = append(subscribed, subscribers{ws, sse})
		}
		// A staff admin's key for payments and alerts, whose user is then demoted to a role
		// without monitoring:read.
		demoted := watched.staffToken("admin")
		key := watched.apiKey(demoted, auth.ScopePaymentsRead, auth.ScopeMonitoringRead)
		alerts := `subscription { alertRaised { id } }`
		scopeWS, scopeSSE := subscribeOverBoth(t, watched, key, "alerts", alerts)
		waitFor(t, "the subscriptions to be in place", func() bool {
			return hub.Subscribers(live.Payment) == 2*len(cases) && hub.Subscribers(live.Alert) == 2
		})

		for _, c := range cases {
			if r := c.end(c.credential); r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.name, r.status, r.raw)
			}
		}
		if r := other.request(http.MethodPatch, "/api/v1/users/"+userOf(t, demoted), admin, map[string]any{"role": "developer"}); r.status != http.StatusOK {
			t.Fatalf("demoting the key's user: %d %s", r.status, r.raw)
		}
		for i, c := range cases {
			endedOverWS(t, c.name, subscribed[i].ws, c.code)
			endedOverSSE(t, c.name, subscribed[i].sse, c.code)
		}
		if m, ok := scopeWS.next(); !ok || m.Type != "error" || m.ID != "alerts" || !strings.Contains(string(m.Payload), `"code":"forbidden"`) {
			t.Errorf("a scope lost: the WebSocket heard %s %s %s (closed %d %q), want the subscription's error forbidden",
				m.ID, m.Type, m.Payload, scopeWS.closeCode, scopeWS.closeReason)
		}
		endedOverSSE(t, "a scope lost", scopeSSE, "forbidden")
		// The connection stays: the key may still subscribe to payments.
		waitFor(t, "the ended subscriptions to be gone", func() bool { return hub.Subscribers(live.Payment) == 0 })
		scopeWS.subscribe("payments", payments)
		waitFor(t, "the key's subscription to payments", func() bool { return hub.Subscribers(live.Payment) == 1 })
		paid := other.succeededPayment(admin, "12.00", "USD", "stripe")
		if m, ok := scopeWS.next(); !ok || m.ID != "payments" || paymentIDOf(t, m.Payload) != paid {
			t.Errorf("a scope lost, then payments: the WebSocket heard %s %s %s (closed %d %q), want %s",
				m.ID, m.Type, m.Payload, scopeWS.closeCode, scopeWS.closeReason, paid)
		}
	})
}

// TestSubscriptionEndsWhenItsCredentialExpires: a subscription ends when its token does, by the
// server's clock, and says so: token_expired, as the close reason of a WebSocket's 4403, in a
// last result over Server-Sent Events.
func TestSubscriptionEndsWhenItsCredentialExpires(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.app.Start(t.Context())
		viewer := env.tokenFor("viewer")
		expires := claimsOf(t, viewer).ExpiresAt.Time
		// The token has 3 seconds left, by the server's clock, when it subscribes.
		env.clock.Advance(expires.Sub(env.clock.Now()) - 3*time.Second)
		subscribed := time.Now()
		left := expires.Sub(env.clock.Now())
		payments := `subscription { paymentUpdated { id } }`
		ws, sse := subscribeOverBoth(t, env, viewer, "expiring", payments)
		waitFor(t, "both subscriptions to be in place", func() bool { return env.app.services.hub.Subscribers(live.Payment) == 2 })
		if took := time.Since(subscribed); took >= left {
			t.Fatalf("subscribing took %s, longer than the token had left", took)
		}
		endedOverWS(t, "expired", ws, "token_expired")
		endedOverSSE(t, "expired", sse, "token_expired")
		if took := time.Since(subscribed); took < left {
			t.Errorf("the subscriptions ended %s after they began, before the token expired", took)
		}
	})
}

// TestShutdownAbortsSubscriptions: a server that stops closes its WebSockets with 1001 (going
// away) and cuts its event streams, completing no subscription, so that clients subscribe again
// to another server; it waits for none of them.
func TestShutdownAbortsSubscriptions(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		payments := `subscription { paymentUpdated { id } }`
		ws, sse := subscribeOverBoth(t, env, admin, "stopping", payments)
		waitFor(t, "both subscriptions to be in place", func() bool { return env.app.services.hub.Subscribers(live.Payment) == 2 })

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := env.server.Config.Shutdown(ctx); err != nil {
			t.Errorf("the shutdown waited for the streams: %v", err)
		}
		for {
			m, ok := ws.next()
			if !ok {
				break
			}
			t.Errorf("the WebSocket heard %s %s as the server stopped", m.Type, m.Payload)
		}
		if ws.closeCode != websocket.StatusGoingAway {
			t.Errorf("the WebSocket closed %d %q, want 1001 (going away)", ws.closeCode, ws.closeReason)
		}
		for {
			e, ok := sse.next()
			if !ok {
				break
			}
			t.Errorf("the event stream heard %+v as the server stopped", e)
		}
		if !errors.Is(sse.err, io.ErrUnexpectedEOF) {
			t.Errorf("the event stream ended with %v, want it cut (unexpected EOF)", sse.err)
		}
	})
}

// TestWebSocketErrorsCarryCodes: every error sent over a WebSocket carries extensions.code: a
// subscribe message that is not a request, a document that does not parse or validate, an
// operation the document does not have, one over the bounds, a query, a subscription without
// the scope, each ending its operation alone; and, in the legacy graphql-ws protocol, which says
// why a connection_init is refused in a message, that refusal.
func TestWebSocketErrorsCarryCodes(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	env.app.Start(t.Context())
	c := dialWS(t, env, env.merchantToken(str(get(env.request(http.MethodPost, "/api/v1/merchants", env.tokenFor("admin"),
		map[string]any{"name": "errors"}).body, "data", "id")), "viewer"))
	deep := "subscription { paymentUpdated { id" + strings.Repeat(" refunds { payment {", 20) + " id" + strings.Repeat(" } }", 20) + " } }"
	cases := map[string]map[string]any{
		"not-a-request":     {"id": "not-a-request", "type": "subscribe", "payload": "subscription { paymentUpdated { id } }"},
		"does-not-parse":    {"query": "subscription { paymentUpdated { id }"},
		"does-not-validate": {"query": "subscription { paymentUpdated { noSuchField } }"},
		"no-such-operation": {"query": "subscription A { paymentUpdated { id } }", "operationName": "B"},
		"over-the-bounds":   {"query": deep},
		"a-query":           {"query": "{ payments(first: 1) { totalCount } }"},
		"without-the-scope": {"query": "subscription { alertRaised { id } }"},
	}
	for id, payload := range cases {
		if payload["type"] != nil {
			c.send(payload)
			continue
		}
		c.send(map[string]any{"id": id, "type": "subscribe", "payload": payload})
	}
	ended := map[string]bool{}
	for len(ended) < len(cases) {
		m, ok := c.next()
		if !ok {
			t.Fatalf("the WebSocket closed %d %q with %d operations answered", c.closeCode, c.closeReason, len(ended))
		}
		var errs []gqlError
		switch m.Type {
		case "error": // ends the operation
			json.Unmarshal(m.Payload, &errs)
			ended[m.ID] = true
		case "next":
			errs = decodeResult(t, m.Payload).Errors
		case "complete":
			ended[m.ID] = true
		}
		if m.Type != "complete" && len(errs) == 0 {
			t.Errorf("%s: %s %s, want errors", m.ID, m.Type, m.Payload)
		}
		for _, e := range errs {
			if e.code() == "" {
				t.Errorf("%s: an error without extensions.code: %s %s", m.ID, m.Type, m.Payload)
			}
		}
	}

	legacy, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(env.url, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.CloseNow()
	wsjson.Write(t.Context(), legacy, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer not-a-token"}})
	var refusal wsFrame
	if err := wsjson.Read(t.Context(), legacy, &refusal); err != nil || refusal.Type != "connection_error" ||
		!strings.Contains(string(refusal.Payload), `"code":"token_invalid"`) {
		t.Errorf("a legacy connection_init refused: %s %s, %v", refusal.Type, refusal.Payload, err)
	}
	if err := wsjson.Read(t.Context(), legacy, &refusal); websocket.CloseStatus(err) != 4403 {
		t.Errorf("after the refusal: %s %s, %v, want the connection closed 4403", refusal.Type, refusal.Payload, err)
	}
}
