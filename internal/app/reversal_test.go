package app

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// A payment canceled while its shopper authenticates, whose shopper then completes the challenge:
// Adyen and Checkout.com, which had nothing to cancel yet, approve it (and capture it, unless it
// is captured manually); Stripe, which cancels the intent itself, refuses the shopper.

// lateCase is a provider's payment canceled during authentication, then approved.
type lateCase struct {
	provider, currency string
	manual             bool
	// chargeStatus is the status the provider's charge ends in once Paygate undid the approval:
	// captured and refunded in full, or its authorisation voided.
	chargeStatus string
}

// refunds reports whether Paygate undoes the approval by a refund (it was captured).
func (c lateCase) refunds() bool { return !c.manual }

func (c lateCase) name() string {
	if c.manual {
		return c.provider + " manual capture"
	}
	return c.provider
}

// lateCases are the approvals after a cancellation that each provider's sandbox makes.
var lateCases = []lateCase{
	{"adyen", "EUR", false, "Authorised"},
	{"adyen", "EUR", true, "Cancelled"},
	{"checkout", "GBP", false, "Captured"},
	{"checkout", "GBP", true, "Voided"},
}

// canceledWhileAuthenticating makes a payment of amount by a card that asks for authentication
// at c's provider, cancels it while its shopper is on the challenge page, and returns its id and
// that page.
func (e *testEnv) canceledWhileAuthenticating(t *testing.T, token string, c lateCase, amount string) (id, page string) {
	t.Helper()
	body := authenticationBody(amount, c.currency, provider.AuthenticateThenApprove, "https://shop.example/back")
	if c.manual {
		body["capture_method"] = "manual"
	}
	id, page = awaitingShopper(t, e, e.request(http.MethodPost, "/api/v1/payments", token, body), c.provider, "https://shop.example/back")
	r := e.request(http.MethodPost, "/api/v1/payments/"+id+"/cancel", token, nil)
	if r.status != http.StatusOK || str(get(r.data(), "status")) != "canceled" || get(r.data(), "reversal_status") != nil {
		t.Fatalf("%s: cancel while the shopper authenticates: %d %s", c.name(), r.status, r.raw)
	}
	return id, page
}

// sandboxCharge is the charge payment id made at its provider's sandbox, and its refunds there.
func (e *testEnv) sandboxCharge(t *testing.T, id string) (*ent.SandboxObject, []*ent.SandboxObject) {
	t.Helper()
	ctx := databasetest.AsMerchant()
	charge, err := e.db.Ent.SandboxObject.Query().Where(sandboxobject.Reference(id), sandboxobject.KindEQ(sandboxobject.KindCharge)).Only(ctx)
	if err != nil {
		t.Fatalf("the sandbox's charge of %s: %v", id, err)
	}
	refunds, err := e.db.Ent.SandboxObject.Query().Where(sandboxobject.ChargeID(charge.ID), sandboxobject.KindEQ(sandboxobject.KindRefund)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return charge, refunds
}

// reversalLines are the lines of payment id's history about its late approval: those that leave
// it canceled.
func (e *testEnv) reversalLines(t *testing.T, id string) []string {
	t.Helper()
	changes, err := e.db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(id),
		paymentstatuschange.FromEQ(state.PaymentCanceled), paymentstatuschange.ToEQ(state.PaymentCanceled)).
		Order(ent.Asc(paymentstatuschange.FieldAt), ent.Asc(paymentstatuschange.FieldID)).All(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.Reason)
	}
	return lines
}

// eventsAbout lists, over REST, the events of eventType that show payment id, as the merchant
// reads them.
func (e *testEnv) eventsAbout(t *testing.T, token, eventType, id string) []any {
	t.Helper()
	r := e.request(http.MethodGet, "/api/v1/events?limit=100&type="+eventType, token, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /api/v1/events?type=%s = %d %s", eventType, r.status, r.raw)
	}
	var about []any
	for _, ev := range get(r.body, "data").([]any) {
		if str(get(ev, "data", "object", "id")) == id {
			about = append(about, ev)
		}
	}
	return about
}

