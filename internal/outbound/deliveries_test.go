package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/webhookdelivery"
	paygateclock "github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	events "github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/state"
)

// merchant is a merchant's endpoint under test: it answers what answer says for each delivery
// (200 by default) and keeps every delivery it took, in order.
type merchant struct {
	server *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) int // the status for the n-th delivery, from 1
}

func newMerchant(t *testing.T, answer func(n int) int) *merchant {
	m := &merchant{answer: answer}
	m.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.got = append(m.got, received{r.Header.Clone(), body})
		n := len(m.got)
		m.mu.Unlock()
		status := http.StatusOK
		if m.answer != nil {
			status = m.answer(n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(m.server.Close)
	return m
}

func (m *merchant) received() []received {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]received(nil), m.got...)
}

// eventIDs are the ids of the events m received, verified under secret with the Standard
// Webhooks library, in the order they came.
func (m *merchant) eventIDs(t *testing.T, secret string, now time.Time) []string {
	t.Helper()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range m.received() {
		if err := verifier.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
			t.Errorf("a delivery does not verify under its endpoint's secret: %v", err)
		}
		var body events.Body
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if r.header.Get("webhook-id") != body.ID {
			t.Errorf("webhook-id %q, event %s", r.header.Get("webhook-id"), body.ID)
		}
		ids = append(ids, body.ID)
	}
	return ids
}

// harness is one database, a clock the test moves, and a Deliveries per server.
type harness struct {
	t       *testing.T
	db      *database.DB
	clock   *paygateclock.Adjustable
	servers []*Deliveries
}

func newHarness(t *testing.T, pools []*database.DB, sender *Sender) *harness {
	h := &harness{t: t, db: pools[0], clock: &paygateclock.Adjustable{}}
	for _, pool := range pools {
		h.servers = append(h.servers, NewDeliveries(Deliveries{Client: pool.Ent, Sender: sender, Now: h.clock.Now,
			Jitter: func() float64 { return 0.5 }}))
	}
	return h
}

// endpoint makes an endpoint of the default merchant subscribed to types at url, as the service
// does but for the URL's checks, which the tests of the dial guard go around.
func (h *harness) endpoint(url string, types ...string) *ent.WebhookEndpoint {
	h.t.Helper()
	return h.endpointOf(tenant.DefaultMerchant, url, types...)
}

