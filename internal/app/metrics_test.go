package app

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// sample returns the value of the family's series with exactly labels, and whether it exists.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	family, ok := families[name]
	if !ok {
		return 0, false
	}
	for _, m := range family.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		matches := true
		for _, pair := range m.Label {
			if labels[pair.GetName()] != pair.GetValue() {
				matches = false
			}
		}
		if !matches {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestPrometheusMetrics: /metrics moves as requests and webhooks happen (TestSystemMetrics counts
// payments, provider calls and requests exactly); its labels name routes, never paths or ids, and
// an invented method cannot add series; it needs monitoring:read unless the metrics are public.
func TestPrometheusMetrics(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		scraper := env.apiKey(admin, auth.ScopeMonitoringRead)
		before := env.scrape(scraper)
		if _, ok := sample(before, "paygate_payments_total", map[string]string{"status": "succeeded", "provider": "stripe", "currency": "USD"}); ok {
			t.Fatal("a payment counted before any was made")
		}

		paid := str(get(env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("12.00", "USD", "4242424242424242")).body, "data", "id"))
		env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("12.00", "USD", "4000000000000002"))
		env.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", admin, map[string]any{"amount": "2.00"})
		env.request(http.MethodGet, "/api/v1/payments/"+paid, admin, nil)
		env.request(http.MethodGet, "/api/v1/nowhere/pay_secret", admin, nil)
		env.request("BREW", "/api/v1/payments", admin, nil)
		// A provider's webhook, stored and processed: the simulated dispute of the payment.
		env.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": paid, "type": "dispute"})
		waitFor(t, "the simulated event to be processed", func() bool {
			_, ok := sample(env.scrape(scraper), "paygate_webhook_events_total", map[string]string{"provider": "stripe", "status": "processed"})
			return ok
		})
		after := env.scrape(scraper)

		for _, want := range []struct {
			name    string
			labels  map[string]string
			atLeast float64
		}{
			{"paygate_provider_circuit_open", map[string]string{"provider": "stripe"}, 0},
			{"paygate_http_requests_total", map[string]string{"route": "/api/v1/payments", "method": "POST", "code": "201"}, 1},
			{"paygate_http_requests_total", map[string]string{"route": "/api/v1/payments", "method": "POST", "code": "402"}, 1},
			{"paygate_http_requests_total", map[string]string{"route": "/api/v1/payments/{id}", "method": "GET", "code": "200"}, 1},
			{"paygate_http_requests_total", map[string]string{"route": "/", "method": "GET", "code": "404"}, 1},
			{"paygate_http_requests_total", map[string]string{"route": "/api/v1/payments", "method": "OTHER", "code": "405"}, 1},
			{"paygate_http_request_duration_seconds", map[string]string{"route": "/api/v1/payments", "method": "POST"}, 2},
			{"paygate_webhook_events_total", map[string]string{"provider": "stripe", "status": "received"}, 1},
			{"paygate_webhook_events_total", map[string]string{"provider": "stripe", "status": "processed"}, 1},
			{"go_goroutines", map[string]string{}, 1},
			{"go_sql_open_connections", map[string]string{"db_name": "paygate"}, 1},
		} {
			got, ok := sample(after, want.name, want.labels)
			if !ok || got < want.atLeast {
				t.Errorf("%s%v = %v (present %v), want at least %v", want.name, want.labels, got, ok, want.atLeast)
			}
		}
		// Labels are route patterns: no id, no path of a request that matched none, no invented method.
		for name, family := range after {
			for _, m := range family.Metric {
				for _, pair := range m.Label {
					if v := pair.GetValue(); strings.Contains(v, "pay_") || strings.Contains(v, "nowhere") || v == "BREW" {
						t.Errorf("%s has the unbounded label %s=%q", name, pair.GetName(), v)
					}
				}
			}
		}

		// Credentials: monitoring:read, or none when the metrics are public.
		if r := env.request(http.MethodGet, "/metrics", "", nil); r.status != http.StatusUnauthorized {
			t.Errorf("scrape without credentials = %d", r.status)
		}
		if r := env.request(http.MethodGet, "/metrics", env.tokenFor("developer"), nil); r.status != http.StatusForbidden || !strings.Contains(r.raw, auth.ScopeMonitoringRead) {
			t.Errorf("scrape by a developer = %d %s", r.status, r.raw)
		}
		public := newTestEnv(t, db, "PAYGATE_METRICS_PUBLIC=true")
		if r := public.request(http.MethodGet, "/metrics", "", nil); r.status != http.StatusOK || !strings.Contains(r.raw, "paygate_provider_circuit_open") {
			t.Errorf("public scrape = %d %.200s", r.status, r.raw)
		}
	})
}

