package app

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestOpsPageFindsPayments drives the operations page in headless Chromium as platform staff:
// it pages through every payment, finds one by its customer's email, one by its card's last four
// digits and one by its id, narrows
// by a date range, acts for another merchant (whose payment then shows, and the default
// merchant's do not), exports the list as CSV, and lists every merchant's payments together, with
// their merchant, one of which opens as its merchant's; every time shows its date and zone. Each
// view is kept as a screenshot.
func TestOpsPageFindsPayments(t *testing.T) {
	t.Parallel()
	chromium := browserPath(t)
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) { opsPageFindsPayments(t, chromium, db) })
}

func opsPageFindsPayments(t *testing.T, chromium string, db *database.DB) {
	env := newTestEnv(t, db)
	env.app.Start(t.Context())
	email := env.staffWith("operator")
	admin := env.tokenFor("admin")
	pay := func(customer, card string, headers ...string) string {
		t.Helper()
		body := paymentBody("10.00", "USD", card)
		body["customer"] = map[string]any{"email": customer, "name": "A Customer"}
		r := env.request(http.MethodPost, "/api/v1/payments", admin, body, headers...)
		if r.status != http.StatusCreated {
			t.Fatalf("payment: %d %s", r.status, r.raw)
		}
		return str(get(r.data(), "id"))
	}
	// 52 payments of the default merchant: two pages of 50. One is Zoe's, with a card of its own.
	var zoe string
	for i := range 52 {
		if i == 7 {
			zoe = pay("zoe@example.com", "5555555555554444")
		} else {
			pay("ann@example.com", "4242424242424242")
		}
	}
	acme := str(get(env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "Acme Shoes"}).data(), "id"))
	acmes := pay("bob@acme.example", "4242424242424242", "Paygate-Merchant", acme)

	b := newOpsBrowser(t, chromium, env)
	b.signIn(env.url, email)
	position := func(want string) {
		t.Helper()
		if got, err := b.poll(fmt.Sprintf(`(() => { const p = document.getElementById('page-position').textContent;
			return p === %q ? p : false; })()`, want)); err != nil {
			b.fail("the list's position", fmt.Errorf("want %q: %v (%s)", want, err, got))
		}
	}
	rows := func() []string {
		t.Helper()
		ids, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#payments-rows tr[data-id]')).map((r) => r.dataset.id)`))
		if err != nil {
			b.fail("reading the list", err)
		}
		return ids
	}
	filter := func(search, from string) {
		t.Helper()
		set := fmt.Sprintf(`(() => {
			document.getElementById('filter-search').value = %q;
			document.getElementById('filter-from').value = %q;
			return true;
		})()`, search, from)
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](set)); err != nil {
			b.fail("filling the filters", err)
		}
		if err := b.within(chromedp.Click(chromedp.CSS(`#payment-filters button[type="submit"]`))); err != nil {
			b.fail("filtering", err)
		}
	}
	position("Page 1: 1–50 of 52")
	who, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('session-who').textContent`))
	if who != "Signed in as "+email+", platform staff" {
		t.Errorf("the header says %q", who)
	}
	// Times say their date and zone.
	created, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('#payments-rows tr[data-id] time').textContent`))
	if !regexp.MustCompile(`\b\d{4}\b`).MatchString(created) || !strings.Contains(created, "UTC") {
		t.Errorf("a payment's time reads %q, without its date or zone", created)
	}
	b.view("ops-list-page-1")

	// Every payment is reached, a page at a time.
	if err := b.within(chromedp.Click(chromedp.CSS("#page-next"))); err != nil {
		b.fail("the next page", err)
	}
	position("Page 2: 51–52 of 52")
	if len(rows()) != 2 {
		t.Errorf("page 2 lists %v", rows())
	}
	b.view("ops-list-page-2")
	if err := b.within(chromedp.Click(chromedp.CSS("#page-previous"))); err != nil {
		b.fail("the previous page", err)
	}
	position("Page 1: 1–50 of 52")

	// Each search below answers differently from the one before it, so that the page is seen to
	// have read it: by the card's last four digits, everything again, by the customer's email, by
	// another merchant's payment's id (not among these), everything, and from tomorrow on.
	empty := func(step string) {
		t.Helper()
		if _, err := b.poll(`document.querySelector('#payments-rows tr.empty') ? 'empty' : false`); err != nil {
			b.fail(step, err)
		}
	}
	filter("4444", "")
	position("Page 1: 1–1 of 1")
	if got := rows(); len(got) != 1 || got[0] != zoe {
		t.Errorf("searching the last four digits 4444 lists %v, want %s", got, zoe)
	}
	filter("", "")
	position("Page 1: 1–50 of 52")
	filter("zoe@example.com", "")
	position("Page 1: 1–1 of 1")
	if got := rows(); len(got) != 1 || got[0] != zoe {
		t.Errorf("searching zoe@example.com lists %v, want %s", got, zoe)
	}
	b.view("ops-search-email")
	filter(acmes, "")
	empty("searching another merchant's payment")
	filter("", "")
	position("Page 1: 1–50 of 52")
	tomorrow := time.Now().Add(24 * time.Hour).Format("2006-01-02")
	filter("", tomorrow)
	empty("a date range with nothing in it")

	// Acting for Acme, its payment shows, found by its id.
	if err := b.within(chromedp.SetValue(chromedp.CSS("#merchant"), acme), chromedp.Click(chromedp.CSS(`#merchant-form button[type="submit"]`))); err != nil {
		b.fail("choosing a merchant", err)
	}
	if _, err := b.poll(fmt.Sprintf(`document.getElementById('merchant-error').textContent === %q && 'taken'`, "Acting for "+acme+".")); err != nil {
		b.fail("the merchant chosen", err)
	}
	filter(acmes, "")
	position("Page 1: 1–1 of 1")
	if got := rows(); len(got) != 1 || got[0] != acmes {
		t.Errorf("acting for %s, its payment's id lists %v", acme, got)
	}
	b.view("ops-other-merchant")

	// The export holds what the filter matches, all pages of it. The page's file is caught as
	// the page hands it to the browser.
	filter("", "")
	position("Page 1: 1–1 of 1")
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => {
		const made = URL.createObjectURL;
		URL.createObjectURL = (blob) => { blob.text().then((text) => { window.exportedCSV = text; }); return made(blob); };
		return true;
	})()`)); err != nil {
		b.fail("watching the export", err)
	}
	if err := b.within(chromedp.Click(chromedp.CSS("#export-csv"))); err != nil {
		b.fail("exporting", err)
	}
	csv, err := b.poll(`window.exportedCSV || false`)
	if err != nil {
		b.fail("the export", err)
	}
	lines := strings.Split(strings.TrimSpace(csv), "\r\n")
	if len(lines) != 2 || lines[0] != "id,status,amount,currency,provider,customer_email,created_at,merchant_id" ||
		!strings.HasPrefix(lines[1], acmes+",SUCCEEDED,10.00,USD,stripe,bob@acme.example,") || !strings.HasSuffix(lines[1], ","+acme) {
		t.Errorf("the export of Acme's payments:\n%s", csv)
	}

	// Every merchant's payments in one list, each with its merchant; one of another merchant's
	// opens its detail, read as its merchant's.
	if err := b.within(chromedp.Click(chromedp.CSS("#all-merchants")), chromedp.Click(chromedp.CSS(`#merchant-form button[type="submit"]`))); err != nil {
		b.fail("choosing every merchant", err)
	}
	if _, err := b.poll(`document.getElementById('merchant-error').textContent.startsWith("Listing every merchant's payments") && 'taken'`); err != nil {
		b.fail("every merchant chosen", err)
	}
	position("Page 1: 1–50 of 53")
	filter(acmes, "")
	position("Page 1: 1–1 of 1")
	merchantCell, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
		const cell = document.querySelector('#payments-rows tr[data-id] td.merchant-column');
		return cell && getComputedStyle(cell).display !== 'none' ? cell.textContent : '';
	})()`))
	if err != nil || merchantCell != acme {
		t.Errorf("every merchant's list shows the payment's merchant as %q, %v", merchantCell, err)
	}
	if err := b.click(fmt.Sprintf(`#payments-rows tr[data-id=%q] .row-button`, acmes)); err != nil {
		b.fail("choosing another merchant's payment", err)
	}
	if _, err := b.poll(fmt.Sprintf(`document.getElementById('detail-body').textContent.includes(%q) && 'shown'`, "bob@acme.example")); err != nil {
		b.fail("another merchant's payment's detail", err)
	}
	b.view("ops-every-merchant")

	// A payment another merchant takes now comes into the list as it happens.
	filter("", "")
	position("Page 1: 1–50 of 53")
	latest := pay("carl@acme.example", "4242424242424242", "Paygate-Merchant", acme)
	if _, err := b.poll(fmt.Sprintf(`document.querySelector('#payments-rows tr[data-id=%q]') ? 'listed' : false`, latest)); err != nil {
		b.fail("another merchant's payment as it happens", err)
	}
	position("Page 1: 1–50 of 54")
	b.finish()
}