// reversalKey is an API key of the default merchant's that reads and writes payments, reads
// events and alerts: a credential that does not expire as the tests move the clock hours on.
func (e *testEnv) reversalKey() string {
	e.t.Helper()
	return e.apiKey(e.tokenFor("admin"), "payments:read", "payments:write", "webhooks:read", "monitoring:read")
}

// newReversalEnv is a test environment over db whose sandboxes sign their webhooks, and its
// reversalKey to call it with.
func newReversalEnv(t *testing.T, db *database.DB) (env *testEnv, key string) {
	t.Helper()
	env = newTestEnv(t, db, webhookSecretsEnv...)
	return env, env.reversalKey()
}

// reverse runs a round of the reversal loop and returns how many reversals it ended.
func (e *testEnv) reverse(t *testing.T) int {
	t.Helper()
	n, err := e.app.services.payments.ReverseLateApprovals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// settleSandboxRefunds has the sandboxes settle the refunds they took, and Paygate apply what
// their webhooks say of them.
func (e *testEnv) settleSandboxRefunds(t *testing.T) {
	t.Helper()
	e.clock.Advance(provider.DefaultSettleAfter)
	for name, sandbox := range e.app.services.providers.sandboxes {
		if settler, ok := sandbox.(provider.Settler); ok {
			if _, err := settler.Settle(context.Background()); err != nil {
				t.Fatalf("settling the %s sandbox's refunds: %v", name, err)
			}
		}
	}
	e.processWebhooks(t)
}

// TestLateApprovalIsUndone: at Adyen and Checkout.com, captured at once or manually, a payment
// canceled while its shopper authenticates, whose shopper then completes the challenge, is
// approved by the provider. Whichever way that reaches Paygate (the shopper's browser coming back,
// which lands on the merchant's page with status=canceled; the provider's webhook; or, at
// Checkout.com, which can be asked, reconciliation an hour later), the payment stays canceled for
// the merchant, a line of history says the approval is to be undone, and the reversal loop voids
// the authorisation or refunds the capture at the provider: the sandbox's own charge ends voided,
// or refunded in full by one refund under the payment's reversal key. The merchant is told by one
// payment.reversed event, showing reversal_status voided or refunded. The approval told again, by
// every way, and the provider's confirmations, change nothing more, and nobody is asked to look.
func TestLateApprovalIsUndone(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env, key := newReversalEnv(t, db)
		ctx := context.Background()
		for _, c := range lateCases {
			ways := []string{"browser", "webhook"}
			if c.provider == "checkout" {
				ways = append(ways, "reconciliation")
			}
			for _, way := range ways {
				what := c.name() + " by " + way
				id, page := env.canceledWhileAuthenticating(t, key, c, "25.00")
				back := returnOf(t, page, "complete")
				switch way {
				case "browser":
					landed := comeBack(t, back)
					if q := landed.Query(); q.Get("payment_id") != id || q.Get("status") != "canceled" {
						t.Errorf("%s: the browser landed on %s, want status=canceled", what, landed)
					}
				case "webhook":
					env.processWebhooks(t)
				case "reconciliation":
					// Neither the browser nor the webhook tells: an hour later reconciliation asks.
					env.sandboxWebhooksDelivered()
					if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{}); err != nil || done.LateApprovals != 0 {
						t.Fatalf("%s: reconciliation before its check is due: %+v, %v", what, done, err)
					}
					env.clock.Advance(payment.AuthenticationWindow + time.Minute)
					if done, err := env.app.services.payments.Reconcile(ctx, payment.Window{}); err != nil || done.LateApprovals != 1 {
						t.Fatalf("%s: reconciliation: %+v, %v; want the late approval found", what, done, err)
					}
				}
				noticed := env.payment(id)
				if noticed.Status != state.PaymentCanceled || noticed.ReversalStatus == nil || *noticed.ReversalStatus != state.ReversalPending {
					t.Fatalf("%s: once the approval reached Paygate the payment is %s, reversal %v; want canceled, pending", what, noticed.Status, noticed.ReversalStatus)
				}
				if n := env.reverse(t); n != 1 {
					t.Fatalf("%s: the reversal loop ended %d reversals, want 1", what, n)
				}

				want, how := state.ReversalVoided, "voided"
				if c.refunds() {
					want, how = state.ReversalRefunded, "refunded"
				}
				checkUndone := func(when string) {
					t.Helper()
					charge, refunds := env.sandboxCharge(t, id)
					if charge.Status != c.chargeStatus {
						t.Errorf("%s (%s): the sandbox's charge is %s, want %s", what, when, charge.Status, c.chargeStatus)
					}
					if c.refunds() && (charge.Refunded != charge.Amount || len(refunds) != 1 || refunds[0].Amount != charge.Amount || refunds[0].Reference != "reversal_"+id) {
						t.Errorf("%s (%s): the sandbox's charge refunded %d of %d by %d refunds; want all of it by one refund under reversal_%s",
							what, when, charge.Refunded, charge.Amount, len(refunds), id)
					}
					if !c.refunds() && len(refunds) != 0 {
						t.Errorf("%s (%s): %d refunds of a voided authorisation", what, when, len(refunds))
					}
					got := env.request(http.MethodGet, "/api/v1/payments/"+id, key, nil).data()
					if str(get(got, "status")) != "canceled" || str(get(got, "reversal_status")) != how || get(got, "reversal_failure_message") != nil ||
						str(get(got, "amount_captured")) != "0.00" || str(get(got, "amount_refunded")) != "0.00" {
						t.Errorf("%s (%s): the merchant reads %s", what, when, mustJSON(t, got))
					}
					lines := env.reversalLines(t, id)
					if len(lines) != 2 || !strings.Contains(lines[0], "approved by "+c.provider+" after its cancellation") ||
						!strings.Contains(lines[1], string(want)) {
						t.Errorf("%s (%s): the history's lines about the approval: %q", what, when, lines)
					}
					events := env.eventsAbout(t, key, "payment.reversed", id)
					if len(events) != 1 || str(get(events[0], "data", "object", "status")) != "canceled" ||
						str(get(events[0], "data", "object", "reversal_status")) != how {
						t.Errorf("%s (%s): payment.reversed events: %s", what, when, mustJSON(t, events))
					}
					if failed := env.eventsAbout(t, key, "payment.reversal_failed", id); len(failed) != 0 {
						t.Errorf("%s (%s): payment.reversal_failed events: %s", what, when, mustJSON(t, failed))
					}
				}
				checkUndone("undone")

				// Told again, every way, and confirmed by the provider: nothing more is undone.
				comeBack(t, back)
				env.settleSandboxRefunds(t)
				env.clock.Advance(payment.AuthenticationWindow + time.Minute)
				if _, err := env.app.services.payments.Reconcile(ctx, payment.Window{}); err != nil {
					t.Fatal(err)
				}
				if n := env.reverse(t); n != 0 {
					t.Errorf("%s: the reversal loop ended %d more reversals", what, n)
				}
				checkUndone("told again")
				if strings.Contains(env.logs.String(), "needs a person") {
					t.Fatalf("%s: a person was asked to look: %s", what, env.logs)
				}
			}
		}
	})
}

