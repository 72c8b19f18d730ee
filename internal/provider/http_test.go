package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
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
	if _, _, err := caller.Post(context.Background(), closed, http.Header{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a refused connection = %v", err)
	}
	if _, _, err := caller.Post(context.Background(), "http://paygate-no-such-host.invalid", http.Header{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("an unknown host = %v", err)
	}
}