// series returns every series of the family, by its labels written name=value in name order,
// with its value (a histogram's: its count), so a test can compare the whole family exactly.
func series(families map[string]*dto.MetricFamily, name string) map[string]float64 {
	all := map[string]float64{}
	family, ok := families[name]
	if !ok {
		return all
	}
	for _, m := range family.Metric {
		var labels []string
		for _, pair := range m.Label {
			labels = append(labels, pair.GetName()+"="+pair.GetValue())
		}
		slices.Sort(labels)
		switch key := strings.Join(labels, ","); {
		case m.Counter != nil:
			all[key] = m.Counter.GetValue()
		case m.Gauge != nil:
			all[key] = m.Gauge.GetValue()
		case m.Histogram != nil:
			all[key] = float64(m.Histogram.GetSampleCount())
		}
	}
	return all
}

// TestSystemMetrics: every figure of the monitoring API (REST and GraphQL) and of /metrics that
// does not hang on timing is exact, after payments in three currencies that were captured in
// full or in part, refunded in part or in full (one refund settling later), declined, or only
// authorised. The volume is net: what was captured less what was refunded, per currency, over
// the last day; a currency whose payments kept nothing is listed at 0.00.
func TestSystemMetrics(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		ctx := databasetest.AsMerchant()
		admin := env.tokenFor("admin")
		scraper := env.apiKey(admin, auth.ScopeMonitoringRead)
		pay := func(body map[string]any, status int) string {
			t.Helper()
			r := env.request(http.MethodPost, "/api/v1/payments", admin, body)
			if r.status != status {
				t.Fatalf("payment of %v %v = %d %s", body["amount"], body["currency"], r.status, r.raw)
			}
			return str(get(r.data(), "id"))
		}
		refund := func(id, amount string) {
			t.Helper()
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": amount}); r.status != http.StatusCreated {
				t.Fatalf("refund of %s = %d %s", amount, r.status, r.raw)
			}
		}
		// Older than the day the figures reach.
		old := pay(paymentBody("99.00", "USD", "4242424242424242"), http.StatusCreated)
		if _, err := db.SQL.Exec(`UPDATE payments SET created_at = $1 WHERE id = $2`, env.clock.Now().Add(-25*time.Hour), old); err != nil {
			t.Fatal(err)
		}
		// USD goes to Stripe, which refunds and captures at once.
		refund(pay(paymentBody("49.99", "USD", "4242424242424242"), http.StatusCreated), "10.00") // keeps 39.99
		refund(pay(paymentBody("20.00", "USD", "4242424242424242"), http.StatusCreated), "20.00") // keeps nothing
		pay(paymentBody("7.00", "USD", "4000000000000002"), http.StatusPaymentRequired)           // declined
		capturedInPart := pay(manualBody("80.00", "USD"), http.StatusCreated)                     // keeps 65.00
		if r := env.request(http.MethodPost, "/api/v1/payments/"+capturedInPart+"/capture", admin, map[string]any{"amount": "65.00"}); r.status != http.StatusOK {
			t.Fatalf("capture = %d %s", r.status, r.raw)
		}
		pay(manualBody("30.00", "USD"), http.StatusCreated) // authorised, never captured
		// GBP goes to Checkout.com, whose refunds settle later.
		pay(paymentBody("15.00", "GBP", "4242424242424242"), http.StatusCreated)
		refund(pay(paymentBody("12.00", "GBP", "4242424242424242"), http.StatusCreated), "12.00")
		// EUR goes to Adyen: a currency whose only payment was declined.
		pay(paymentBody("25.00", "EUR", "4000000000000002"), http.StatusPaymentRequired)
		env.sandboxWebhooksDelivered()

		// A pending refund has given nothing back yet.
		r := env.request(http.MethodGet, "/api/v1/monitoring/metrics", admin, nil)
		if got := mustJSON(t, get(r.data(), "payments", "volume")); r.status != http.StatusOK || got != `{"EUR":"0.00","GBP":"27.00","USD":"104.99"}` {
			t.Errorf("volume with the GBP refund pending = %d %s", r.status, got)
		}

		// The refund settles, and every webhook the sandboxes sent is applied.
		env.clock.Advance(payment.InFlightGrace + time.Second)
		if _, err := env.app.services.providers.sandboxes["checkout"].(provider.Settler).Settle(ctx); err != nil {
			t.Fatal(err)
		}
		env.processWebhooks(t)
		// Beside them, events as the worker leaves them, and one older than the window.
		now := env.clock.Now()
		env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: now.Add(-time.Hour)})
		env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookFailed, received: now.Add(-2 * time.Hour)})
		env.storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "charge.updated", status: state.WebhookIgnored, received: now.Add(-3 * time.Hour)})
		env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookProcessed, received: now.Add(-48 * time.Hour)})
		// A minute on, no request is in the last minute's rate.
		env.clock.Advance(time.Minute + time.Second)

		r = env.request(http.MethodGet, "/api/v1/monitoring/metrics", admin, nil)
		data := r.data()
		if r.status != http.StatusOK {
			t.Fatalf("REST figures = %d %s", r.status, r.raw)
		}
		// The requests this server answered before this one: an API key, 9 payments, 3 refunds, a
		// capture, 13 webhooks from the sandboxes and the figures read once.
		const requestsBefore = 1 + 9 + 3 + 1 + 13 + 1
		if got, want := mustJSON(t, map[string]any{"payments": data["payments"], "webhooks": data["webhooks"], "window_h": data["window_h"],
			"requests": map[string]any{"total": get(data, "requests", "total"), "errors": get(data, "requests", "errors"), "per_second": get(data, "requests", "per_second")}}),
			`{"payments":{"by_status":{"failed":2,"partially_refunded":1,"refunded":2,"requires_capture":1,"succeeded":2},"volume":{"EUR":"0.00","GBP":"15.00","USD":"104.99"}},`+
				`"requests":{"errors":0,"per_second":0,"total":`+strconv.Itoa(requestsBefore)+`},`+
				`"webhooks":{"dead":1,"failed":1,"ignored":1,"processed":13,"received":16},"window_h":24}`; got != want {
			t.Errorf("REST figures =\n%s, want\n%s", got, want)
		}
		if p50, p99 := get(data, "requests", "p50_ms"), get(data, "requests", "p99_ms"); p50 == nil || p99 == nil || str(get(data, "database", "open")) == "0" ||
			str(get(data, "runtime", "goroutines")) == "0" || str(get(data, "runtime", "heap_bytes")) == "0" {
			t.Errorf("REST figures = %s", r.raw)
		}
		if uptime, _ := get(data, "uptime_s").(json.Number).Int64(); uptime < int64((payment.InFlightGrace+time.Minute)/time.Second) {
			t.Errorf("uptime %ds, and the clock moved on more than that", uptime)
		}

		figures := env.mustGraphQL(admin, `{ systemMetrics { windowH requests { total errors }
			payments { byStatus { status count } volume { currency amount } } webhooks { received processed ignored failed dead } } }`, nil)
		if got, want := mustJSON(t, figures), `{"systemMetrics":{"payments":{"byStatus":[{"count":2,"status":"failed"},{"count":1,"status":"partially_refunded"},`+
			`{"count":2,"status":"refunded"},{"count":1,"status":"requires_capture"},{"count":2,"status":"succeeded"}],`+
			`"volume":[{"amount":"0.00","currency":"EUR"},{"amount":"15.00","currency":"GBP"},{"amount":"104.99","currency":"USD"}]},`+
			`"requests":{"errors":0,"total":`+strconv.Itoa(requestsBefore+1)+`},`+
			`"webhooks":{"dead":1,"failed":1,"ignored":1,"processed":13,"received":16},"windowH":24}}`; got != want {
			t.Errorf("GraphQL figures =\n%s, want\n%s", got, want)
		}

		// Prometheus: this server's counters, every series of each family. A payment counts once,
		// by the status its creation was answered with (captures and refunds do not move it), the
		// old one included; provider calls are charges, the capture and refunds.
		scraped := env.scrape(scraper)
		for _, want := range []struct {
			name   string
			series map[string]float64
		}{
			{"paygate_payments_total", map[string]float64{
				"currency=USD,provider=stripe,status=succeeded":        3,
				"currency=USD,provider=stripe,status=failed":           1,
				"currency=USD,provider=stripe,status=requires_capture": 2,
				"currency=GBP,provider=checkout,status=succeeded":      2,
				"currency=EUR,provider=adyen,status=failed":            1,
			}},
			{"paygate_provider_requests_total", map[string]float64{
				"outcome=answered,provider=stripe":   6 + 1 + 2,
				"outcome=answered,provider=checkout": 2 + 1,
				"outcome=answered,provider=adyen":    1,
			}},
			{"paygate_provider_request_duration_seconds", map[string]float64{"provider=stripe": 9, "provider=checkout": 3, "provider=adyen": 1}},
			{"paygate_provider_circuit_open", map[string]float64{"provider=stripe": 0, "provider=checkout": 0, "provider=adyen": 0}},
			// Stripe: four payment_intent.succeeded (three payments and the capture), two
			// charge.refunded, a payment_failed and two amount_capturable_updated; Checkout.com: two
			// payment_approved and the settled refund; Adyen: the declined AUTHORISATION.
			{"paygate_webhook_events_total", map[string]float64{
				"provider=stripe,status=received": 9, "provider=stripe,status=processed": 9,
				"provider=checkout,status=received": 3, "provider=checkout,status=processed": 3,
				"provider=adyen,status=received": 1, "provider=adyen,status=processed": 1,
			}},
			{"paygate_http_requests_total", map[string]float64{
				"code=201,method=POST,route=/api/v1/api-keys":              1,
				"code=201,method=POST,route=/api/v1/payments":              7,
				"code=402,method=POST,route=/api/v1/payments":              2,
				"code=201,method=POST,route=/api/v1/payments/{id}/refunds": 3,
				"code=200,method=POST,route=/api/v1/payments/{id}/capture": 1,
				"code=200,method=POST,route=/webhooks/{provider}":          13,
				"code=200,method=GET,route=/api/v1/monitoring/metrics":     2,
				"code=200,method=POST,route=/query":                        1,
			}},
			{"paygate_webhook_deliveries_total", map[string]float64{}},
			{"paygate_webhook_delivery_queue", map[string]float64{"": 0}},
		} {
			if got := series(scraped, want.name); !maps.Equal(got, want.series) {
				t.Errorf("%s = %v, want %v", want.name, got, want.series)
			}
		}
		if got, ok := sample(scraped, "paygate_http_request_duration_seconds", map[string]string{"route": "/api/v1/payments", "method": "POST"}); !ok || got != 9 {
			t.Errorf("POST /api/v1/payments timed %v times, want 9", got)
		}

		if r := env.request(http.MethodGet, "/api/v1/monitoring/metrics", env.tokenFor("developer"), nil); r.status != http.StatusForbidden {
			t.Errorf("a developer's figures = %d", r.status)
		}
	})
}
