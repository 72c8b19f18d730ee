package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
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

// TestPrometheusMetrics: /metrics moves as payments, provider calls, requests and webhooks happen;
// its labels name routes, never paths or ids, and an invented method cannot add series; it needs
// monitoring:read unless the metrics are public.
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
			{"paygate_payments_total", map[string]string{"status": "succeeded", "provider": "stripe", "currency": "USD"}, 1},
			{"paygate_payments_total", map[string]string{"status": "failed", "provider": "stripe", "currency": "USD"}, 1},
			{"paygate_provider_requests_total", map[string]string{"provider": "stripe", "outcome": "answered"}, 3}, // two charges, one refund
			{"paygate_provider_request_duration_seconds", map[string]string{"provider": "stripe"}, 3},
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
		if got, _ := sample(after, "paygate_payments_total", map[string]string{"status": "succeeded", "provider": "stripe", "currency": "USD"}); got != 1 {
			t.Errorf("one payment succeeded; counted %v", got)
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

// TestSystemMetrics: the monitoring API's figures count the last day's payments by status and
// their volume by currency, exactly and not before, on both surfaces.
func TestSystemMetrics(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		operator := env.tokenFor("operator")
		old := str(get(env.request(http.MethodPost, "/api/v1/payments", operator, paymentBody("99.00", "USD", "4242424242424242")).body, "data", "id"))
		if _, err := db.SQL.Exec(`UPDATE payments SET created_at = $1 WHERE id = $2`, time.Now().UTC().Add(-25*time.Hour), old); err != nil {
			t.Fatal(err)
		}
		var refundedInPart string
		for _, p := range []struct{ amount, currency, card string }{
			{"12.00", "USD", "4242424242424242"}, {"3.50", "USD", "4242424242424242"}, {"5.00", "EUR", "4242424242424242"},
			{"7.00", "USD", "4000000000000002"},
		} {
			id := str(get(env.request(http.MethodPost, "/api/v1/payments", operator, paymentBody(p.amount, p.currency, p.card)).body, "data", "id"))
			if p.amount == "3.50" {
				refundedInPart = id
			}
		}
		// A payment refunded in part was still paid: it counts in the volume, whole.
		if r := env.request(http.MethodPost, "/api/v1/payments/"+refundedInPart+"/refunds", operator, map[string]any{"amount": "1.00"}); r.status != http.StatusCreated {
			t.Fatalf("refund = %d %s", r.status, r.raw)
		}
		env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: time.Now().UTC().Add(-time.Hour)})
		env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookProcessed, received: time.Now().UTC().Add(-48 * time.Hour)})

		r := env.request(http.MethodGet, "/api/v1/monitoring/metrics", operator, nil)
		data := r.data()
		if r.status != http.StatusOK || str(get(data, "payments", "by_status", "succeeded")) != "2" || str(get(data, "payments", "by_status", "partially_refunded")) != "1" ||
			str(get(data, "payments", "by_status", "failed")) != "1" ||
			get(data, "payments", "volume", "USD") != "15.50" || get(data, "payments", "volume", "EUR") != "5.00" ||
			// The sandbox's own webhooks are received beside the dead one; the processed event is
			// two days old.
			str(get(data, "webhooks", "received")) == "1" || str(get(data, "webhooks", "dead")) != "1" || str(get(data, "webhooks", "processed")) != "0" || str(get(data, "window_h")) != "24" ||
			str(get(data, "requests", "total")) == "0" || get(data, "requests", "p99_ms") == nil || str(get(data, "database", "open")) == "0" ||
			str(get(data, "runtime", "goroutines")) == "0" || str(get(data, "runtime", "heap_bytes")) == "0" || get(data, "uptime_s") == nil {
			t.Errorf("REST figures = %d %s", r.status, r.raw)
		}
		figures := env.mustGraphQL(operator, `{ systemMetrics { uptimeS windowH requests { total perSecond errors p50Ms p99Ms }
			payments { byStatus { status count } volume { currency amount } } webhooks { received processed ignored failed dead }
			database { open inUse waitCount } runtime { goroutines heapBytes } } }`, nil)
		if got := mustJSON(t, get(figures, "systemMetrics", "payments")); got != `{"byStatus":[{"count":1,"status":"failed"},{"count":1,"status":"partially_refunded"},{"count":2,"status":"succeeded"}],"volume":[{"amount":"5.00","currency":"EUR"},{"amount":"15.50","currency":"USD"}]}` {
			t.Errorf("GraphQL payment figures = %s", got)
		}
		if r := env.request(http.MethodGet, "/api/v1/monitoring/metrics", env.tokenFor("developer"), nil); r.status != http.StatusForbidden {
			t.Errorf("a developer's figures = %d", r.status)
		}
	})
}