// endpointOf makes an endpoint of merchant.
func (h *harness) endpointOf(merchant, url string, types ...string) *ent.WebhookEndpoint {
	h.t.Helper()
	now := h.clock.Now()
	e, err := h.db.Ent.WebhookEndpoint.Create().SetURL(url).SetEvents(types).SetSecret(NewSigningSecret()).
		SetCreatedBy("usr_test").SetCreatedAt(now).SetUpdatedAt(now).Save(tenant.For(context.Background(), merchant))
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

// event records an event of eventType, as a payment service does in the transaction of a change.
func (h *harness) event(eventType string) string {
	h.t.Helper()
	ctx := databasetest.AsMerchant()
	tx, err := h.db.Ent.Tx(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := (*events.Recorder)(nil).Record(ctx, tx, tenant.DefaultMerchant, eventType, "pay_1", map[string]string{"id": "pay_1"}, h.clock.Now()); err != nil {
		h.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		h.t.Fatal(err)
	}
	e, err := h.db.Ent.Event.Query().Order(ent.Desc("created_at"), ent.Desc("id")).First(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return e.ID
}

// round runs a round on server i and waits for the tries it started.
func (h *harness) round(i int) {
	h.t.Helper()
	if err := h.servers[i].Round(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.servers[i].Wait()
}

func (h *harness) deliveries(endpointID string) []*ent.WebhookDelivery {
	h.t.Helper()
	found, err := h.db.Ent.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpointID)).
		WithAttemptLog().Order(ent.Asc("created_at"), ent.Asc("id")).All(databasetest.AsMerchant())
	if err != nil {
		h.t.Fatal(err)
	}
	return found
}

// TestDeliveriesReachTheSubscribed: each event reaches every enabled endpoint subscribed to its
// type once, signed with that endpoint's secret, however many servers fan out and deliver at
// once; an unsubscribed or disabled endpoint, or another merchant's, gets nothing.
func TestDeliveriesReachTheSubscribed(t *testing.T) {
	databasetest.ForEachPools(t, 3, func(t *testing.T, pools []*database.DB) {
		h := newHarness(t, pools, NewSender(false, 5*time.Second))
		payments, all, refunds, disabled := newMerchant(t, nil), newMerchant(t, nil), newMerchant(t, nil), newMerchant(t, nil)
		another := newMerchant(t, nil)
		h.endpointOf("mer_another", another.server.URL, "*")
		paymentsEndpoint := h.endpoint(payments.server.URL, events.PaymentSucceeded, events.PaymentFailed)
		allEndpoint := h.endpoint(all.server.URL+"/hooks?shop=1", "*")
		h.endpoint(refunds.server.URL, events.RefundSucceeded)
		off := h.endpoint(disabled.server.URL, "*")
		if err := h.db.Ent.WebhookEndpoint.UpdateOne(off).SetStatus(state.EndpointDisabled).Exec(databasetest.AsMerchant()); err != nil {
			t.Fatal(err)
		}
		var sent []string
		for _, eventType := range []string{events.PaymentSucceeded, events.RefundFailed, events.PaymentFailed, events.DisputeCreated} {
			sent = append(sent, h.event(eventType))
		}

		var wg sync.WaitGroup
		for i := range h.servers {
			wg.Go(func() {
				if err := h.servers[i].Round(context.Background()); err != nil {
					t.Error(err)
				}
				h.servers[i].Wait()
			})
		}
		wg.Wait()
		h.round(0) // whatever a server claimed after another's round began

		now := h.clock.Now()
		if got := payments.eventIDs(t, paymentsEndpoint.Secret, now); !sameSet(got, []string{sent[0], sent[2]}) {
			t.Errorf("the payments endpoint got %v, want %v", got, []string{sent[0], sent[2]})
		}
		if got := all.eventIDs(t, allEndpoint.Secret, now); !sameSet(got, sent) {
			t.Errorf("the endpoint of every type got %v, want %v", got, sent)
		}
		if len(refunds.received()) != 0 || len(disabled.received()) != 0 || len(another.received()) != 0 {
			t.Errorf("an unsubscribed, disabled or another merchant's endpoint got deliveries: %d, %d, %d",
				len(refunds.received()), len(disabled.received()), len(another.received()))
		}
		for _, d := range h.deliveries(allEndpoint.ID) {
			if d.Status != state.DeliveryDelivered || d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 ||
				d.DeliveredAt == nil || d.NextAttemptAt != nil || len(d.Edges.AttemptLog) != 1 {
				t.Errorf("delivery %+v", d)
			}
		}
		if r := all.received()[0]; r.header.Get("User-Agent") != userAgent || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", r.header)
		}
	})
}

// TestDeliveriesRetryOnSchedule: a delivery an endpoint fails is tried again on the schedule
// (about 5 s, 5 min, 30 min, ...), each try in its log, until the endpoint takes it; one an
// endpoint fails every time has failed after the last; an endpoint that answers 410 Gone is
// disabled, and is sent nothing more until it is enabled again.
func TestDeliveriesRetryOnSchedule(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := newHarness(t, []*database.DB{db}, NewSender(false, 5*time.Second))
		ctx := databasetest.AsMerchant()

		// Down for three tries, then back: every event comes.
		recovering := newMerchant(t, func(n int) int {
			if n <= 3 {
				return http.StatusServiceUnavailable
			}
			return http.StatusNoContent
		})
		back := h.endpoint(recovering.server.URL, "*")
		first := h.event(events.PaymentSucceeded)
		h.round(0)
		d := h.deliveries(back.ID)[0]
		wait := d.NextAttemptAt.Sub(h.clock.Now())
		if d.Status != state.DeliveryPending || d.Attempts != 1 || *d.LastStatusCode != 503 || wait < 4*time.Second || wait > 6*time.Second {
			t.Fatalf("after one failed try: %+v, next in %s", d, wait)
		}
		failing, _ := h.db.Ent.WebhookEndpoint.Get(ctx, back.ID)
		if failing.FailingSince == nil {
			t.Error("a failing endpoint has no failing_since")
		}
		second := h.event(events.RefundSucceeded) // queued while the endpoint is down
		for _, step := range []time.Duration{6 * time.Second, 6 * time.Minute, 35 * time.Minute} {
			h.clock.Advance(step)
			h.round(0)
		}
		if got := recovering.eventIDs(t, back.Secret, h.clock.Now()); len(got) != 5 || !sameSet(got[3:], []string{first, second}) {
			t.Errorf("the endpoint that came back got %v", got)
		}
		d = h.deliveries(back.ID)[0]
		// Its tries: the first alone, then beside the second event's (both refused), then both taken.
		if d.Status != state.DeliveryDelivered || d.Attempts != 3 || len(d.Edges.AttemptLog) != 3 || d.LastError != nil {
			t.Errorf("the delivery that got through: %+v, %d tries", d, len(d.Edges.AttemptLog))
		}
		for i, a := range d.Edges.AttemptLog {
			want := 503
			if i == 2 {
				want = 204
			}
			if a.StatusCode == nil || *a.StatusCode != want || (want == 503) != (a.Error != nil) {
				t.Errorf("try %d: %+v", i+1, a)
			}
		}
		if back, _ := h.db.Ent.WebhookEndpoint.Get(ctx, back.ID); back.FailingSince != nil {
			t.Error("an endpoint that took a delivery is still failing")
		}

		// Down for good: failed after the last try of the schedule.
		dead := newMerchant(t, func(int) int { return http.StatusInternalServerError })
		deadEndpoint := h.endpoint(dead.server.URL, events.PaymentFailed)
		h.event(events.PaymentFailed)
		h.round(0)
		for range RetryWaits {
			h.clock.Advance(25 * time.Hour)
			h.round(0)
		}
		d = h.deliveries(deadEndpoint.ID)[0]
		if d.Status != state.DeliveryFailed || d.Attempts != len(RetryWaits)+1 || d.NextAttemptAt != nil || len(dead.received()) != len(RetryWaits)+1 {
			t.Errorf("a delivery failed every time: %+v, %d received", d, len(dead.received()))
		}

		// Gone: disabled at once, and sent nothing more.
		gone := newMerchant(t, func(int) int { return http.StatusGone })
		goneEndpoint := h.endpoint(gone.server.URL, "*")
		h.event(events.PaymentCanceled)
		h.round(0)
		disabled, _ := h.db.Ent.WebhookEndpoint.Get(ctx, goneEndpoint.ID)
		if disabled.Status != state.EndpointDisabled || disabled.DisabledReason == nil || h.deliveries(goneEndpoint.ID)[0].Status != state.DeliveryFailed {
			t.Errorf("an endpoint that answered 410: %+v", disabled)
		}
		h.event(events.PaymentCanceled)
		h.clock.Advance(time.Hour)
		h.round(0)
		if len(gone.received()) != 1 || len(h.deliveries(goneEndpoint.ID)) != 1 {
			t.Errorf("a disabled endpoint was sent %d deliveries", len(gone.received()))
		}
	})
}

