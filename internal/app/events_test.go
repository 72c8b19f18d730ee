package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/webhookdelivery"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"
	"github.com/paygate/paygate/internal/state"
)

// subscriber is a merchant's webhook endpoint: it verifies each delivery with the Standard
// Webhooks library under the endpoint's secret, signed at the server's time (which the test
// moves), and keeps the events it took, by id.
type subscriber struct {
	t      *testing.T
	now    func() time.Time
	server *httptest.Server
	secret string
	id     string
	mu     sync.Mutex
	events map[string][]map[string]any // by event id: each delivery of it
}

func newSubscriber(t *testing.T, now func() time.Time) *subscriber {
	s := &subscriber{t: t, now: now, events: map[string][]map[string]any{}}
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		verifier, err := standardwebhooks.NewWebhook(s.secret)
		if err == nil {
			err = verifier.VerifyIgnoringTimestamp(body, r.Header)
		}
		if signed, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64); s.now().Sub(time.Unix(signed, 0)).Abs() > time.Minute {
			t.Errorf("a delivery to %s signed at %d, the server's time is %s", s.id, signed, s.now())
		}
		if err != nil {
			t.Errorf("a delivery to %s does not verify: %v", s.id, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var event map[string]any
		json.Unmarshal(body, &event)
		s.events[str(event["id"])] = append(s.events[str(event["id"])], event)
	}))
	t.Cleanup(s.server.Close)
	return s
}

// subscribe makes the subscriber's endpoint over REST, subscribed to types.
func (s *subscriber) subscribe(env *testEnv, token string, types ...string) {
	r := env.request(http.MethodPost, "/api/v1/webhook-endpoints", token, map[string]any{"url": s.server.URL + "/paygate", "events": types})
	if r.status != http.StatusCreated {
		s.t.Fatalf("POST /api/v1/webhook-endpoints = %d %s", r.status, r.raw)
	}
	s.mu.Lock()
	s.secret, s.id = str(r.data()["secret"]), str(r.data()["id"])
	s.mu.Unlock()
}

