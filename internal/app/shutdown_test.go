package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
)

// TestShutdownWritesTheLastKeyUse: stopped as serve stops it, a server writes the API key uses it
// still holds in memory. The rounds stop first, a request finishes after them, as one still in
// flight does, and its key's use is written by the last write at stop, which no round makes any
// more.
func TestShutdownWritesTheLastKeyUse(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		work := env.app.Start(t.Context())
		key := env.apiKey(env.tokenFor("developer"), auth.ScopePaymentsRead)
		lastUse := func() *time.Time {
			t.Helper()
			stored, err := db.Ent.APIKey.Query().Only(databasetest.AsMerchant()) // the key just made
			if err != nil {
				t.Fatal(err)
			}
			return stored.LastUsedAt
		}

		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		work.Stop(stopCtx)
		if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
			t.Fatalf("a request with the key = %d %s", r.status, r.raw)
		}
		if used := lastUse(); used != nil {
			t.Fatalf("the key's use was written at %v with the rounds stopped", used)
		}
		work.RunAtStop(stopCtx)
		if lastUse() == nil {
			t.Error("the stop did not write the key's last use")
		}
	})
}

// TestStoppingEndsTheStreams: a server that stops ends its subscriptions' streams, rather than
// wait for their clients to leave, and a stream opened after ends at once.
func TestStoppingEndsTheStreams(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("viewer")
	body, _ := json.Marshal(map[string]any{"query": `subscription { paymentUpdated { id } }`})
	open := func() <-chan error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, env.url+"/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		ended := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			ended <- err
		}()
		return ended
	}
	ended := open()
	waitFor(t, "the subscription to be in place", func() bool { return env.app.services.hub.Subscribers(live.Payment) == 1 })
	env.app.EndStreams()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream ended with %v, want its end", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream is still open after the server stopped its streams")
	}
	select {
	case err := <-open():
		if err != nil {
			t.Errorf("a stream opened after the stop ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a stream opened after the stop stays open")
	}
	if n := env.app.services.hub.Subscribers(live.Payment); n != 0 {
		t.Errorf("%d subscribers left", n)
	}
}
