package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	ckosandbox "github.com/paygate/paygate/internal/provider/checkout/sandbox"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
)

// TestReconciliationSettlesLostCharges: a payment whose provider answer was lost stays processing
// and answers 500; reconciliation asks the provider and records what it did (a charge made, or
// none), and from then on a retry with the request's key answers the payment, not the error.
func TestReconciliationSettlesLostCharges(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		stripeSandbox := env.app.services.providers.sandboxes["stripe"].Switches()
		ctx := context.Background()

		stripeSandbox.LoseAnswers.Store(true) // charged, answer lost
		charged := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("30.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-1")
		stripeSandbox.LoseAnswers.Store(false)
		stripeSandbox.Fault.Store(true) // answered 500 without charging
		uncharged := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("31.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-2")
		stripeSandbox.Fault.Store(false)
		if charged.status != http.StatusInternalServerError || uncharged.status != http.StatusInternalServerError {
			t.Fatalf("payments in doubt answered %d and %d", charged.status, uncharged.status)
		}
		// Until reconciled, a retry replays the error: it must not charge again.
		if again := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("30.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-1"); again.status != http.StatusInternalServerError {
			t.Errorf("a retry before reconciliation = %d %s", again.status, again.raw)
		}
		// Nothing is older than an hour: a pass that waits that long leaves both.
		if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{InDoubtAfter: time.Hour}); err != nil || done.Payments != 0 {
			t.Errorf("reconciling what is not yet due = %+v, %v", done, err)
		}
		// Stripe has no charge for the second: not believed until it has had time to show one.
		if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{NotFoundAfter: time.Hour}); err != nil || done.Payments != 1 || done.Left != 1 {
			t.Errorf("reconciling with \"not found\" not yet believed = %+v, %v", done, err)
		}
		done, err := env.app.services.payments.Reconcile(ctx, payment.Window{})
		if err != nil || done.Payments != 1 {
			t.Fatalf("reconciled %+v, %v", done, err)
		}
		made := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("30.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-1")
		if made.status != http.StatusCreated || made.data()["status"] != "succeeded" || str(made.data()["provider_payment_id"]) == "" ||
			made.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the charged payment after reconciliation = %d %s", made.status, made.raw)
		}
		if got := env.charges(str(made.data()["id"])); got["stripe"] != 1 || len(got) != 1 {
			t.Errorf("charges %v", got)
		}
		none := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("31.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-2")
		if none.data()["status"] != "failed" || none.data()["failure_code"] != "provider_unavailable" {
			t.Errorf("the uncharged payment after reconciliation = %d %s", none.status, none.raw)
		}
		history := env.request(http.MethodGet, "/api/v1/payments/"+str(made.data()["id"]), token, nil).data()["status_history"].([]any)
		if last := history[len(history)-1]; get(last, "actor") != "reconciliation:stripe" || get(last, "to") != "succeeded" {
			t.Errorf("history ends %v", last)
		}
		if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{}); err != nil || done.Payments+done.Refunds+done.Left != 0 {
			t.Errorf("a second pass = %+v, %v", done, err)
		}
	})
}

// TestReconciliationSettlesPendingRefunds: Checkout.com takes refunds to settle later; once it
// has, reconciliation records each outcome (the magic 13.13 fails). Adyen reports by webhook
// only, so its pending refund waits.
func TestReconciliationSettlesPendingRefunds(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		ctx := context.Background()
		pounds := str(env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("50.00", "GBP", "4242424242424242")).data()["id"])
		euros := str(env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("50.00", "EUR", "4242424242424242")).data()["id"])
		refund := func(id, amount string) map[string]any {
			r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", token, map[string]any{"amount": amount})
			if r.status != http.StatusCreated || r.data()["status"] != "pending" {
				t.Errorf("refund of %s %s = %d %s", id, amount, r.status, r.raw)
			}
			return r.data()
		}
		taken, declined, adyenRefund := refund(pounds, "20.00"), refund(pounds, "13.13"), refund(euros, "5.00")
		// Pending refunds hold their amounts: 50.00 - 20.00 - 13.13 is all that is left.
		if r := env.request(http.MethodPost, "/api/v1/payments/"+pounds+"/refunds", token, map[string]any{"amount": "16.88"}); r.status != http.StatusUnprocessableEntity {
			t.Errorf("a refund over what pending refunds leave = %d", r.status)
		}
		if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{}); err != nil || done.Refunds != 0 {
			t.Errorf("reconciling before the provider settled = %+v, %v", done, err)
		}
		sandbox := env.app.services.providers.sandboxes["checkout"].(*ckosandbox.Sandbox)
		sandbox.SettleAfter = time.Nanosecond
		if n, err := sandbox.Settle(ctx); err != nil || n != 2 {
			t.Fatalf("settled %d, %v", n, err)
		}
		done, err := env.app.services.payments.Reconcile(ctx, payment.Window{})
		if err != nil || done.Refunds != 2 || done.Left != 0 {
			t.Errorf("reconciled %+v, %v; want the two Checkout.com refunds, the Adyen one not asked about", done, err)
		}
		for _, tc := range []struct {
			refund       map[string]any
			status, code string
		}{{taken, "succeeded", ""}, {declined, "failed", "refund_declined"}, {adyenRefund, "pending", ""}} {
			r, err := db.Ent.Refund.Get(ctx, str(tc.refund["id"]))
			if err != nil || string(r.Status) != tc.status || tc.code != "" && (r.FailureCode == nil || *r.FailureCode != tc.code) {
				t.Errorf("refund %s: %+v, %v; want %s %s", tc.refund["id"], r, err, tc.status, tc.code)
			}
		}
		p := env.payment(pounds)
		if p.Status != "partially_refunded" || p.AmountRefunded != 2000 {
			t.Errorf("payment after its refunds settled: %s, refunded %d", p.Status, p.AmountRefunded)
		}
	})
}