// received are the ids of the events the subscriber took, each once, sorted; twice is an error.
func (s *subscriber) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, deliveries := range s.events {
		if len(deliveries) > 1 {
			s.t.Errorf("%s got event %s %d times", s.id, id, len(deliveries))
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// TestEventsReachTheirSubscribers: a payment, a refund the provider settles later by its webhook,
// a declined card, a dispute and an authorisation that expires each write their events in the
// transaction of the change, listed by the events API over REST and GraphQL; each reaches every
// endpoint subscribed to its type once, signed with its secret, and no other endpoint.
func TestEventsReachTheirSubscribers(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		ctx := databasetest.AsMerchant()
		adyen := env.app.services.providers.sandboxes["adyen"].(*adyensandbox.Sandbox)
		adyen.SettleAfter = time.Nanosecond
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		paymentsAndRefunds, declines, nothing := newSubscriber(t, env.clock.Now), newSubscriber(t, env.clock.Now), newSubscriber(t, env.clock.Now)
		paymentsAndRefunds.subscribe(env, admin, "payment.succeeded", "refund.succeeded", "payment.refunded", "dispute.created", "payment.canceled")
		declines.subscribe(env, admin, "payment.failed")
		nothing.subscribe(env, admin, "refund.failed")

		// Paid in euros at Adyen, which settles the refund later, by its REFUND webhook.
		paid := env.succeededPayment(admin, "40.00", "EUR", "adyen")
		refund := env.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", admin, map[string]any{"amount": "15.00"})
		if refund.status != http.StatusCreated || refund.data()["status"] != "pending" {
			t.Fatalf("refund at Adyen = %d %s", refund.status, refund.raw)
		}
		if _, err := adyen.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "Adyen's REFUND webhook to settle the refund", func() bool { return env.payment(paid).Status == "partially_refunded" })
		env.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": paid, "type": "dispute"})
		waitFor(t, "the dispute to be recorded", func() bool { return env.payment(paid).DisputedAt != nil })
		declined := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("9.00", "USD", "4000000000000002"))
		held := str(env.request(http.MethodPost, "/api/v1/payments", admin, manualBody("30.00", "USD")).data()["id"])
		// What was sent so far is delivered before the clock jumps a week, which would let the
		// lease of a try still under way run out, and the delivery be sent again.
		waitFor(t, "the deliveries so far", func() bool {
			n, err := db.Ent.WebhookDelivery.Query().Where(webhookdelivery.StatusNEQ(state.DeliveryDelivered)).Count(ctx)
			return err == nil && n == 0 && len(declines.received()) == 1
		})
		env.clock.Advance(8 * 24 * time.Hour) // past capture_before
		if err := env.app.expire(ctx); err != nil || env.payment(held).Status != "canceled" {
			t.Fatalf("expiry: %v, %s", err, env.payment(held).Status)
		}
		admin = env.tokenFor("admin") // the first expired with the clock

		// The events, as the API lists them: one per change, in the shape the REST API shows then.
		byType := map[string][]string{}
		objects := map[string]map[string]any{}
		for _, eventType := range []string{"payment.succeeded", "refund.succeeded", "payment.refunded", "dispute.created", "payment.failed",
			"payment.requires_capture", "payment.canceled", "refund.failed"} {
			r := env.request(http.MethodGet, "/api/v1/events?type="+eventType, admin, nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET /api/v1/events?type=%s = %d %s", eventType, r.status, r.raw)
			}
			for _, e := range get(r.body, "data").([]any) {
				byType[eventType] = append(byType[eventType], str(get(e, "id")))
				objects[str(get(e, "id"))], _ = get(e, "data", "object").(map[string]any)
			}
		}
		for eventType, want := range map[string]int{"payment.succeeded": 1, "refund.succeeded": 1, "payment.refunded": 1, "dispute.created": 1,
			"payment.failed": 1, "payment.requires_capture": 1, "payment.canceled": 1, "refund.failed": 0} {
			if len(byType[eventType]) != want {
				t.Errorf("%d %s events, want %d", len(byType[eventType]), eventType, want)
			}
		}
		refunded := objects[first(byType["payment.refunded"])]
		if refunded["id"] != paid || refunded["status"] != "partially_refunded" || str(refunded["amount_refunded"]) != "15.00" {
			t.Errorf("payment.refunded shows %v", refunded)
		}
		if settled := objects[first(byType["refund.succeeded"])]; settled["object"] != "refund" || settled["status"] != "succeeded" || settled["payment_id"] != paid {
			t.Errorf("refund.succeeded shows %v", settled)
		}
		if disputed := objects[first(byType["dispute.created"])]; disputed["disputed_at"] == nil {
			t.Errorf("dispute.created shows %v", disputed)
		}
		if canceled := objects[first(byType["payment.canceled"])]; canceled["id"] != held || canceled["cancellation_reason"] != "expired" {
			t.Errorf("payment.canceled shows %v", canceled)
		}
		if failed := objects[first(byType["payment.failed"])]; failed["id"] != str(get(declined.body, "data", "id")) || failed["failure_code"] != "card_declined" {
			t.Errorf("payment.failed shows %v", failed)
		}

		// GraphQL lists the same events, and node reads one with its data.
		out := env.mustGraphQL(admin, `{ events(first: 50, where: {type: "payment.canceled"}) { edges { node { id type data } } } }`, nil)
		edges, _ := get(out, "events", "edges").([]any)
		if len(edges) != 1 || str(get(edges[0], "node", "id")) != first(byType["payment.canceled"]) || get(edges[0], "node", "data", "object", "id") != held {
			t.Errorf("GraphQL events = %v", out)
		}
		out = env.mustGraphQL(admin, `query($id: ID!) { node(id: $id) { ... on Event { type data } } }`, map[string]any{"id": first(byType["dispute.created"])})
		if get(out, "node", "type") != "dispute.created" || get(out, "node", "data", "object", "id") != paid {
			t.Errorf("node(event) = %v", out)
		}

		// Each subscriber takes what it subscribed to, once; the third nothing.
		wantSubscribed := slices.Concat(byType["payment.succeeded"], byType["refund.succeeded"], byType["payment.refunded"],
			byType["dispute.created"], byType["payment.canceled"])
		sort.Strings(wantSubscribed)
		waitFor(t, "the deliveries", func() bool {
			return len(paymentsAndRefunds.received()) == len(wantSubscribed) && len(declines.received()) == 1
		})
		env.app.services.deliveries.Wait()
		if got := paymentsAndRefunds.received(); !slices.Equal(got, wantSubscribed) {
			t.Errorf("the payments and refunds endpoint got %v, want %v", got, wantSubscribed)
		}
		if got := declines.received(); !slices.Equal(got, byType["payment.failed"]) {
			t.Errorf("the declines endpoint got %v", got)
		}
		if got := nothing.received(); len(got) != 0 {
			t.Errorf("an endpoint subscribed to nothing that happened got %v", got)
		}

		// The delivery log says so too, over REST and GraphQL.
		r := env.request(http.MethodGet, "/api/v1/webhook-endpoints/"+declines.id+"/deliveries?status=delivered", admin, nil)
		logged, _ := get(r.body, "data").([]any)
		if r.status != http.StatusOK || len(logged) != 1 || get(logged[0], "event_id") != first(byType["payment.failed"]) ||
			str(get(logged[0], "last_status_code")) != "200" || str(get(logged[0], "attempts")) != "1" {
			t.Errorf("the declines endpoint's deliveries = %d %s", r.status, r.raw)
		}
		out = env.mustGraphQL(admin, `query($id: ID!) { webhookDeliveries(endpointId: $id, first: 10) { totalCount edges { node { status eventID attemptLog { statusCode } } } } }`,
			map[string]any{"id": paymentsAndRefunds.id})
		if str(get(out, "webhookDeliveries", "totalCount")) != str(len(wantSubscribed)) {
			t.Errorf("GraphQL deliveries = %v", out)
		}

		// Prometheus counts the tries, their time and the queue.
		figures := env.scrape(env.apiKey(admin, "monitoring:read"))
		if n, _ := sample(figures, "paygate_webhook_deliveries_total", map[string]string{"outcome": "delivered"}); int(n) != len(wantSubscribed)+1 {
			t.Errorf("%v deliveries counted, want %d", n, len(wantSubscribed)+1)
		}
		if n, ok := sample(figures, "paygate_webhook_delivery_duration_seconds", nil); !ok || int(n) != len(wantSubscribed)+1 {
			t.Errorf("%v delivery times observed", n)
		}
		if n, ok := sample(figures, "paygate_webhook_delivery_queue", nil); !ok || n != 0 {
			t.Errorf("the queue is %v, %v", n, ok)
		}
	})
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// TestEndpointFailingForADayIsAlerted: an endpoint that has failed every delivery for a day
// raises one alert naming it; once it takes a delivery, it is failing no more.
func TestEndpointFailingForADayIsAlerted(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		ctx := databasetest.AsMerchant()
		var down atomic.Bool
		down.Store(true)
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		defer server.Close()
		admin := env.tokenFor("admin")
		endpointID := str(env.request(http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": server.URL, "events": []string{"*"}}).data()["id"])
		deliveries := env.app.services.deliveries
		round := func() {
			t.Helper()
			if err := deliveries.Round(ctx); err != nil {
				t.Fatal(err)
			}
			deliveries.Wait()
		}
		raised := func() []*ent.Alert {
			t.Helper()
			if _, err := env.app.services.alerts.Evaluate(ctx); err != nil {
				t.Fatal(err)
			}
			found, err := db.Ent.Alert.Query().Where(alert.RuleEQ(alerting.RuleEndpointFailing)).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return found
		}
		env.succeededPayment(admin, "10.00", "USD", "stripe")
		round()
		if found := raised(); len(found) != 0 {
			t.Fatalf("alerted after one failure: %v", found)
		}
		for range 6 {
			env.clock.Advance(5 * time.Hour)
			round()
		}
		found := raised()
		if len(found) != 1 || found[0].Subject != endpointID || found[0].Severity != state.AlertWarning {
			t.Fatalf("after 30 hours of failures: %v", found)
		}
		if again := raised(); len(again) != 1 {
			t.Errorf("raised again: %v", again)
		}
		down.Store(false)
		env.clock.Advance(25 * time.Hour)
		round()
		if e, err := db.Ent.WebhookEndpoint.Get(ctx, endpointID); err != nil || e.FailingSince != nil {
			t.Errorf("an endpoint that took its delivery: %+v, %v", e, err)
		}
	})
}
