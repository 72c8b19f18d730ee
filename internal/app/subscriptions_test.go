package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
)

// subscriptionClients are the real GraphQL subscription clients the tests run in node:
// graphql-ws and graphql-sse.
var subscriptionClients = filepath.Join("testdata", "subscriptions")

// nodeSubscriber is one subscription made by a real client in node; lines are what it heard.
type nodeSubscriber struct {
	t     *testing.T
	lines chan map[string]any
}

// subscribe subscribes to document on env's /query over transport (ws or sse) with credential,
// and returns once the client is connected.
func subscribe(t *testing.T, env *testEnv, transport, credential, document string) *nodeSubscriber {
	t.Helper()
	s := startSubscriber(t, env, transport, credential, document)
	if line := s.next(); line["connected"] != true {
		t.Fatalf("the %s client did not connect: %v", transport, line)
	}
	return s
}

// startSubscriber starts a client subscribing to document on env's /query over transport with
// credential.
func startSubscriber(t *testing.T, env *testEnv, transport, credential, document string) *nodeSubscriber {
	t.Helper()
	node := nodeFor(t, "subscribe with graphql-ws and graphql-sse")
	npmCI(t, subscriptionClients)
	cmd := exec.CommandContext(t.Context(), node, "subscribe.mjs", transport, env.url+"/query", credential, document)
	cmd.Dir = subscriptionClients
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &nodeSubscriber{t: t, lines: make(chan map[string]any, 100)}
	go func() {
		defer close(s.lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			var line map[string]any
			if json.Unmarshal(scanner.Bytes(), &line) == nil {
				s.lines <- line
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return s
}

// next is the next line the client wrote; it fails the test after 20 seconds without one.
func (s *nodeSubscriber) next() map[string]any {
	s.t.Helper()
	line, ok := receive(s.t, s.lines, "the client")
	if !ok {
		s.t.Fatal("the client ended without a word")
	}
	return line
}

// TestSubscriptionsAcrossServers: real graphql-ws and graphql-sse clients subscribed on one
// server after a quiet spell (many payments made while no one subscribed) are sent none of those,
// and see the payments made through another server, on one database, in order, within 2 seconds
// of each answer. A subscription whose token is revoked ends and says why, as each client reads
// it: the WebSocket closed 4403 token_revoked, the event stream's error token_revoked before
// complete. One without the scope is refused. When the server stops, the subscriptions are
// aborted, never completed.
func TestSubscriptionsAcrossServers(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		watched, paying, admin := quietServers(t, pools)
		hub := watched.app.services.hub
		document := `subscription { paymentUpdated { id status amount currency } }`
		overWS := subscribe(t, watched, "ws", admin, document)
		overSSE := subscribe(t, watched, "sse", admin, document)
		waitFor(t, "both subscriptions to be in place", func() bool { return hub.Subscribers(live.Payment) == 2 })

		var made []string
		var answered []time.Time
		for _, amount := range []string{"11.00", "12.00", "13.00"} {
			made = append(made, paying.succeededPayment(admin, amount, "USD", "stripe"))
			answered = append(answered, time.Now())
		}
		for name, s := range map[string]*nodeSubscriber{"graphql-ws": overWS, "graphql-sse": overSSE} {
			for i, id := range made {
				line := s.next()
				payment, _ := get(line, "next", "paymentUpdated").(map[string]any)
				if payment["id"] != id || payment["status"] != "SUCCEEDED" {
					t.Fatalf("%s: result %d = %v, want payment %s succeeded", name, i+1, line, id)
				}
				heard := time.UnixMilli(int64(get(line, "at").(float64)))
				if took := heard.Sub(answered[i]); took > 2*time.Second {
					t.Errorf("%s: payment %d heard %s after it was answered", name, i+1, took)
				} else {
					t.Logf("%s: payment %d heard %s after it was answered on the other server", name, i+1, took.Round(time.Millisecond))
				}
			}
		}

		// A token revoked on the other server ends its subscriptions here, saying so.
		viewer := watched.tokenFor("viewer")
		revokedWS := subscribe(t, watched, "ws", viewer, document)
		revokedSSE := subscribe(t, watched, "sse", viewer, document)
		waitFor(t, "the viewer's subscriptions", func() bool { return hub.Subscribers(live.Payment) == 4 })
		if r := paying.request(http.MethodPost, "/api/v1/auth/revoke", admin, map[string]any{"token": viewer}); r.status != http.StatusOK {
			t.Fatalf("revoke = %d %s", r.status, r.raw)
		}
		if closed, ended := revokedWS.next(), revokedWS.next(); mustJSON(t, closed) != `{"closed":{"code":4403,"reason":"token_revoked"}}` ||
			mustJSON(t, ended) != `{"error":{"code":4403,"reason":"token_revoked"}}` {
			t.Errorf("graphql-ws, after its token was revoked: %v, then %v", closed, ended)
		}
		if reason, ended := revokedSSE.next(), revokedSSE.next(); get(reason, "errors", 0, "extensions", "code") != "token_revoked" || ended["complete"] != true {
			t.Errorf("graphql-sse, after its token was revoked: %v, then %v", reason, ended)
		}

		// A credential without payments:read is refused, as the query would be; one that may
		// subscribe to nothing is refused at connection_init already.
		monitor := watched.apiKey(admin, "monitoring:read")
		for _, transport := range []string{"ws", "sse"} {
			if line := subscribe(t, watched, transport, monitor, document).next(); get(line, "errors", 0, "extensions", "code") != "forbidden" {
				t.Errorf("%s without the scope: %v", transport, line)
			}
		}
		if line := startSubscriber(t, watched, "ws", watched.apiKey(admin, "webhooks:read"), document).next(); mustJSON(t, line) != `{"closed":{"code":4403,"reason":"forbidden"}}` {
			t.Errorf("connection_init of a credential that may subscribe to nothing: %v", line)
		}

		// The server stops: the WebSocket is closed going away, the event stream cut, and neither
		// is completed.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := watched.server.Config.Shutdown(ctx); err != nil {
			t.Errorf("the shutdown waited for the streams: %v", err)
		}
		if closed, ended := overWS.next(), overWS.next(); get(closed, "closed", "code") != float64(1001) || get(ended, "error", "code") != float64(1001) {
			t.Errorf("graphql-ws, as the server stopped: %v, then %v", closed, ended)
		}
		if ended := overSSE.next(); ended["error"] == nil {
			t.Errorf("graphql-sse, as the server stopped: %v", ended)
		}
	})
}

