package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// halfPastTheHour moves env's clock on to the next half past an hour, before anything is made: a
// test of figures by the hour or the day then has half an hour before its step ends.
func (e *testEnv) halfPastTheHour() {
	now := e.clock.Now()
	halfPast := now.Truncate(time.Hour).Add(30 * time.Minute)
	if !halfPast.After(now) {
		halfPast = halfPast.Add(time.Hour)
	}
	e.clock.Advance(halfPast.Sub(now))
}

// TestOverviewDrawsPaymentsStepByStep: the overview (REST and GraphQL) puts each payment and
// refund in the step it was made in and leaves out what is older than the period; per step it
// gives the volume captured by currency (every currency in every step), the approval rate of the
// charges decided and the refunds; over the period, the reasons payments failed; and per provider
// and step, the calls, the errors (a provider unavailable before another approved) and the p50
// and p95 of the latencies the payments' routing recorded, to two significant figures.
func TestOverviewDrawsPaymentsStepByStep(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.halfPastTheHour()
		admin := env.tokenFor("admin")
		now := env.clock.Now()
		lastStep := now.UTC().Truncate(time.Hour)
		// made moves a payment to when, with the routing given: what the providers' calls took is
		// the sandbox's, too quick to tell apart.
		made := func(id string, when time.Time, routing string) {
			t.Helper()
			if _, err := db.SQL.Exec(`UPDATE payments SET created_at = $1, routing = $2 WHERE id = $3`, when, routing, id); err != nil {
				t.Fatal(err)
			}
		}
		pay := func(amount, currency, card string, status int) string {
			t.Helper()
			r := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody(amount, currency, card))
			if r.status != status {
				t.Fatalf("payment of %s %s = %d %s", amount, currency, r.status, r.raw)
			}
			return str(get(r.data(), "id"))
		}
		const stripeApproved = `{"rule":null,"attempts":[{"provider":"stripe","outcome":"approved","latency_ms":%d}]}`
		// Now: two approved (one refunded in part), one declined, and one Stripe could not take
		// that Adyen approved.
		made(pay("10.00", "USD", "4242424242424242", http.StatusCreated), now, `{"rule":null,"attempts":[{"provider":"stripe","outcome":"approved","latency_ms":45}]}`)
		refunded := pay("5.00", "USD", "4242424242424242", http.StatusCreated)
		made(refunded, now, `{"rule":null,"attempts":[{"provider":"stripe","outcome":"approved","latency_ms":123}]}`)
		if r := env.request(http.MethodPost, "/api/v1/payments/"+refunded+"/refunds", admin, map[string]any{"amount": "2.00"}); r.status != http.StatusCreated {
			t.Fatalf("refund = %d %s", r.status, r.raw)
		}
		made(pay("7.00", "USD", "4000000000000002", http.StatusPaymentRequired), now, `{"rule":null,"attempts":[{"provider":"stripe","outcome":"declined","latency_ms":80}]}`)
		made(pay("3.00", "USD", "4242424242424242", http.StatusCreated), now,
			`{"rule":"usd","attempts":[{"provider":"stripe","outcome":"unavailable","latency_ms":900},{"provider":"adyen","outcome":"approved","latency_ms":1234}]}`)
		// Five hours ago, a euro payment Adyen declined; and one older than the day, left out.
		made(pay("25.00", "EUR", "4000000000000002", http.StatusPaymentRequired), now.Add(-5*time.Hour),
			`{"rule":null,"attempts":[{"provider":"adyen","outcome":"declined","latency_ms":310}]}`)
		made(pay("99.00", "USD", "4242424242424242", http.StatusCreated), now.Add(-25*time.Hour),
			`{"rule":null,"attempts":[{"provider":"checkout","outcome":"approved","latency_ms":5}]}`)
		// A payment routed before its attempts were recorded has none.
		made(pay("1.00", "USD", "4242424242424242", http.StatusCreated), now.Add(-time.Hour), `{"rule":null,"attempts":null}`)

		r := env.request(http.MethodGet, "/api/v1/monitoring/overview?period=day", admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("overview = %d %s", r.status, r.raw)
		}
		data := r.data()
		steps, _ := get(data, "steps").([]any)
		if len(steps) != 24 || str(get(data, "step_s")) != "3600" || str(get(data, "period")) != "day" ||
			str(get(data, "to")) != lastStep.Add(time.Hour).Format(time.RFC3339) || str(get(data, "from")) != lastStep.Add(-23*time.Hour).Format(time.RFC3339) {
			t.Fatalf("overview bounds = %s", r.raw)
		}
		for i, want := range map[int]string{
			0:  `{"approval_rate":null,"approved":0,"declined":0,"payments":0,"refunds":{"USD":{"amount":"0.00","count":0}},"start":"` + lastStep.Add(-23*time.Hour).Format(time.RFC3339) + `","volume":{"EUR":"0.00","USD":"0.00"}}`,
			18: `{"approval_rate":0,"approved":0,"declined":1,"payments":1,"refunds":{"USD":{"amount":"0.00","count":0}},"start":"` + lastStep.Add(-5*time.Hour).Format(time.RFC3339) + `","volume":{"EUR":"0.00","USD":"0.00"}}`,
			22: `{"approval_rate":null,"approved":0,"declined":0,"payments":1,"refunds":{"USD":{"amount":"0.00","count":0}},"start":"` + lastStep.Add(-time.Hour).Format(time.RFC3339) + `","volume":{"EUR":"0.00","USD":"1.00"}}`,
			23: `{"approval_rate":0.75,"approved":3,"declined":1,"payments":4,"refunds":{"USD":{"amount":"2.00","count":1}},"start":"` + lastStep.Format(time.RFC3339) + `","volume":{"EUR":"0.00","USD":"18.00"}}`,
		} {
			if got := mustJSON(t, steps[i]); got != want {
				t.Errorf("REST step %d =\n%s, want\n%s", i, got, want)
			}
		}
		if got, want := mustJSON(t, get(data, "decline_reasons")), `[{"count":2,"reason":"card_declined"}]`; got != want {
			t.Errorf("decline reasons = %s, want %s", got, want)
		}
		providers, _ := get(data, "providers").([]any)
		if len(providers) != 2 || str(get(providers[0], "provider")) != "adyen" || str(get(providers[1], "provider")) != "stripe" {
			t.Fatalf("providers = %s", mustJSON(t, providers))
		}
		for _, want := range []struct {
			provider, step int
			json           string
		}{
			{0, 18, `{"calls":1,"error_rate":0,"errors":0,"p50_ms":310,"p95_ms":310,"start":"` + lastStep.Add(-5*time.Hour).Format(time.RFC3339) + `"}`},
			{0, 23, `{"calls":1,"error_rate":0,"errors":0,"p50_ms":1200,"p95_ms":1200,"start":"` + lastStep.Format(time.RFC3339) + `"}`},
			{1, 22, `{"calls":0,"error_rate":null,"errors":0,"p50_ms":null,"p95_ms":null,"start":"` + lastStep.Add(-time.Hour).Format(time.RFC3339) + `"}`},
			{1, 23, `{"calls":4,"error_rate":0.25,"errors":1,"p50_ms":80,"p95_ms":900,"start":"` + lastStep.Format(time.RFC3339) + `"}`},
		} {
			if got := mustJSON(t, get(providers[want.provider], "steps").([]any)[want.step]); got != want.json {
				t.Errorf("REST provider %d step %d =\n%s, want\n%s", want.provider, want.step, got, want.json)
			}
		}

		// GraphQL gives the same figures in its own shape.
		answer := env.mustGraphQL(admin, `{ overview(period: DAY) { period stepS from
			steps { payments approved declined approvalRate volume { currency amount } refunds { currency count amount } }
			declineReasons { reason count } providers { provider steps { calls errors errorRate p50Ms p95Ms } } } }`, nil)
		o := get(answer, "overview")
		if got, want := mustJSON(t, map[string]any{"period": get(o, "period"), "stepS": get(o, "stepS"), "from": get(o, "from"),
			"last": get(o, "steps", 23), "reasons": get(o, "declineReasons"), "stripe": get(o, "providers", 1, "steps", 23)}),
			`{"from":"`+lastStep.Add(-23*time.Hour).Format(time.RFC3339)+`","last":{"approvalRate":0.75,"approved":3,"declined":1,"payments":4,`+
				`"refunds":[{"amount":"2.00","count":1,"currency":"USD"}],"volume":[{"amount":"0.00","currency":"EUR"},{"amount":"18.00","currency":"USD"}]},`+
				`"period":"DAY","reasons":[{"count":2,"reason":"card_declined"}],"stepS":3600,`+
				`"stripe":{"calls":4,"errorRate":0.25,"errors":1,"p50Ms":80,"p95Ms":900}}`; got != want {
			t.Errorf("GraphQL overview =\n%s, want\n%s", got, want)
		}

		// A week reaches the payment of 25 hours ago, in steps of six hours; a month, in days.
		week := env.request(http.MethodGet, "/api/v1/monitoring/overview?period=week", admin, nil)
		if weekSteps, _ := get(week.data(), "steps").([]any); week.status != http.StatusOK || len(weekSteps) != 28 || str(get(week.data(), "step_s")) != "21600" {
			t.Errorf("week = %d %s", week.status, week.raw)
		} else {
			payments := 0
			for _, step := range weekSteps {
				n, _ := get(step, "payments").(interface{ Int64() (int64, error) }).Int64()
				payments += int(n)
			}
			if payments != 7 {
				t.Errorf("a week holds %d payments, want 7", payments)
			}
		}
		if month := env.request(http.MethodGet, "/api/v1/monitoring/overview?period=month", admin, nil); month.status != http.StatusOK ||
			len(get(month.data(), "steps").([]any)) != 30 || str(get(month.data(), "step_s")) != "86400" {
			t.Errorf("month = %d %s", month.status, month.raw)
		}
		// A period that is none is refused, naming it; so is an unknown parameter.
		for _, query := range []string{"period=year", "period=DAY", "period=", "since=2026-01-01"} {
			bad := env.request(http.MethodGet, "/api/v1/monitoring/overview?"+query, admin, nil)
			if bad.status != http.StatusBadRequest || str(get(bad.body, "error", "code")) != "invalid_request" {
				t.Errorf("overview?%s = %d %s", query, bad.status, bad.raw)
			}
		}
	})
}
