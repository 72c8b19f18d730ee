package app

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/ops"
	"github.com/paygate/paygate/internal/state"
)

// TestOpsPageIsServedInProduction: a production server serves the operations page and its files,
// each with its type, the page's Content-Security-Policy, nosniff and an entity tag it
// revalidates by; the page's files hold no inline script or style and name no other origin.
func TestOpsPageIsServedInProduction(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t), "PAYGATE_ENV=production", "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
	files := []struct{ path, contentType string }{
		{ops.Path, "text/html; charset=utf-8"},
		{ops.Prefix, "text/html; charset=utf-8"},
		{ops.Prefix + "ops.js", "text/javascript; charset=utf-8"},
		{ops.Prefix + "ops.css", "text/css; charset=utf-8"},
	}
	otherOrigin := regexp.MustCompile(`(?i)\b(https?|wss?):(//)?[a-z0-9]`)
	writesMarkup := regexp.MustCompile(`innerHTML\s*=|outerHTML\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function`)
	for _, f := range files {
		r := env.request(http.MethodGet, f.path, "", nil)
		h := r.header
		if r.status != http.StatusOK || h.Get("Content-Type") != f.contentType || h.Get("Content-Security-Policy") != ops.ContentSecurityPolicy ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("ETag") == "" || h.Get("Cache-Control") != "no-cache" {
			t.Errorf("production GET %s = %d %v", f.path, r.status, h)
			continue
		}
		if again := env.request(http.MethodGet, f.path, "", nil, "If-None-Match", h.Get("ETag")); again.status != http.StatusNotModified {
			t.Errorf("revalidating %s = %d, want 304", f.path, again.status)
		}
		if link := otherOrigin.FindString(r.raw); link != "" {
			t.Errorf("%s names another origin: %q", f.path, link)
		}
		if markup := writesMarkup.FindString(r.raw); markup != "" {
			t.Errorf("%s writes markup or runs text as code: %q", f.path, markup)
		}
	}
	page := env.request(http.MethodGet, ops.Path, "", nil).raw
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(tag, `src="/ops/`) {
			t.Errorf("the page has an inline script: %s", tag)
		}
	}
	if strings.Contains(page, "<style") || strings.Contains(page, " style=") || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Error("the page has an inline style or event handler")
	}
	for _, hidden := range []string{"index.html", "nothing.js", "assets/ops.js"} {
		if r := env.request(http.MethodGet, ops.Prefix+hidden, "", nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s%s = %d, want 404", ops.Prefix, hidden, r.status)
		}
	}
	for _, path := range []string{ops.Path, ops.Prefix, ops.Prefix + "ops.js"} {
		r := env.request(http.MethodPost, path, "", "{}")
		if code, _ := r.errorCode(); r.status != http.StatusMethodNotAllowed || code != "method_not_allowed" || r.header.Get("Allow") != http.MethodGet {
			t.Errorf("POST %s = %d %s %v", path, r.status, code, r.header.Get("Allow"))
		}
	}
}

// TestOpsFilesMatchTheirSums: the operations page's vendored files are checked as the
// playground's are, and served in production, each with its type.
func TestOpsFilesMatchTheirSums(t *testing.T) {
	t.Parallel()
	if _, err := ops.New(http.NotFound); err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(t, databasetest.SQLite(t), "PAYGATE_ENV=production", "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
	types := map[string]string{
		"uPlot.iife.min.js": "text/javascript; charset=utf-8",
		"uPlot.min.css":     "text/css; charset=utf-8",
		"LICENSE.uplot":     "text/plain; charset=utf-8",
	}
	vendoredFilesMatchTheirSums(t, env, ops.Prefix, ops.VendorSums, slices.Collect(maps.Keys(types))...)
	for name, contentType := range types {
		if r := env.request(http.MethodGet, ops.Prefix+"vendor/"+name, "", nil); r.header.Get("Content-Type") != contentType {
			t.Errorf("GET vendor/%s: Content-Type %q, want %q", name, r.header.Get("Content-Type"), contentType)
		}
	}
}

// TestOpsPageShowsPaymentsAsTheyHappen signs in to the operations page in headless Chromium with
// the keyboard, with every host but the test server unreachable; makes a payment through REST and
// waits for it to appear in the list without a reload, brought by the paymentUpdated
// subscription; then reaches the new payment's row with the keyboard and opens its detail, and
// checks the page at a phone's width. It fails on any console error, exception or
// Content-Security-Policy violation, and on any request to another origin. Screenshots go to the
// test's artifact directory (go test -artifacts keeps them) and to $PAYGATE_TEST_ARTIFACTS.
func TestOpsPageShowsPaymentsAsTheyHappen(t *testing.T) {
	t.Parallel()
	chromium := browserPath(t)
	// On PostgreSQL, too, when there is one: there a change reaches subscribers through NOTIFY.
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) { opsPageShowsPaymentsAsTheyHappen(t, chromium, db) })
}