// TestDeliveryOfAServerThatDied: a try whose server dies before recording it is made again by
// another server once its lease runs out; the event is delivered, at least once, never lost.
func TestDeliveryOfAServerThatDied(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		h := newHarness(t, pools, NewSender(false, 5*time.Second))
		arrived := make(chan struct{}, 4)
		hold := make(chan struct{})
		defer close(hold)
		m := newMerchant(t, func(n int) int {
			if n == 1 {
				arrived <- struct{}{}
				<-hold // the first server dies while the endpoint is answering
			}
			return http.StatusOK
		})
		e := h.endpoint(m.server.URL, "*")
		id := h.event(events.PaymentSucceeded)

		dying, die := context.WithCancel(context.Background())
		if err := h.servers[0].Round(dying); err != nil {
			t.Fatal(err)
		}
		<-arrived
		die()
		h.servers[0].Wait()
		if d := h.deliveries(e.ID)[0]; d.Status != state.DeliveryPending || d.Attempts != 1 || len(d.Edges.AttemptLog) != 0 {
			t.Fatalf("the try of the server that died: %+v", d)
		}
		h.round(1) // its lease holds: nothing is due yet
		if len(m.received()) != 1 {
			t.Fatalf("the delivery was taken while its lease held: %d received", len(m.received()))
		}
		h.clock.Advance(deliveryLease + time.Second)
		h.round(1)
		d := h.deliveries(e.ID)[0]
		if d.Status != state.DeliveryDelivered || d.Attempts != 2 || len(d.Edges.AttemptLog) != 1 {
			t.Errorf("after the lease ran out: %+v", d)
		}
		if got := m.eventIDs(t, e.Secret, h.clock.Now()); len(got) != 2 || got[1] != id {
			t.Errorf("the endpoint got %v", got)
		}
	})
}