// TestStripeCancelsTheIntent: at Stripe a payment canceled while its shopper authenticates is
// canceled at Stripe too (the intent), whose challenge page then refuses the shopper: nothing is
// approved, so nothing is undone, and the merchant was told payment.canceled. Reconciliation and
// the reversal loop find nothing to do.
func TestStripeCancelsTheIntent(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env, key := newReversalEnv(t, db)
		id, page := env.canceledWhileAuthenticating(t, key, lateCase{provider: "stripe", currency: "USD"}, "25.00")
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			var resp *http.Response
			var err error
			if method == http.MethodGet {
				resp, err = http.Get(page)
			} else {
				resp, err = http.PostForm(page, url.Values{"outcome": {"complete"}})
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s of the challenge page of an intent canceled = %d, want 404", method, resp.StatusCode)
			}
		}
		env.processWebhooks(t)
		env.clock.Advance(payment.AuthenticationWindow + time.Minute)
		if done, err := env.app.services.payments.Reconcile(context.Background(), payment.Window{}); err != nil || done.LateApprovals != 0 {
			t.Errorf("reconciliation: %+v, %v", done, err)
		}
		if n := env.reverse(t); n != 0 {
			t.Errorf("the reversal loop ended %d reversals", n)
		}
		charge, refunds := env.sandboxCharge(t, id)
		if charge.Status != "canceled" || len(refunds) != 0 {
			t.Errorf("the sandbox's intent is %s with %d refunds, want canceled", charge.Status, len(refunds))
		}
		p := env.payment(id)
		if p.Status != state.PaymentCanceled || p.ReversalStatus != nil || p.ReversalDue != nil {
			t.Errorf("the payment is %s, reversal %v due %v; want canceled, nothing to undo", p.Status, p.ReversalStatus, p.ReversalDue)
		}
		if canceled := env.eventsAbout(t, key, "payment.canceled", id); len(canceled) != 1 {
			t.Errorf("payment.canceled events: %s", mustJSON(t, canceled))
		}
		if moves := movesOf(t, env, id); !slices.Equal(moves, sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>canceled")) {
			t.Errorf("history %v", moves)
		}
	})
}

