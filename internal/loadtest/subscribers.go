package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// Bounds Paygate keeps, which idle subscribers are spread within: subscriptions per WebSocket,
// and per user on one server.
const (
	subscriptionsPerConnection = 20
	subscriptionsPerUser       = 100
)

// OpenSubscribers opens n idle subscriptions to Paygate at baseURL over WebSockets (the
// graphql-transport-ws protocol), as n dashboards watching a payment that does not change would:
// 20 on each connection, 100 for each of the viewers it makes and logs in with token (an admin's,
// whose login limit must allow one login per 100). close ends them.
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
	baseURL = strings.TrimSuffix(baseURL, "/")
	wsURL := "ws" + strings.TrimPrefix(baseURL, "http") + "/query"
	viewer := ""
	for opened := 0; opened < n; {
		if opened%subscriptionsPerUser == 0 {
			if viewer, err = makeViewer(ctx, client, baseURL, token); err != nil {
				return nil, err
			}
		}
		c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
		if err := wsjson.Write(ctx, c, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + viewer}}); err != nil {
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

// makeViewer makes a viewer with token and answers an access token of theirs.
func makeViewer(ctx context.Context, client *http.Client, baseURL, token string) (string, error) {
	secret := make([]byte, 16)
	rand.Read(secret)
	email, password := "subscriber-"+hex.EncodeToString(secret[:6])+"@example.com", hex.EncodeToString(secret)
	body, _ := json.Marshal(map[string]string{"email": email, "password": password, "role": "viewer"})
	if err := post(ctx, client, baseURL+"/api/v1/users", token, body, nil); err != nil {
		return "", fmt.Errorf("making a viewer for the subscribers: %w", err)
	}
	var session struct {
		Data struct {
			AccessToken string `json:"access_token"`
		} `json:"data"`
	}
	body, _ = json.Marshal(map[string]string{"email": email, "password": password})
	if err := post(ctx, client, baseURL+"/api/v1/auth/login", "", body, &session); err != nil || session.Data.AccessToken == "" {
		return "", fmt.Errorf("logging the subscribers' viewer in: %v", err)
	}
	return session.Data.AccessToken, nil
}

// post POSTs body to url with token, if any, and decodes a 2xx answer into answer, if any.
func post(ctx context.Context, client *http.Client, url, token string, body []byte, answer any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s", resp.Status)
	}
	if answer == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(answer)
}