// TestSlowEndpointDelaysNoOther: an endpoint that hangs holds only a few of a server's tries,
// and another endpoint's deliveries go through meanwhile.
func TestSlowEndpointDelaysNoOther(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := newHarness(t, []*database.DB{db}, NewSender(false, 30*time.Second))
		release := make(chan struct{})
		var hanging atomic.Int32
		slow := newMerchant(t, func(int) int {
			hanging.Add(1)
			<-release
			return http.StatusOK
		})
		fast := newMerchant(t, nil)
		h.endpoint(slow.server.URL, "*")
		fastEndpoint := h.endpoint(fast.server.URL, "*")
		for range 10 {
			h.event(events.PaymentSucceeded)
		}
		ctx := databasetest.AsMerchant()
		// Rounds, as the server's loop runs them, until the fast endpoint has everything.
		deadline := time.Now().Add(30 * time.Second)
		for len(fast.received()) < 10 && time.Now().Before(deadline) {
			if err := h.servers[0].Round(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n := len(fast.received()); n != 10 {
			t.Errorf("the fast endpoint got %d of 10 while the other hung", n)
		}
		if n := hanging.Load(); n > defaultPerEndpoint {
			t.Errorf("the hanging endpoint holds %d tries, more than %d", n, defaultPerEndpoint)
		}
		close(release)
		h.servers[0].Wait()
		for _, d := range h.deliveries(fastEndpoint.ID) {
			if d.Status != state.DeliveryDelivered {
				t.Errorf("fast delivery %+v", d)
			}
		}
	})
}

// TestRotatedSecretSignsForADay: after a rotation both secrets sign (two v1 entries), so an
// endpoint holding either verifies; after 24 hours only the new one does.
func TestRotatedSecretSignsForADay(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := newHarness(t, []*database.DB{db}, NewSender(false, 5*time.Second))
		m := newMerchant(t, nil)
		endpoints := &Endpoints{Client: db.Ent, Dialect: db.Dialect, Now: h.clock.Now}
		ctx := asRole("usr_1", "admin")
		made, oldSecret, err := endpoints.Create(ctx, EndpointInput{URL: m.server.URL, Events: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		if made.Secret != oldSecret || !strings.HasPrefix(oldSecret, "whsec_") {
			t.Fatalf("made with secret %q", oldSecret)
		}
		_, newSecret, err := endpoints.RotateSecret(ctx, made.ID)
		if err != nil || newSecret == oldSecret {
			t.Fatalf("rotated: %q, %v", newSecret, err)
		}
		h.event(events.PaymentSucceeded)
		h.round(0)
		h.clock.Advance(SecretOverlap + time.Minute)
		h.event(events.PaymentSucceeded)
		h.round(0)

		got := m.received()
		if len(got) != 2 {
			t.Fatalf("%d deliveries", len(got))
		}
		for i, tc := range []struct {
			entries               int
			oldVerifies, verifies bool
		}{{2, true, true}, {1, false, true}} {
			r := got[i]
			if n := len(strings.Fields(r.header.Get("webhook-signature"))); n != tc.entries {
				t.Errorf("delivery %d: %d signatures, want %d", i+1, n, tc.entries)
			}
			for secret, want := range map[string]bool{oldSecret: tc.oldVerifies, newSecret: tc.verifies} {
				verifier, _ := standardwebhooks.NewWebhook(secret)
				if err := verifier.VerifyIgnoringTimestamp(r.body, r.header); (err == nil) != want {
					t.Errorf("delivery %d under the %s secret: %v", i+1, map[bool]string{true: "new", false: "old"}[secret == newSecret], err)
				}
			}
		}
	})
}

