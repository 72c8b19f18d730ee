package providertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// WebhookReceiver takes a sandbox's webhooks for a test, as Paygate would: it checks each
// signature with the provider's scheme, answers 500 to the next deliveries when told to, and
// keeps every delivery.
type WebhookReceiver struct {
	URL    string
	verify func(header http.Header, body []byte) error

	mu         sync.Mutex
	deliveries []Delivery
	failures   int
}

// Delivery is one try of a webhook, as the receiver took it.
type Delivery struct {
	Header http.Header
	Body   []byte
	// Status is what the receiver answered.
	Status int
	// Unverified is why its signature did not pass, if it did not.
	Unverified error
}

// NewWebhookReceiver serves a receiver for the test that checks signatures with verify.
func NewWebhookReceiver(t *testing.T, verify func(header http.Header, body []byte) error) *WebhookReceiver {
	t.Helper()
	r := &WebhookReceiver{verify: verify}
	server := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(server.Close)
	r.URL = server.URL + "/webhooks/test"
	return r
}

func (r *WebhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	d := Delivery{Header: req.Header.Clone(), Body: body, Status: http.StatusOK, Unverified: r.verify(req.Header, body)}
	r.mu.Lock()
	switch {
	case d.Unverified != nil:
		d.Status = http.StatusUnauthorized
	case r.failures > 0:
		r.failures--
		d.Status = http.StatusInternalServerError
	}
	r.deliveries = append(r.deliveries, d)
	r.mu.Unlock()
	w.WriteHeader(d.Status)
}

// FailNext makes the receiver answer the next n deliveries 500, as a Paygate server that failed.
func (r *WebhookReceiver) FailNext(n int) {
	r.mu.Lock()
	r.failures = n
	r.mu.Unlock()
}

// Deliveries returns every delivery taken so far, in the order taken.
func (r *WebhookReceiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Verified returns the bodies of the deliveries taken so far, failing t if a signature did not pass.
func (r *WebhookReceiver) Verified(t *testing.T) [][]byte {
	t.Helper()
	var bodies [][]byte
	for _, d := range r.Deliveries() {
		if d.Unverified != nil {
			t.Errorf("a webhook's signature did not pass: %v\n%s", d.Unverified, d.Body)
		}
		bodies = append(bodies, d.Body)
	}
	return bodies
}

// NoWait stands for time.After in a webhook sender under test: retries follow at once.
func NoWait(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Now()
	return c
}

// CheckRetried charges through c with the receiver failing the first fails deliveries, waits for
// the sender (wait), and checks that the webhook was sent again until taken: the same event, each
// try signed.
func CheckRetried(t *testing.T, c provider.Provider, wait func(), r *WebhookReceiver, fails int) {
	t.Helper()
	r.FailNext(fails)
	if _, err := c.Charge(context.Background(), Charge(t, Approved, 1000)); err != nil {
		t.Fatal(err)
	}
	wait()
	deliveries := r.Deliveries()
	if len(deliveries) != fails+1 {
		t.Fatalf("%d deliveries, want %d answered 500 and the retry", len(deliveries), fails)
	}
	for i, d := range deliveries {
		if d.Unverified != nil || !bytes.Equal(d.Body, deliveries[0].Body) {
			t.Errorf("delivery %d: %v, body %s; want the same event, signed", i, d.Unverified, d.Body)
		}
	}
	if last := deliveries[fails].Status; last != http.StatusOK {
		t.Errorf("the last try was answered %d", last)
	}
}
