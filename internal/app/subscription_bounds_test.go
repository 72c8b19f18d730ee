package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string         `json:"id,omitempty"`
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload,omitempty"`
}

// TestSubscriptionBounds: a WebSocket opens from the server's own origin or one of
// PAYGATE_CORS_ORIGINS only; its connection_init must carry a good credential; it holds a
// bounded number of subscriptions and messages; one address holds a bounded number of streams;
// and the server's write timeout does not cut a stream.
func TestSubscriptionBounds(t *testing.T) {
	t.Parallel()
	const writeTimeout = time.Second
	env := newTestEnvWriting(t, databasetest.SQLite(t), writeTimeout, "PAYGATE_CORS_ORIGINS=https://dash.example.com")
	env.app.Start(t.Context())
	admin := env.tokenFor("admin")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(env.url, "http") + "/query"
	dial := func(origin string) (*websocket.Conn, *http.Response, error) {
		header := http.Header{}
		if origin != "" {
			header.Set("Origin", origin)
		}
		return websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header})
	}
	initialised := func(payload map[string]any) (*websocket.Conn, wsMessage) {
		t.Helper()
		c, _, err := dial("")
		if err != nil {
			t.Fatal(err)
		}
		if err := wsjson.Write(ctx, c, wsMessage{Type: "connection_init", Payload: payload}); err != nil {
			t.Fatal(err)
		}
		for {
			var answer wsMessage
			if err := wsjson.Read(ctx, c, &answer); err != nil {
				return c, wsMessage{Type: fmt.Sprintf("closed: %d %v", websocket.CloseStatus(err), err)}
			}
			if answer.Type != "connection_error" { // gqlgen says why before it closes
				return c, answer
			}
		}
	}

	if _, resp, err := dial("https://elsewhere.example"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a WebSocket from another origin: %v, %v", resp, err)
	}
	for _, origin := range []string{"https://dash.example.com", env.url} {
		c, _, err := dial(origin)
		if err != nil {
			t.Errorf("a WebSocket from %s: %v", origin, err)
			continue
		}
		c.CloseNow()
	}

	for name, payload := range map[string]map[string]any{
		"no credential":  nil,
		"a bad token":    {"Authorization": "Bearer not-a-token"},
		"a bad scheme":   {"Authorization": "Basic " + admin},
		"an unknown key": {"X-API-Key": "pk_test_unknown"},
	} {
		c, answer := initialised(payload)
		if !strings.HasPrefix(answer.Type, "closed: 4403") {
			t.Errorf("%s: %+v, want the connection closed 4403", name, answer)
		}
		c.CloseNow()
	}

	c, answer := initialised(map[string]any{"Authorization": "Bearer " + admin})
	defer c.CloseNow()
	if answer.Type != "connection_ack" {
		t.Fatalf("connection_init with a token: %+v", answer)
	}
	// Queries and mutations go over HTTP, each authenticated and rate limited: never over the
	// WebSocket, whose principal was authenticated once.
	for i, document := range []string{`{ payments(first: 1) { totalCount } }`, `mutation { logout { revoked } }`} {
		id := fmt.Sprint("http-only-", i)
		if err := wsjson.Write(ctx, c, wsMessage{ID: id, Type: "subscribe", Payload: map[string]any{"query": document}}); err != nil {
			t.Fatal(err)
		}
		var m wsMessage
		if err := wsjson.Read(ctx, c, &m); err != nil || m.ID != id || !strings.Contains(mustJSON(t, m.Payload), "only subscriptions go over the WebSocket") {
			t.Errorf("%s over the WebSocket: %+v, %v", document, m, err)
		}
		if err := wsjson.Read(ctx, c, &m); err != nil || m.ID != id || m.Type != "complete" {
			t.Errorf("%s over the WebSocket, then: %+v, %v", document, m, err)
		}
	}
	subscription := map[string]any{"query": `subscription { paymentUpdated { id } }`}
	for i := range graph.MaxSubscriptionsPerConnection + 1 {
		if err := wsjson.Write(ctx, c, wsMessage{ID: string(rune('a' + i)), Type: "subscribe", Payload: subscription}); err != nil {
			t.Fatal(err)
		}
	}
	// Refused, the one too many is answered its error and completed; the others wait.
	refusal := ""
	for refusal == "" {
		var m wsMessage
		if err := wsjson.Read(ctx, c, &m); err != nil {
			t.Fatal(err)
		}
		if m.Type == "error" || m.Type == "next" {
			refusal = m.ID
			if !strings.Contains(mustJSON(t, m.Payload), "rate_limited") {
				t.Errorf("subscription %d on one connection: %+v", graph.MaxSubscriptionsPerConnection+1, m)
			}
		}
	}
	waitFor(t, "the connection's subscriptions", func() bool {
		return env.app.services.hub.Subscribers("payment") == graph.MaxSubscriptionsPerConnection
	})

	// Held past the server's write timeout, the stream still delivers, to each subscription.
	time.Sleep(2 * writeTimeout)
	paid := env.succeededPayment(admin, "5.00", "USD", "stripe")
	for delivered := 0; delivered < graph.MaxSubscriptionsPerConnection; {
		var m wsMessage
		if err := wsjson.Read(ctx, c, &m); err != nil {
			t.Fatalf("after the write timeout, with %d delivered: %v", delivered, err)
		}
		switch {
		case m.ID == refusal:
		case m.Type != "next" || !strings.Contains(mustJSON(t, m.Payload), paid):
			t.Fatalf("after the write timeout: %+v", m)
		default:
			delivered++
		}
	}

	// A message over the bound closes the connection.
	big := map[string]any{"query": `subscription { paymentUpdated { id } }`, "variables": map[string]any{"pad": strings.Repeat("x", 70<<10)}}
	wsjson.Write(ctx, c, wsMessage{ID: "big", Type: "subscribe", Payload: big})
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, c, &m); err != nil {
			if status := websocket.CloseStatus(err); status != websocket.StatusMessageTooBig {
				t.Errorf("a message of 70 KiB: closed with %v (%v)", status, err)
			}
			break
		}
	}

	// One address holds a bounded number of streams: one more is 429.
	var open []*websocket.Conn
	defer func() {
		for _, c := range open {
			c.CloseNow()
		}
	}()
	for range graph.MaxStreamsPerAddress {
		c, _, err := dial("")
		if err != nil {
			t.Fatalf("stream %d: %v", len(open)+1, err)
		}
		open = append(open, c)
	}
	if _, resp, err := dial(""); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("stream %d from one address: %v, %v", graph.MaxStreamsPerAddress+1, resp, err)
	}
}