// TestDeliveriesRefuseInwardAddresses: in production every delivery's connection is checked as
// it is dialled, so an endpoint whose URL names, or resolves to, an address of Paygate's own
// networks is never reached, whatever form the address takes.
func TestDeliveriesRefuseInwardAddresses(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		var reached atomic.Int32
		server := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
		defer server.Close()
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(server.URL, "http://"))
		h := newHarness(t, []*database.DB{db}, NewSender(true, 2*time.Second))
		var refused, unresolved []*ent.WebhookEndpoint
		for _, host := range []string{"127.0.0.1", "[::1]", "169.254.169.254", "[::ffff:127.0.0.1]", "localhost", "[::ffff:169.254.169.254]"} {
			refused = append(refused, h.endpoint("https://"+host+":"+port+"/", "*"))
		}
		// Numbers some resolvers read as 127.0.0.1: refused where they are read so, else unresolved.
		for _, host := range []string{"2130706433", "0x7f000001", "017700000001"} {
			unresolved = append(unresolved, h.endpoint("https://"+host+":"+port+"/", "*"))
		}
		h.event(events.PaymentSucceeded)
		h.round(0)
		if reached.Load() != 0 {
			t.Fatalf("an address of Paygate's own was reached %d times", reached.Load())
		}
		for _, e := range refused {
			d := h.deliveries(e.ID)[0]
			if d.Status != state.DeliveryPending || d.LastError == nil || !strings.HasPrefix(*d.LastError, "refused destination") {
				t.Errorf("%s: %+v", e.URL, d)
			}
		}
		for _, e := range unresolved {
			if d := h.deliveries(e.ID)[0]; d.Status != state.DeliveryPending || d.LastStatusCode != nil || d.LastError == nil {
				t.Errorf("%s: %+v", e.URL, d)
			}
		}

		endpoints := &Endpoints{Client: db.Ent, Dialect: db.Dialect, Production: true, Now: h.clock.Now}
		ctx := asRole("usr_1", "admin")
		for _, url := range []string{"http://example.com/hooks", "https://127.0.0.1/", "https://[::1]/", "https://169.254.169.254/",
			"https://[::ffff:10.0.0.1]/"} {
			if _, _, err := endpoints.Create(ctx, EndpointInput{URL: url, Events: []string{"*"}}); err == nil {
				t.Errorf("production made an endpoint at %s", url)
			}
		}
	})
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}

// TestTryRechecksItsEndpoint: a try reads its endpoint afresh: one no longer subscribed to the
// delivery's type fails the delivery instead of sending it; one disabled since the delivery was
// chosen is sent nothing, and the delivery waits, its claim given back.
func TestTryRechecksItsEndpoint(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := newHarness(t, []*database.DB{db}, NewSender(false, 5*time.Second))
		ctx := databasetest.AsMerchant()
		m := newMerchant(t, func(n int) int {
			if n == 1 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		narrowed := h.endpoint(m.server.URL, "*")
		h.event(events.PaymentSucceeded)
		h.round(0)
		db.Ent.WebhookEndpoint.UpdateOne(narrowed).SetEvents([]string{events.PaymentFailed}).ExecX(ctx)
		h.clock.Advance(time.Minute)
		h.round(0)
		d := h.deliveries(narrowed.ID)[0]
		if d.Status != state.DeliveryFailed || d.LastError == nil || !strings.Contains(*d.LastError, "no longer subscribes") || len(m.received()) != 1 {
			t.Errorf("a delivery whose endpoint stopped subscribing: %+v, %d received", d, len(m.received()))
		}

		disabled := h.endpoint(m.server.URL, "*")
		h.event(events.PaymentCanceled)
		if err := h.servers[0].Dispatch(ctx); err != nil {
			t.Fatal(err)
		}
		d = h.deliveries(disabled.ID)[0]
		db.Ent.WebhookDelivery.UpdateOne(d).SetAttempts(1).SetNextAttemptAt(h.clock.Now().Add(deliveryLease)).ExecX(ctx) // claimed
		db.Ent.WebhookEndpoint.UpdateOne(disabled).SetStatus(state.EndpointDisabled).ExecX(ctx)                          // then disabled
		if err := h.servers[0].try(ctx, nil, d, 1); err != nil {
			t.Fatal(err)
		}
		d = h.deliveries(disabled.ID)[0]
		if d.Status != state.DeliveryPending || d.Attempts != 0 || len(d.Edges.AttemptLog) != 0 || len(m.received()) != 1 {
			t.Errorf("a try of a disabled endpoint's delivery: %+v, %d received", d, len(m.received()))
		}
	})
}

