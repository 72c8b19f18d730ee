package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestOpsPageDrawsTheOverview drives the operations page in headless Chromium as platform staff:
// the overview draws its charts (volume, approval rate, refunds, providers' latency and error
// rate) from the monitoring API, each with its figures as a table, and the decline reasons; a
// longer period draws more steps; at a phone's width the charts fit. Each view is kept as a
// screenshot and checked by axe-core.
func TestOpsPageDrawsTheOverview(t *testing.T) {
	t.Parallel()
	chromium := browserPath(t)
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) { opsPageDrawsTheOverview(t, chromium, db) })
}

func opsPageDrawsTheOverview(t *testing.T, chromium string, db *database.DB) {
	env := newTestEnv(t, db)
	env.halfPastTheHour()
	env.app.Start(t.Context())
	email := env.staffWith("operator")
	admin := env.tokenFor("admin")
	pay := func(amount, currency, card string, status int) string {
		t.Helper()
		r := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody(amount, currency, card))
		if r.status != status {
			t.Fatalf("payment: %d %s", r.status, r.raw)
		}
		return str(get(r.data(), "id"))
	}
	refunded := pay("12.50", "USD", "4242424242424242", http.StatusCreated)
	pay("20.00", "EUR", "4242424242424242", http.StatusCreated)
	pay("7.00", "USD", "4000000000000002", http.StatusPaymentRequired)
	if r := env.request(http.MethodPost, "/api/v1/payments/"+refunded+"/refunds", admin, map[string]any{"amount": "2.50"}); r.status != http.StatusCreated {
		t.Fatalf("refund: %d %s", r.status, r.raw)
	}

	b := newOpsBrowser(t, chromium, env)
	b.signIn(env.url, email)
	// lastRow reads the last step of a chart's table, cells joined by " | ", once the chart is drawn.
	lastRow := func(chart string) string {
		t.Helper()
		row, err := b.poll(fmt.Sprintf(`(() => {
			const rows = document.querySelectorAll('#%s details tbody tr');
			if (!document.querySelector('#%[1]s canvas') || !rows.length) return false;
			return Array.from(rows[rows.length - 1].cells).map((c) => c.textContent).join(' | ');
		})()`, chart))
		if err != nil {
			b.fail("drawing "+chart, err)
		}
		return row
	}
	// The step now is in holds every payment: USD 12.50 captured and 2.50 refunded, EUR 20.00; two
	// charges approved of three decided; Stripe and Adyen each asked.
	for chart, want := range map[string]string{
		"chart-volume":   " | 20.00 EUR | 12.50 USD",
		"chart-approval": " | 66.7 %",
		"chart-refunds":  " | 2.50 USD",
		"chart-errors":   " | 0.0 % | 0.0 %",
	} {
		if got := lastRow(chart); !strings.HasSuffix(got, want) {
			t.Errorf("%s's last step = %q, want it to end %q", chart, got, want)
		}
	}
	headings, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#chart-latency details thead th')).map((th) => th.textContent)`))
	if err != nil || fmt.Sprint(headings) != "[Step adyen p50 adyen p95 stripe p50 stripe p95]" {
		t.Errorf("latency chart's series = %v, %v", headings, err)
	}
	if got, err := b.poll(`(() => { const row = document.querySelector('#chart-declines tbody tr');
		return row ? Array.from(row.cells).map((c) => c.textContent).join(' | ') : false; })()`); err != nil || got != "card declined | 1 |  100.0 %" {
		t.Errorf("decline reasons = %q, %v", got, err)
	}
	if steps, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#chart-volume details tbody tr').length`)); err != nil || steps != 24 {
		t.Errorf("a day has %d steps, %v", steps, err)
	}
	b.view("ops-overview-day")

	// A month, day by day: thirty steps.
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => {
		const period = document.getElementById('overview-period');
		period.value = 'MONTH';
		return period.dispatchEvent(new Event('change'));
	})()`)); err != nil {
		b.fail("choosing a month", err)
	}
	if got, err := b.poll(`(() => { const n = document.querySelectorAll('#chart-volume details tbody tr').length; return n === 30 ? String(n) : false; })()`); err != nil {
		b.fail("a month's steps", fmt.Errorf("%v (%s)", err, got))
	}
	if got := lastRow("chart-volume"); !strings.HasSuffix(got, " | 20.00 EUR | 12.50 USD") {
		t.Errorf("a month's last step = %q", got)
	}

	// At a phone's width every chart fits the page.
	if err := b.within(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		b.fail("narrowing the window", err)
	}
	if fits, err := b.poll(`(() => {
		const widest = Math.max(...Array.from(document.querySelectorAll('.chart canvas')).map((c) => c.getBoundingClientRect().right));
		return widest <= document.documentElement.clientWidth && document.documentElement.scrollWidth <= document.documentElement.clientWidth ? 'fits' : false;
	})()`); err != nil {
		t.Errorf("at 390 px wide the charts fit = %q, %v", fits, err)
	}
	b.view("ops-overview-390x844")
	b.finish()
}