func opsPageShowsPaymentsAsTheyHappen(t *testing.T, chromium string, db *database.DB) {
	env := newTestEnv(t, db)
	env.app.Start(t.Context())
	email := env.staffWith("operator") // the operations page is the platform's
	token, _ := env.login(email)
	// An alert waits, to be acknowledged and resolved from the page.
	alert, err := env.db.Ent.Alert.Create().SetRule("circuit_open").SetSubject("adyen").SetSeverity(state.AlertCritical).
		SetMessage("adyen's circuit opened").SetOpenedAt(time.Now().UTC()).Save(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	// An API key that may read payments and nothing else.
	paymentsOnly := env.apiKey(env.tokenFor("admin"), "payments:read")
	b := newOpsBrowser(t, chromium, env)
	// Signing in with the keyboard alone: Tab to the form, type, Enter.
	if err := b.within(chromedp.Navigate(env.url+ops.Path), chromedp.WaitVisible(chromedp.CSS("#email"))); err != nil {
		b.fail("opening the page", err)
	}
	b.view("ops-sign-in")
	if err := b.tabUntil("the sign-in form", `document.activeElement.id === 'email'`); err != nil {
		b.fail("tabbing to the sign-in form", err)
	}
	// A wrong password is refused, saying so, and leaves the focus in the form.
	if err := b.within(chromedp.KeyEvent(email), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("not the password"), chromedp.KeyEvent(kb.Enter)); err != nil {
		b.fail("signing in with a wrong password", err)
	}
	refused, err := chromedp.Run(b.ctx, chromedp.Poll[string](`document.getElementById('sign-in-error').textContent || false`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || !strings.HasPrefix(refused, "Signing in failed: ") {
		b.fail("the answer to a wrong password", fmt.Errorf("%q, %w", refused, err))
	}
	if err := b.within(chromedp.KeyEvent(testPassword), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS("#payments-table"))); err != nil {
		b.fail("signing in", err)
	}
	// The credential is in the page's memory only.
	kept, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`[localStorage.length, sessionStorage.length, document.cookie, location.href].join(' ')`))
	if err != nil || kept != "0 0  "+env.url+ops.Path {
		t.Errorf("after signing in, storage and address = %q, %v", kept, err)
	}

	// Live: once the page has subscribed and caught up, a payment made elsewhere comes by the
	// subscription alone (the page reads the list again only when it reconnects, or on Refresh).
	if err := b.within(chromedp.WaitVisible(chromedp.CSS(`#live-state[data-live="on"]`))); err != nil {
		b.fail("waiting for live updates", err)
	}
	r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("12.34", "USD", "4242424242424242"))
	paymentID := str(get(r.data(), "id"))
	if r.status != http.StatusCreated || paymentID == "" {
		t.Fatalf("payment: %d %s", r.status, r.raw)
	}
	row := fmt.Sprintf(`#payments-rows tr[data-id=%q]`, paymentID)
	if err := b.within(chromedp.WaitVisible(chromedp.CSS(row))); err != nil {
		b.fail("waiting for the new payment in the list", err)
	}
	via, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('%s').dataset.via`, row)))
	if err != nil || via != "live" {
		t.Errorf("the payment's row came by %q (%v), want by the subscription", via, err)
	}
	// Its row settles to SUCCEEDED in place, with its amount.
	settled, err := chromedp.Run(b.ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
		const row = document.querySelector('%s');
		return row && row.dataset.status === 'SUCCEEDED' ? row.innerText : false;
	})()`, row), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || !strings.Contains(settled, "12.34 USD") {
		t.Errorf("the payment's row = %q, %v", settled, err)
	}

	// The keyboard reaches the new payment's row (the newest, so the first), and Enter opens it.
	if err := b.tabUntil("a payment's row", `Boolean(document.activeElement.closest('#payments-rows tr[data-id]'))`); err != nil {
		b.fail("tabbing to the payments", err)
	}
	if focused, err := chromedp.Run(b.ctx, focusedRow("payments-rows")); err != nil || focused != paymentID {
		t.Errorf("the first payment row the keyboard reaches is %q (%v), want %s", focused, err, paymentID)
	}
	if err := b.within(chromedp.KeyEvent(kb.Enter)); err != nil {
		b.fail("opening the payment", err)
	}
	detail, err := chromedp.Run(b.ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
		const id = document.querySelector('#detail-body .detail-id');
		return id && id.textContent === %q ? document.getElementById('detail').innerText : false;
	})()`, paymentID), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		b.fail("waiting for the payment's detail", err)
	}
	for _, want := range []string{"Status history", "approved", "stripe", "ann@example.com"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail does not say %q: %s", want, detail)
		}
	}
	// The provider that charged it shows its requests: after a decline, as available as before,
	// and half its charges approved.
	if r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("5.00", "USD", "4000000000000002")); r.status != http.StatusPaymentRequired {
		t.Fatalf("a declined payment: %d %s", r.status, r.raw)
	}
	if err := b.click("#refresh-all"); err != nil {
		b.fail("refreshing", err)
	}
	health, err := b.poll(`(() => {
		const row = document.querySelector('#providers-rows tr[data-provider="stripe"]');
		return row && row.cells[3].textContent === '2' ? row.cells[4].textContent + ' | ' + row.cells[5].textContent : false;
	})()`)
	if err != nil || health != "100.0 % | 50.0 %" {
		t.Errorf("stripe's health after an approval and a decline: available | approved = %q, %v", health, err)
	}
	alertRow := fmt.Sprintf(`#alerts-rows tr[data-id=%q]`, alert.ID)
	if err := b.within(chromedp.WaitVisible(chromedp.CSS(alertRow))); err != nil {
		b.fail("waiting for the open alert", err)
	}
	b.view("ops-1280x800")

	// The alert is acknowledged, then resolved, from its row.
	// The row is drawn again whenever news of the alert arrives, so a button is clicked in the
	// page as it is found, not by a node found a moment before.
	err = b.click(alertRow + ` button[data-action="acknowledge"]`)
	if err == nil {
		err = b.within(chromedp.WaitVisible(chromedp.CSS(alertRow + ` .badge[data-status="ACKNOWLEDGED"]`)))
	}
	if err == nil {
		// Who acknowledged it is named by email.
		_, err = b.poll(fmt.Sprintf(`document.querySelector(%q).textContent.includes(%q) ? 'named' : false`, alertRow, "acknowledged by "+email))
	}
	if err == nil {
		err = b.click(alertRow + ` button[data-action="resolve"]`)
	}
	if err == nil {
		err = b.within(chromedp.WaitNotPresent(chromedp.CSS(alertRow)))
	}
	if err != nil {
		b.fail("acknowledging and resolving the alert", err)
	}
	if a := env.db.Ent.Alert.GetX(databasetest.AsMerchant(), alert.ID); a.Status != state.AlertResolved {
		t.Errorf("the alert is %s after Resolve", a.Status)
	}

	// At a phone's width the sections stack in one column and nothing widens the page.
	if err := b.within(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		b.fail("narrowing the window", err)
	}
	// The page settles first: the charts are drawn again for their narrower boxes.
	narrow, err := b.poll(`(() => {
		const left = (id) => Math.round(document.getElementById(id).getBoundingClientRect().left);
		const lefts = ['overview', 'payments', 'detail', 'providers', 'alerts', 'webhooks'].map(left);
		const answer = [document.documentElement.scrollWidth <= window.innerWidth, new Set(lefts).size === 1].join(' ');
		return answer === 'true true' ? answer : false;
	})()`)
	if err != nil || narrow != "true true" {
		t.Errorf("at 390 px wide: fits and one column = %q, %v", narrow, err)
	}
	b.view("ops-390x844")

	// Signing out forgets the credential and goes back to the form.
	if err := b.within(chromedp.EmulateViewport(1280, 800), chromedp.Click(chromedp.CSS("#sign-out")),
		chromedp.WaitVisible(chromedp.CSS("#email"))); err != nil {
		b.fail("signing out", err)
	}
	if left, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#payments-rows tr').length`)); err != nil || left != 0 {
		t.Errorf("after signing out %d payment rows are left (%v)", left, err)
	}

	// Signed in with a pasted API key that reads payments alone, the page shows the payments,
	// and says which scope each other section needs.
	if err := b.within(chromedp.SendKeys(chromedp.CSS("#credential"), paymentsOnly+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS(`#providers-note[data-kind="forbidden"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#alerts-note[data-kind="forbidden"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#webhooks-note[data-kind="forbidden"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-state[data-live="on"]`))); err != nil {
		b.fail("signing in with an API key", err)
	}
	notes, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`['providers', 'alerts', 'webhooks'].map((id) => document.getElementById(id + '-note').textContent).join(' | ')`))
	if err != nil || notes != "Needs scope monitoring:read. | Needs scope monitoring:read. | Needs scope webhooks:read." {
		t.Errorf("the notes of the sections the key may not read = %q, %v", notes, err)
	}
	b.view("ops-payments-only")
	b.finish()
}
