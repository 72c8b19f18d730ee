package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
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
