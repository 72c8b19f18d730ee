package outbound

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"

	"github.com/paygate/paygate/internal/logtest"
)

// tries is a receiver's record of the tries it took.
type tries struct {
	mu      sync.Mutex
	headers []http.Header
	bodies  []string
}

func (r *tries) take(req *http.Request) int {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	r.bodies = append(r.bodies, string(body))
	return len(r.bodies)
}

func (r *tries) taken() ([]http.Header, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...), append([]string(nil), r.bodies...)
}

// signAt signs with the time of the try, so a test sees each try signed anew.
func signAt(_ []byte, at time.Time) http.Header {
	return http.Header{"Signed-At": {strconv.FormatInt(at.Unix(), 10)}}
}

// clock is a clock that moves a second at each reading.
func clock() func() time.Time {
	var ticks atomic.Int64
	return func() time.Time { return time.Unix(1_800_000_000+ticks.Add(1), 0) }
}

// recordWaits is an After that returns at once and keeps the waits asked for.
func recordWaits(waits *[]time.Duration, mu *sync.Mutex) func(time.Duration) <-chan time.Time {
	return func(d time.Duration) <-chan time.Time {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
}

// TestWebhookRetriedWithBackoff: a webhook answered 500, then lost, is tried again after each
// wait, the same body signed anew, until it is delivered.
func TestWebhookRetriedWithBackoff(t *testing.T) {
	var got tries
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch got.take(r) {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer server.Close()
	var waits []time.Duration
	var mu sync.Mutex
	sender, err := NewWebhookSender(context.Background(), WebhookConfig{URL: server.URL,
		RetryWaits: []time.Duration{time.Second, time.Minute, time.Hour}, Now: clock(), After: recordWaits(&waits, &mu)}, signAt)
	if err != nil {
		t.Fatal(err)
	}
	if !sender.Send("evt_1", []byte(`{"id":"evt_1"}`)) {
		t.Fatal("the webhook was not taken")
	}
	sender.Wait()
	headers, bodies := got.taken()
	if len(bodies) != 3 {
		t.Fatalf("%d tries, want 3", len(bodies))
	}
	for i := range bodies {
		if bodies[i] != `{"id":"evt_1"}` || headers[i].Get("Content-Type") != "application/json" {
			t.Errorf("try %d: %s, %v", i, bodies[i], headers[i])
		}
		if i > 0 && headers[i].Get("Signed-At") == headers[i-1].Get("Signed-At") {
			t.Errorf("try %d was not signed anew", i)
		}
	}
	if want := []time.Duration{time.Second, time.Minute}; len(waits) != 2 || waits[0] != want[0] || waits[1] != want[1] {
		t.Errorf("waited %v, want %v", waits, want)
	}
}

// TestWebhookGivenUp: a webhook never accepted is given up after its retries, and logged; a
// redirect is a failure, never followed.
func TestWebhookGivenUp(t *testing.T) {
	var got tries
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/webhooks/stripe", func(w http.ResponseWriter, r *http.Request) {
		got.take(r)
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { followed.Add(1) })
	server := httptest.NewServer(mux)
	defer server.Close()
	var log logtest.Buffer
	var waits []time.Duration
	var mu sync.Mutex
	sender, _ := NewWebhookSender(context.Background(), WebhookConfig{URL: server.URL + "/webhooks/stripe",
		RetryWaits: []time.Duration{time.Second, time.Second}, After: recordWaits(&waits, &mu), Logger: slog.New(slog.NewTextHandler(&log, nil))}, signAt)
	sender.Send("evt_2", []byte(`{}`))
	sender.Wait()
	if _, bodies := got.taken(); len(bodies) != 3 || followed.Load() != 0 {
		t.Errorf("%d tries, %d redirects followed; want 3 tries, none followed", len(bodies), followed.Load())
	}
	if !strings.Contains(log.String(), "webhook given up") || !strings.Contains(log.String(), "evt_2") {
		t.Errorf("log: %s", log.String())
	}
}

// TestWebhooksInFlightBounded: past MaxInFlight deliveries under way, a webhook is dropped with a
// log line; a slot freed takes the next.
func TestWebhooksInFlightBounded(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer server.Close()
	var log logtest.Buffer
	sender, _ := NewWebhookSender(context.Background(), WebhookConfig{URL: server.URL, MaxInFlight: 1,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}, signAt)
	if !sender.Send("evt_a", []byte(`{}`)) {
		t.Fatal("the first webhook was not taken")
	}
	<-arrived
	if sender.Send("evt_b", []byte(`{}`)) {
		t.Error("a webhook past the bound was taken")
	}
	if !strings.Contains(log.String(), "webhook dropped") || !strings.Contains(log.String(), "evt_b") {
		t.Errorf("log: %s", log.String())
	}
	close(release)
	sender.Wait()
	if !sender.Send("evt_c", []byte(`{}`)) {
		t.Error("a webhook after the slot was freed was dropped")
	}
	<-arrived
	sender.Wait()
}

// TestWebhookSenderStopsWithItsContext: a delivery waiting for its retry ends when the sender's
// context does, and nothing more is taken.
func TestWebhookSenderStopsWithItsContext(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer server.Close()
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{}, 1)
	sender, _ := NewWebhookSender(ctx, WebhookConfig{URL: server.URL, After: func(time.Duration) <-chan time.Time {
		waiting <- struct{}{}
		return nil // never over: only the context ends this wait
	}}, signAt)
	sender.Send("evt_1", []byte(`{}`))
	<-waiting
	cancel()
	sender.Wait()
	if sender.Send("evt_2", []byte(`{}`)) {
		t.Error("a webhook was taken after the context ended")
	}
}

// TestWebhookTryTimesOut: a receiver that hangs is a failed try, tried again.
func TestWebhookTryTimesOut(t *testing.T) {
	var calls atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go away
		if calls.Add(1) == 1 {
			<-r.Context().Done()
		}
	}))
	defer server.Close()
	sender, _ := NewWebhookSender(context.Background(), WebhookConfig{URL: server.URL, Sender: NewSender(false, 50*time.Millisecond),
		After: func(time.Duration) <-chan time.Time { c := make(chan time.Time, 1); c <- time.Time{}; return c }}, signAt)
	sender.Send("evt_1", []byte(`{}`))
	sender.Wait()
	if n := calls.Load(); n != 2 {
		t.Errorf("%d tries, want the one that hung and its retry", n)
	}
}

func TestWebhookSenderConfig(t *testing.T) {
	ctx := databasetest.AsMerchant()
	sender, err := NewWebhookSender(ctx, WebhookConfig{}, signAt)
	if sender != nil || err != nil {
		t.Errorf("no URL = %v, %v; want no sender", sender, err)
	}
	if sender.Send("evt_1", []byte(`{}`)) {
		t.Error("a webhook was taken without a URL")
	}
	sender.Wait()
	for _, config := range []WebhookConfig{{URL: "/webhooks/stripe"}, {URL: "ftp://paygate.test/webhooks/stripe"}} {
		if _, err := NewWebhookSender(ctx, config, signAt); err == nil {
			t.Errorf("%+v was taken", config)
		}
	}
	if _, err := NewWebhookSender(ctx, WebhookConfig{URL: "http://paygate.test/webhooks/stripe"}, nil); err == nil {
		t.Error("a sender that cannot sign was made")
	}
}
