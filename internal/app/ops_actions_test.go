package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestOpsPageActsOnPayments drives the operations page in headless Chromium as a platform
// operator: refunds part of a payment, is shown the API's refusal of a refund larger than what is
// left, captures part of an authorisation and cancels another, each asked in a dialog first and
// sent once; then, signed in with a key that may not refund, is offered no refund.
func TestOpsPageActsOnPayments(t *testing.T) {
	t.Parallel()
	chromium := browserPath(t)
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) { opsPageActsOnPayments(t, chromium, db) })
}

func opsPageActsOnPayments(t *testing.T, chromium string, db *database.DB) {
	env := newTestEnv(t, db)
	env.app.Start(t.Context())
	email := env.staffWith("operator")
	admin := env.tokenFor("admin")
	paid := env.succeededPayment(admin, "25.00", "USD", "stripe")
	made := func(body map[string]any) string {
		t.Helper()
		r := env.request(http.MethodPost, "/api/v1/payments", admin, body)
		if r.status != http.StatusCreated {
			t.Fatalf("payment: %d %s", r.status, r.raw)
		}
		return str(get(r.data(), "id"))
	}
	toCapture, toCancel := made(manualBody("30.00", "USD")), made(manualBody("20.00", "USD"))
	// A key that may change payments, but not refund them.
	noRefunds := env.apiKey(admin, "payments:read", "payments:write")

	b := newOpsBrowser(t, chromium, env)
	b.signIn(env.url, email)
	// act opens payment's detail, then the dialog of action, fills it in and confirms; it answers
	// what the dialog or the detail then says.
	dialogs := 0
	act := func(payment, action, amount, reason string) string {
		t.Helper()
		row := fmt.Sprintf(`#payments-rows tr[data-id=%q] .row-button`, payment)
		button := fmt.Sprintf(`#detail-body button[data-payment-action=%q]`, action)
		if err := b.click(row); err != nil {
			b.fail("choosing "+payment, err)
		}
		if _, err := b.poll(fmt.Sprintf(`document.querySelector('#detail-body .detail-id')?.textContent === %q && 'shown'`, payment)); err != nil {
			b.fail("the detail of "+payment, err)
		}
		if err := b.click(button); err != nil {
			b.fail("opening "+action+" of "+payment, err)
		}
		if err := b.within(chromedp.WaitVisible(chromedp.CSS("#action-dialog"))); err != nil {
			b.fail("the dialog of "+action, err)
		}
		fill := fmt.Sprintf(`(() => {
			if (%q) document.getElementById('action-amount').value = %q;
			if (%q) document.getElementById('action-reason').value = %q;
			const form = document.getElementById('action-form');
			form.requestSubmit();
			form.requestSubmit(); // a second press while the first is under way sends nothing more
			return true;
		})()`, amount, amount, reason, reason)
		dialogs++
		b.view(fmt.Sprintf("ops-dialog-%d-%s", dialogs, action))
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fill)); err != nil {
			b.fail("confirming "+action, err)
		}
		said, err := b.poll(`(() => {
			const dialog = document.getElementById('action-dialog');
			const error = document.getElementById('action-error').textContent;
			if (dialog.open) return error.startsWith('Paygate refused') ? error : false;
			const note = document.getElementById('detail-note');
			return note.dataset.kind === 'done' ? note.textContent : false;
		})()`)
		if err != nil {
			b.fail("the answer to "+action+" of "+payment, err)
		}
		return said
	}

	if said := act(paid, "refund", "5.00", ""); said != "Refund of "+paid+": succeeded." {
		t.Errorf("refunding 5.00 of %s: the page says %q", paid, said)
	}
	if said := act(paid, "refund", "100.00", ""); !strings.Contains(said, "(refund_exceeds_payment)") {
		t.Errorf("refunding 100.00 of what is left of %s: the page says %q", paid, said)
	}
	b.view("ops-refund-refused")
	if err := b.within(chromedp.Click(chromedp.CSS("#action-cancel")), chromedp.WaitNotVisible(chromedp.CSS("#action-dialog"))); err != nil {
		b.fail("going back from the dialog", err)
	}
	if said := act(toCapture, "capture", "10.00", ""); said != "Capture of "+toCapture+": succeeded." {
		t.Errorf("capturing 10.00 of %s: the page says %q", toCapture, said)
	}
	if said := act(toCancel, "cancel", "", "DUPLICATE"); said != "Cancel of "+toCancel+": canceled." {
		t.Errorf("canceling %s: the page says %q", toCancel, said)
	}
	b.view("ops-after-actions")

	// Each was done once, as asked.
	refunded := env.payment(paid)
	refunds := env.request(http.MethodGet, "/api/v1/payments/"+paid+"/refunds", admin, nil)
	if refunded.Status != "partially_refunded" || refunded.AmountRefunded != 500 || len(get(refunds.body, "data").([]any)) != 1 {
		t.Errorf("after the page refunded 5.00 of it: %+v, refunds %s", refunded, refunds.raw)
	}
	if captured := env.payment(toCapture); captured.Status != "succeeded" || captured.AmountCaptured != 1000 {
		t.Errorf("after the page captured 10.00 of it: %+v", captured)
	}
	if canceled := env.payment(toCancel); canceled.Status != "canceled" || canceled.CancellationReason == nil || string(*canceled.CancellationReason) != "duplicate" {
		t.Errorf("after the page canceled it: %+v", canceled)
	}

	// A credential without refunds:write is offered no refund of a payment that could be refunded.
	if err := b.within(chromedp.Click(chromedp.CSS("#sign-out")), chromedp.WaitVisible(chromedp.CSS("#credential")),
		chromedp.SendKeys(chromedp.CSS("#credential"), noRefunds+kb.Enter)); err != nil {
		b.fail("signing in with a key that may not refund", err)
	}
	if _, err := b.poll(`document.getElementById('session-who').textContent.includes('(API key)') && 'known'`); err != nil {
		b.fail("the key's scopes known", err)
	}
	if err := b.click(fmt.Sprintf(`#payments-rows tr[data-id=%q] .row-button`, paid)); err != nil {
		b.fail("choosing a payment without refunds:write", err)
	}
	if _, err := b.poll(fmt.Sprintf(`document.querySelector('#detail-body .detail-id')?.textContent === %q && 'shown'`, paid)); err != nil {
		b.fail("the detail without refunds:write", err)
	}
	if n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#detail-body button[data-payment-action]').length`)); err != nil || n != 0 {
		t.Errorf("a key without refunds:write is offered %d actions on a refundable payment (%v)", n, err)
	}
	b.finish()
}