// TestEventsFannedOutElsewhereAreClaimedOneByOne: events claimed together, while another server
// fanned out one of them, are refused whole (the transaction then rolls back); claimed one by
// one, the rest are this server's.
func TestEventsFannedOutElsewhereAreClaimedOneByOne(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := newHarness(t, []*database.DB{db}, NewSender(false, 5*time.Second))
		ctx := tenant.System(context.Background())
		ids := []string{h.event(events.PaymentSucceeded), h.event(events.PaymentFailed), h.event(events.RefundSucceeded)}
		waiting, err := db.Ent.Event.Query().Where(event.IDIn(ids...)).Order(ent.Asc("created_at"), ent.Asc("id")).All(ctx)
		if err != nil || len(waiting) != 3 {
			t.Fatalf("waiting = %v, %v", waiting, err)
		}
		db.Ent.Event.UpdateOneID(ids[1]).SetFannedOut(true).ExecX(ctx) // by another server, meanwhile
		claimInTx := func(together bool) (claimed []*ent.Event, err error) {
			err = inTx(ctx, db.Ent, func(tx *ent.Tx) error {
				claimed, err = claim(ctx, tx, waiting, together)
				return err
			})
			return claimed, err
		}
		if claimed, err := claimInTx(true); !errors.Is(err, errClaimedElsewhere) {
			t.Errorf("claimed together: %v, %v; want errClaimedElsewhere", claimed, err)
		}
		claimed, err := claimInTx(false)
		var claimedIDs []string
		for _, e := range claimed {
			claimedIDs = append(claimedIDs, e.ID)
		}
		if err != nil || !sameSet(claimedIDs, []string{ids[0], ids[2]}) {
			t.Errorf("claimed one by one: %v, %v; want %s and %s", claimedIDs, err, ids[0], ids[2])
		}
		if left := db.Ent.Event.Query().Where(event.FannedOut(false)).CountX(ctx); left != 0 {
			t.Errorf("%d events left to fan out", left)
		}
	})
}

// Every payment's events are fanned out and kept for 30 days: the dispatcher's read of those
// waiting must go to them alone, not through every event kept, oldest first, on each round.
func TestDispatchReadsOnlyTheWaitingEvents(t *testing.T) {
	db := databasetest.Postgres(t)
	ctx := tenant.System(context.Background())
	kept := make([]*ent.EventCreate, 2000)
	for i := range kept {
		kept[i] = db.Ent.Event.Create().SetMerchantID(tenant.DefaultMerchant).SetType("payment.succeeded").
			SetObjectID("pay_1").SetBody([]byte("{}")).SetFannedOut(true)
	}
	if err := db.Ent.Event.CreateBulk(kept...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "ANALYZE events"); err != nil {
		t.Fatal(err)
	}
	var waiting string
	client := databasetest.RecordingClient(db, func(query string) {
		if strings.HasPrefix(query, `SELECT "events"."id"`) {
			waiting = query
		}
	})
	if err := NewDeliveries(Deliveries{Client: client, Now: time.Now}).Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	if waiting == "" {
		t.Fatal("Dispatch read no events")
	}
	if plan := databasetest.GenericPlan(t, db, waiting); !strings.Contains(plan, "event_waiting_created_at_id") {
		t.Fatalf("the dispatcher's read of the waiting events, %s, goes another way:\n%s", waiting, plan)
	}
}
