package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefusedConnectionIsAnOutage: a provider that could not be reached charged nothing, whatever
// the retries, so another provider may be tried.
func TestRefusedConnectionIsAnOutage(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + listener.Addr().String()
	listener.Close()
	caller := Caller{HTTP: http.DefaultClient, RetryWaits: []time.Duration{time.Millisecond, time.Millisecond}}
	if _, err := caller.Post(context.Background(), closed, http.Header{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a refused connection = %v", err)
	}
	if _, err := caller.Post(context.Background(), "http://paygate-no-such-host.invalid", http.Header{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("an unknown host = %v", err)
	}
}

// TestLostAnswerThenRefusedRetryIsUnknown: once a try may have been acted on, a later refusal
// proves nothing: the outcome is unknown, never an outage that another provider could follow.
func TestLostAnswerThenRefusedRetryIsUnknown(t *testing.T) {
	server := httptest.NewUnstartedServer(nil)
	server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server.Listener.Close() // the provider goes away: the retry's connection is refused
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close() // after it took the request
	})
	server.Start()
	defer server.Close()
	caller := Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}
	_, err := caller.Post(context.Background(), server.URL, http.Header{}, []byte("{}"))
	if err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("a lost answer, then a refused retry = %v, want an unknown outcome", err)
	}
}

// TestGetRetriesUntilAnswered: a read answered 500 is asked again, as a GET with no body.
func TestGetRetriesUntilAnswered(t *testing.T) {
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodGet || len(body) != 0 || r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if requests.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer server.Close()
	caller := Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}
	answer, err := caller.Get(context.Background(), server.URL, http.Header{"Authorization": {"Bearer k"}})
	if err != nil || answer.Status != http.StatusOK || string(answer.Body) != `{"ok":true}` || requests.Load() != 2 {
		t.Errorf("GET = %d %s, %v after %d requests; want 200 after a retry", answer.Status, answer.Body, err, requests.Load())
	}
}

// TestRefusalsAndOutages: a provider refusing one request did nothing and may be failed over, but
// is not down; one that is down, or refuses everything of ours, is an outage too.
func TestRefusalsAndOutages(t *testing.T) {
	for status, outage := range map[int]bool{
		http.StatusBadRequest: false, http.StatusPaymentRequired: false, http.StatusNotFound: false, http.StatusUnprocessableEntity: false,
		http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusTooManyRequests: true, http.StatusServiceUnavailable: true,
	} {
		err := Answer{Status: status}.Refused("p")
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrOutage) != outage {
			t.Errorf("%d: %v, want an outage: %v", status, err, outage)
		}
	}
	if err := (Answer{Status: http.StatusOK}).Failed("p"); !errors.Is(err, ErrOutage) {
		t.Errorf("a processing failure = %v, want an outage", err)
	}
	if err := (Answer{Status: http.StatusServiceUnavailable, inDoubt: true}).Refused("p"); errors.Is(err, ErrUnavailable) {
		t.Errorf("a refusal after a lost try = %v, want an unknown outcome", err)
	}
}
