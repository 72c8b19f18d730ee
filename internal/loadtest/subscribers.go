package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// Bounds Paygate keeps, which idle subscribers are spread within: subscriptions per WebSocket,
// and per principal on one server.
const (
	subscriptionsPerConnection = 20
	subscriptionsPerKey        = 100
)

// OpenSubscribers opens n idle subscriptions to Paygate at baseURL over WebSockets (the
// graphql-transport-ws protocol), as n dashboards watching a payment that does not change would:
// 20 on each connection, under API keys of payments:read made with token, 100 each. close ends
// them.
func OpenSubscribers(ctx context.Context, client *http.Client, baseURL, token string, n int) (close func(), err error) {
	var conns []*websocket.Conn
	close = func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}
	defer func() {
		if err != nil {
			close()
		}
	}()
	wsURL := "ws" + strings.TrimPrefix(strings.TrimSuffix(baseURL, "/"), "http") + "/query"
	key := ""
	for opened := 0; opened < n; {
		if opened%subscriptionsPerKey == 0 {
			if key, err = makeKey(ctx, client, baseURL, token); err != nil {
				return nil, err
			}
		}
		c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
		if err := wsjson.Write(ctx, c, map[string]any{"type": "connection_init", "payload": map[string]any{"X-API-Key": key}}); err != nil {
			return nil, err
		}
		var ack struct{ Type string }
		if err := wsjson.Read(ctx, c, &ack); err != nil || ack.Type != "connection_ack" {
			return nil, fmt.Errorf("connection %d was not acknowledged: %v %v", len(conns), ack, err)
		}
		for i := 0; i < subscriptionsPerConnection && opened < n; i++ {
			if err := wsjson.Write(ctx, c, map[string]any{"id": fmt.Sprint(i), "type": "subscribe", "payload": map[string]any{
				"query": `subscription { paymentUpdated(id: "pay_idle") { id status } }`}}); err != nil {
				return nil, err
			}
			opened++
		}
		// Pings are answered by reading; an idle subscriber reads nothing else.
		go func() {
			for {
				var m map[string]any
				if wsjson.Read(context.Background(), c, &m) != nil {
					return
				}
				if m["type"] == "ping" {
					wsjson.Write(context.Background(), c, map[string]any{"type": "pong"})
				}
			}
		}()
	}
	return close, nil
}

// makeKey makes an API key of payments:read with token.
func makeKey(ctx context.Context, client *http.Client, baseURL, token string) (string, error) {
	body := strings.NewReader(`{"name": "paygate-load subscribers", "scopes": ["payments:read"]}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/api/v1/api-keys", body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var answer struct {
		Data struct {
			Key string `json:"key"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Data.Key == "" {
		return "", fmt.Errorf("making an API key for the subscribers: %s", resp.Status)
	}
	return answer.Data.Key, nil
}