// TestLateApprovalReversalFails: when the provider refuses to undo the approval, the reversal
// fails: an alert of rule payment_reversal_failed about the payment is raised, the history says
// why, and the merchant is told by payment.reversal_failed, whose payment shows reversal_status
// failed and reversal_failure_message; the payment stays canceled and a person is asked to look.
// At Adyen and Checkout.com the refund is taken and then declined (the sandboxes decline a refund
// of 13.13), which their webhook tells; at either, a provider down for every try (the sandbox's
// outage) fails it once the tries run out, the provider's charge untouched.
func TestLateApprovalReversalFails(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env, key := newReversalEnv(t, db)
		for _, tc := range []struct {
			c      lateCase
			amount string
			outage bool
		}{
			{lateCase{provider: "adyen", currency: "EUR"}, "13.13", false},
			{lateCase{provider: "checkout", currency: "GBP"}, "13.13", false},
			{lateCase{provider: "adyen", currency: "EUR", manual: true}, "20.00", true},
			{lateCase{provider: "checkout", currency: "GBP"}, "20.00", true},
		} {
			what := tc.c.name() + " declining the refund"
			if tc.outage {
				what = tc.c.name() + " down"
			}
			id, page := env.canceledWhileAuthenticating(t, key, tc.c, tc.amount)
			returnOf(t, page, "complete")
			env.processWebhooks(t)
			if tc.outage {
				switches := env.app.services.providers.sandboxes[tc.c.provider].Switches()
				switches.Outage.Store(true)
				for try := 0; ; try++ {
					if n := env.reverse(t); n == 1 {
						break
					}
					if try > 10 {
						t.Fatalf("%s: the reversal never ended", what)
					}
					env.clock.Advance(13 * time.Hour) // past the longest wait between tries
				}
				switches.Outage.Store(false)
				charge, refunds := env.sandboxCharge(t, id)
				if charge.Refunded != 0 || len(refunds) != 0 || (tc.c.manual && charge.Status == "Cancelled") {
					t.Errorf("%s: the provider's charge is %s, refunded %d by %d refunds; want untouched", what, charge.Status, charge.Refunded, len(refunds))
				}
			} else {
				if n := env.reverse(t); n != 1 {
					t.Fatalf("%s: the reversal loop ended %d reversals, want 1", what, n)
				}
				if p := env.payment(id); *p.ReversalStatus != state.ReversalRefunded {
					t.Fatalf("%s: taken by the provider, the reversal is %s", what, *p.ReversalStatus)
				}
				env.settleSandboxRefunds(t) // declined, which its webhook tells
			}

			got := env.request(http.MethodGet, "/api/v1/payments/"+id, key, nil).data()
			if str(get(got, "status")) != "canceled" || str(get(got, "reversal_status")) != "failed" || str(get(got, "reversal_failure_message")) == "" {
				t.Errorf("%s: the merchant reads %s", what, mustJSON(t, got))
			}
			events := env.eventsAbout(t, key, "payment.reversal_failed", id)
			if len(events) != 1 || str(get(events[0], "data", "object", "reversal_status")) != "failed" ||
				str(get(events[0], "data", "object", "reversal_failure_message")) == "" {
				t.Errorf("%s: payment.reversal_failed events: %s", what, mustJSON(t, events))
			}
			alerts, err := db.Ent.Alert.Query().Where(alert.Rule(alerting.RuleReversalFailed), alert.Subject(id)).All(databasetest.AsMerchant())
			if err != nil {
				t.Fatal(err)
			}
			if len(alerts) != 1 || alerts[0].Severity != state.AlertCritical || alerts[0].Status != state.AlertOpen || !strings.Contains(alerts[0].Message, id) {
				t.Errorf("%s: alerts %+v, want one open, critical, about the payment", what, alerts)
			}
			listed := env.request(http.MethodGet, "/api/v1/monitoring/alerts?status=open", key, nil)
			if !strings.Contains(listed.raw, `"rule":"payment_reversal_failed"`) || !strings.Contains(listed.raw, id) {
				t.Errorf("%s: the alert is not listed: %s", what, listed.raw)
			}
			if lines := env.reversalLines(t, id); len(lines) < 2 || !strings.Contains(lines[len(lines)-1], "could not be undone") {
				t.Errorf("%s: the history's lines about the approval: %q", what, lines)
			}
			if !strings.Contains(env.logs.String(), id) || !strings.Contains(env.logs.String(), "needs a person") {
				t.Errorf("%s: nobody was asked to look", what)
			}
			// Failed stays failed: nothing asks the provider again.
			if n := env.reverse(t); n != 0 {
				t.Errorf("%s: the reversal loop ended %d more reversals", what, n)
			}
		}
	})
}

