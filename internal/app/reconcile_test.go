package app

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	ckosandbox "github.com/paygate/paygate/internal/provider/checkout/sandbox"
	"github.com/paygate/paygate/internal/state"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
)

// TestReconciliationSettlesLostCharges: a payment whose provider answer was lost stays processing
// and answers 202 with the payment; a retry with its key answers it as it is then, without
// charging again; reconciliation asks the provider and records what it did (a charge made, or
// none).
func TestReconciliationSettlesLostCharges(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		stripeSandbox := env.app.services.providers.sandboxes["stripe"].Switches()
		ctx := databasetest.AsMerchant()

		stripeSandbox.LoseAnswers.Store(true) // charged, answer lost
		charged := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("30.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-1")
		stripeSandbox.LoseAnswers.Store(false)
		stripeSandbox.Fault.Store(true) // answered 500 without charging
		uncharged := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("31.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-2")
		stripeSandbox.Fault.Store(false)
		for _, r := range []response{charged, uncharged} {
			if r.status != http.StatusAccepted || r.data()["status"] != "processing" || !strings.HasPrefix(str(r.data()["id"]), "pay_") ||
				r.data()["provider"] != "stripe" || fmt.Sprint(attempts(r.data())) != "[stripe:unknown]" {
				t.Fatalf("a payment in doubt answered %d %s", r.status, r.raw)
			}
		}
		// Until reconciled, a retry answers the payment, still processing: it must not charge again.
		again := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("30.00", "USD", "4242424242424242"), "Idempotency-Key", "lost-1")
		if again.status != http.StatusAccepted || again.data()["id"] != charged.data()["id"] || again.header.Get("Idempotent-Replayed") != "true" {
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
		ctx := databasetest.AsMerchant()
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

// TestLostAnswerOverGraphQL: over GraphQL a payment whose provider answer was lost is the payment,
// PROCESSING, with no error; a retry with its key answers the same payment as it is then, and
// once the provider's webhook has settled it, succeeded; only one charge was made.
func TestLostAnswerOverGraphQL(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.app.Start(t.Context())
		token := env.tokenFor("operator")
		stripeSandbox := env.app.services.providers.sandboxes["stripe"]
		in := gqlPaymentInput("12.00", "USD", "4242424242424242")
		in["idempotencyKey"] = "lost-over-graphql"
		create := func() response {
			return env.request(http.MethodPost, "/query", token, map[string]any{"query": createPaymentMutation, "variables": map[string]any{"in": in}})
		}

		stripeSandbox.Switches().LoseAnswers.Store(true)
		first := create()
		stripeSandbox.Switches().LoseAnswers.Store(false)
		id := str(get(first.body, "data", "createPayment", "id"))
		if first.status != http.StatusOK || get(first.body, "errors") != nil || get(first.body, "data", "createPayment", "status") != "PROCESSING" || id == "" {
			t.Fatalf("a lost answer over GraphQL = %d %s", first.status, first.raw)
		}
		again := create()
		if get(again.body, "data", "createPayment", "id") != id || get(again.body, "data", "createPayment", "status") != "PROCESSING" ||
			get(again.body, "extensions", "idempotentReplayed") != true {
			t.Errorf("the retry before the payment settled = %s", again.raw)
		}

		// The sandbox charged and sent payment_intent.succeeded, which waits out the time the
		// payment's own request may still be running, then settles the payment.
		stripeSandbox.(interface{ WaitForWebhooks() }).WaitForWebhooks()
		env.clock.Advance(payment.InFlightGrace + time.Second)
		env.app.services.webhookWorker.Wake()
		waitFor(t, "the webhook to settle the payment", func() bool { return env.payment(id).Status == state.PaymentSucceeded })
		settled := create()
		if get(settled.body, "data", "createPayment", "id") != id || get(settled.body, "data", "createPayment", "status") != "SUCCEEDED" {
			t.Errorf("the retry after the webhook = %s", settled.raw)
		}
		if got := env.charges(id); got["stripe"] != 1 || len(got) != 1 {
			t.Errorf("charges %v, want one at stripe", got)
		}
	})
}