// subscriptionAnswer subscribes to document over Server-Sent Events with credential and answers
// the error code it was refused with, or "" once the subscription is in place among the hub's
// subscribers of kind; the stream is then closed.
func (e *testEnv) subscriptionAnswer(credential, document string, variables map[string]any, kind string) string {
	e.t.Helper()
	hub := e.app.services.hub
	before := hub.Subscribers(kind)
	ctx, cancel := context.WithCancel(e.t.Context())
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": document, "variables": variables})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	refused := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		scanner := bufio.NewScanner(resp.Body)
		for scanner.Scan() {
			data, ok := strings.CutPrefix(scanner.Text(), "data: ")
			if !ok {
				continue
			}
			var answer struct{ Errors []gqlError }
			json.Unmarshal([]byte(data), &answer)
			if len(answer.Errors) > 0 {
				refused <- answer.Errors[0].code()
				return
			}
		}
	}()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case code := <-refused:
			return code
		case <-deadline:
			e.t.Fatalf("%s: neither refused nor subscribed", document)
		case <-time.After(5 * time.Millisecond):
			if hub.Subscribers(kind) > before {
				cancel() // the client leaves, and so does its subscription
				for left := time.Now().Add(20 * time.Second); hub.Subscribers(kind) > before; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(left) {
						e.t.Fatalf("%s: the subscription outlived its client", document)
					}
				}
				return ""
			}
		}
	}
}