// TestLateApprovalReversedOnce: the approval of a payment canceled during authentication reaching
// Paygate many times at once (shoppers' browsers coming back, the webhook worker, reconciliation,
// on any server) while the reversal loop runs on several servers, is undone once: one refund at
// the provider, one pair of history lines, one payment.reversed event.
func TestLateApprovalReversedOnce(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env, key := newReversalEnv(t, db)
		ctx := context.Background()
		for _, c := range []lateCase{{provider: "adyen", currency: "EUR"}, {provider: "checkout", currency: "GBP"}} {
			id, page := env.canceledWhileAuthenticating(t, key, c, "25.00")
			back := returnOf(t, page, "complete")
			env.sandboxWebhooksDelivered()
			env.clock.Advance(payment.AuthenticationWindow + time.Minute) // reconciliation's check is due too
			browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for range 4 {
				wg.Go(func() {
					resp, err := browser.Get(back)
					if err != nil {
						errs <- err
						return
					}
					resp.Body.Close()
				})
			}
			for range 2 {
				wg.Go(func() { errs <- env.app.services.webhookWorker.ProcessDueAll(ctx) })
				wg.Go(func() {
					_, err := env.app.services.payments.Reconcile(ctx, payment.Window{})
					errs <- err
				})
			}
			for range 3 {
				wg.Go(func() {
					for range 5 {
						if _, err := env.app.services.payments.ReverseLateApprovals(ctx); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("%s: %v", c.name(), err)
				}
			}
			env.processWebhooks(t)
			env.reverse(t) // the approval may have come after the loops' last rounds

			charge, refunds := env.sandboxCharge(t, id)
			if len(refunds) != 1 || charge.Refunded != charge.Amount {
				t.Errorf("%s: %d refunds at the provider, %d of %d refunded; want one of all of it", c.name(), len(refunds), charge.Refunded, charge.Amount)
			}
			if lines := env.reversalLines(t, id); len(lines) != 2 {
				t.Errorf("%s: the history's lines about the approval: %q, want 2", c.name(), lines)
			}
			if events := env.eventsAbout(t, key, "payment.reversed", id); len(events) != 1 {
				t.Errorf("%s: %d payment.reversed events, want 1", c.name(), len(events))
			}
			if p := env.payment(id); p.Status != state.PaymentCanceled || p.ReversalStatus == nil || *p.ReversalStatus != state.ReversalRefunded {
				t.Errorf("%s: the payment is %s, reversal %v", c.name(), p.Status, p.ReversalStatus)
			}
		}
	})
}

// TestLateApprovalSurvivesAStop: a reversal is owed from the moment the approval is read, in the
// database, not in the server that read it. Server one reads the late approval (the shopper's
// browser comes back to it) and stops before its reversal loop runs; server two, over the same
// database, takes it up as its loop starts, and the provider's charge ends refunded, once.
func TestLateApprovalSurvivesAStop(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools, webhookSecretsEnv...)
		one, two := servers[0], servers[1]
		key := one.reversalKey()
		c := lateCase{provider: "checkout", currency: "GBP"}
		id, page := one.canceledWhileAuthenticating(t, key, c, "25.00")
		comeBack(t, returnOf(t, page, "complete"))
		if p := one.payment(id); p.ReversalStatus == nil || *p.ReversalStatus != state.ReversalPending {
			t.Fatalf("server one read the approval: reversal %v, want pending", p.ReversalStatus)
		}
		// Server one stops here: it never runs a round. Server two starts.
		ctx, stop := context.WithCancel(context.Background())
		loops := two.app.Start(ctx)
		t.Cleanup(func() {
			stop()
			loops.Stop(context.Background())
		})
		waitFor(t, "server two undoing the approval", func() bool {
			p := two.payment(id)
			return p.ReversalStatus != nil && *p.ReversalStatus == state.ReversalRefunded
		})
		charge, refunds := two.sandboxCharge(t, id)
		if charge.Refunded != charge.Amount || len(refunds) != 1 {
			t.Errorf("the provider's charge refunded %d of %d by %d refunds; want all of it by one", charge.Refunded, charge.Amount, len(refunds))
		}
		if events := two.eventsAbout(t, key, "payment.reversed", id); len(events) != 1 {
			t.Errorf("%d payment.reversed events, want 1", len(events))
		}
	})
}

// TestCancelRacesTheShopper: at each provider, a cancellation sent while the shopper completes the
// challenge, at the same moment: whichever the provider and Paygate take first, no money stays
// taken unless the merchant is told the payment succeeded. Either the cancellation is answered
// 200, the payment stays canceled, and the provider's charge ends with nothing taken (the intent
// canceled at Stripe, whose page then refuses the shopper; at Adyen and Checkout.com, declined
// unfinished, or approved and then refunded in full by Paygate); or the cancellation is refused
// (409 invalid_state, 502 provider_unavailable) and the payment succeeded.
func TestCancelRacesTheShopper(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env, key := newReversalEnv(t, db)
		// The statuses of a charge that took the shopper's money, at each sandbox.
		taken := map[string]string{"stripe": "succeeded", "adyen": "Authorised", "checkout": "Captured"}
		for _, c := range []lateCase{{provider: "stripe", currency: "USD"}, {provider: "adyen", currency: "EUR"}, {provider: "checkout", currency: "GBP"}} {
			body := authenticationBody("25.00", c.currency, provider.AuthenticateThenApprove, "https://shop.example/back")
			id, page := awaitingShopper(t, env, env.request(http.MethodPost, "/api/v1/payments", key, body), c.provider, "https://shop.example/back")
			browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			var cancel response
			var back *url.URL
			var wg sync.WaitGroup
			wg.Go(func() { cancel = env.request(http.MethodPost, "/api/v1/payments/"+id+"/cancel", key, nil) })
			wg.Go(func() {
				resp, err := browser.PostForm(page, url.Values{"outcome": {"complete"}})
				if err != nil {
					t.Errorf("%s: submitting the challenge: %v", c.name(), err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusSeeOther {
					back, _ = resp.Location()
				}
			})
			wg.Wait()
			if back != nil {
				comeBack(t, back.String())
			}
			env.processWebhooks(t)
			env.reverse(t)
			env.settleSandboxRefunds(t)

			p := env.payment(id)
			charge, _ := env.sandboxCharge(t, id)
			stillTaken := charge.Status == taken[c.provider] && charge.Refunded < charge.Amount
			code, _ := cancel.errorCode()
			switch {
			case cancel.status == http.StatusOK:
				if p.Status != state.PaymentCanceled || stillTaken {
					t.Errorf("%s: canceled (200), the payment is %s and the provider's charge %s, %d of %d refunded",
						c.name(), p.Status, charge.Status, charge.Refunded, charge.Amount)
				}
			case code == "invalid_state" || code == "provider_unavailable":
				if p.Status != state.PaymentSucceeded || !stillTaken {
					t.Errorf("%s: cancellation refused (%s), the payment is %s and the provider's charge %s", c.name(), code, p.Status, charge.Status)
				}
			default:
				t.Errorf("%s: the cancellation answered %d %s", c.name(), cancel.status, cancel.raw)
			}
		}
	})
}
