package payment_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// notified is a payment service whose clock the test sets, over db, charging through "memory".
type notified struct {
	t   *testing.T
	db  *database.DB
	svc *payment.Service
	now time.Time
}

func newNotified(t *testing.T, db *database.DB) *notified {
	n := &notified{t: t, db: db, now: time.Now().UTC().Truncate(time.Microsecond)}
	clock := func() time.Time { return n.now }
	keys := idempotency.NewStore(db.Ent, fingerprintKey, clock)
	n.svc = payment.NewService(db, keys, only(providertest.Memory{}, clock), fingerprintKey, 99999999, clock)
	return n
}

// payment stores a payment of 100.00 USD at "memory", in status, made at.
func (n *notified) payment(id string, status state.PaymentStatus, made time.Time) {
	captured := int64(0)
	if slices.Contains(state.PaidStatuses(), status) {
		captured = 10000
	}
	n.db.Ent.Payment.Create().SetID(id).SetAmount(10000).SetAmountCaptured(captured).SetCurrency("USD").SetStatus(status).
		SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
		SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("memory").
		SetProviderPaymentID("ch_" + id).SetCreatedAt(made).SetUpdatedAt(made).ExecX(databasetest.AsMerchant())
}

// apply applies notification from provider in a transaction, committed unless it must wait.
func (n *notified) apply(from string, notification provider.Notification) payment.Applied {
	n.t.Helper()
	ctx := databasetest.AsMerchant()
	tx, err := n.db.Ent.Tx(ctx)
	if err != nil {
		n.t.Fatal(err)
	}
	applied, err := n.svc.ApplyNotification(ctx, tx, from, notification)
	if err != nil || !applied.NotBefore.IsZero() {
		tx.Rollback()
		if err != nil {
			n.t.Fatal(err)
		}
		return applied
	}
	if err := tx.Commit(); err != nil {
		n.t.Fatal(err)
	}
	return applied
}

func (n *notified) get(id string) *ent.Payment {
	return n.db.Ent.Payment.GetX(databasetest.AsMerchant(), id)
}

// TestNotificationsSettleChargesOnlyForward: a charge whose answer was lost is settled by the
// provider's event; one just made waits for its own request; an event that agrees changes
// nothing, and one that would move a payment back is ignored with why.
func TestNotificationsSettleChargesOnlyForward(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		old := n.now.Add(-time.Hour)
		n.payment("pay_lost_ok", state.PaymentProcessing, old)
		n.payment("pay_lost_declined", state.PaymentProcessing, old)
		n.payment("pay_young", state.PaymentProcessing, n.now.Add(-time.Second))
		n.payment("pay_ok", state.PaymentSucceeded, old)
		n.payment("pay_failed", state.PaymentFailed, old)

		if a := n.apply("memory", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_lost_ok", ProviderPaymentID: "ch_1"}); a.Ignored != "" || a.PaymentID != "pay_lost_ok" {
			t.Errorf("lost approval: %+v", a)
		}
		if p := n.get("pay_lost_ok"); p.Status != state.PaymentSucceeded || *p.ProviderPaymentID != "ch_1" {
			t.Errorf("lost approval: payment %s", p.Status)
		}
		declined := provider.ChargeResult{DeclineCode: "insufficient_funds", RawDeclineCode: "51", DeclineMessage: "Insufficient funds"}
		n.apply("memory", provider.Notification{Kind: provider.ChargeFailed, ProviderPaymentID: "ch_pay_lost_declined", Decline: declined})
		if p := n.get("pay_lost_declined"); p.Status != state.PaymentFailed || *p.FailureCode != "insufficient_funds" || *p.ProviderDeclineCode != "51" {
			t.Errorf("lost decline, found by the provider's id: payment %s %v", p.Status, p.FailureCode)
		}
		if a := n.apply("memory", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_young"}); !a.NotBefore.Equal(n.get("pay_young").CreatedAt.Add(payment.InFlightGrace)) {
			t.Errorf("young payment: %+v, want it put off until its request cannot be recording", a)
		}
		if p := n.get("pay_young"); p.Status != state.PaymentProcessing {
			t.Errorf("young payment moved to %s", p.Status)
		}
		for _, tc := range []struct {
			name   string
			n      provider.Notification
			from   string
			reason string
		}{
			{"approval again", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_ok"}, "memory", ""},
			{"failure again", provider.Notification{Kind: provider.ChargeFailed, PaymentID: "pay_failed"}, "memory", ""},
			{"late failure", provider.Notification{Kind: provider.ChargeFailed, PaymentID: "pay_ok", Decline: declined}, "memory", "does not move it back"},
			{"approval of a failed payment", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_failed"}, "memory", "refund it at memory"},
			{"unknown payment", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_nobody"}, "memory", "no payment of Paygate's is pay_nobody"},
			{"unknown charge", provider.Notification{Kind: provider.ChargeSucceeded, ProviderPaymentID: "ch_nobody"}, "memory", "memory's charge ch_nobody"},
			{"another provider's payment", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_ok"}, "stripe", "check both providers"},
			{"the failure of the provider failed over from", provider.Notification{Kind: provider.ChargeFailed, PaymentID: "pay_ok"}, "stripe", "failed over from stripe to memory"},
			{"unhandled", provider.Notification{Kind: provider.Unhandled, Reason: "not acted on"}, "memory", "not acted on"},
		} {
			before := n.get("pay_ok")
			a := n.apply(tc.from, tc.n)
			if (tc.reason == "") != (a.Ignored == "") || !strings.Contains(a.Ignored, tc.reason) {
				t.Errorf("%s: ignored %q, want %q", tc.name, a.Ignored, tc.reason)
			}
			if after := n.get("pay_ok"); after.Status != before.Status || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("%s changed the payment", tc.name)
			}
		}
		if p := n.get("pay_failed"); p.Status != state.PaymentFailed {
			t.Errorf("failed payment moved to %s", p.Status)
		}
	})
}

// TestNotificationsSettleRefunds: a pending refund succeeds or fails by the provider's word; a
// refund made at the provider is recorded once however often it is reported, within what is left
// of the payment; a refund event that contradicts a settled refund is ignored with why.
func TestNotificationsSettleRefunds(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		ctx := databasetest.AsMerchant()
		old := n.now.Add(-time.Hour)
		n.payment("pay_1", state.PaymentSucceeded, old)
		pending := func(id string, amount int64, providerID string, made time.Time) {
			create := db.Ent.Refund.Create().SetID(id).SetPaymentID("pay_1").SetAmount(amount).SetCurrency("USD").
				SetStatus(state.RefundPending).SetCreatedAt(made).SetUpdatedAt(made)
			if providerID != "" {
				create.SetProviderRefundID(providerID)
			}
			create.ExecX(ctx)
		}
		pending("re_settles", 1000, "rf_settles", old)
		pending("re_refused", 500, "rf_refused", old)
		pending("re_lost", 700, "", old)
		pending("re_young", 300, "", n.now.Add(-time.Second))
		refunds := func(notices ...provider.RefundNotice) provider.Notification {
			return provider.Notification{Kind: provider.RefundsChanged, PaymentID: "pay_1", Refunds: notices}
		}

		if a := n.apply("memory", refunds(provider.RefundNotice{RefundID: "re_young", Amount: 300, Currency: "USD", Status: provider.RefundSucceeded})); a.NotBefore.IsZero() {
			t.Errorf("a refund whose request may be recording: %+v, want it put off", a)
		}
		a := n.apply("memory", refunds(
			provider.RefundNotice{ProviderRefundID: "rf_settles", Amount: 1000, Currency: "USD", Status: provider.RefundSucceeded},
			provider.RefundNotice{ProviderRefundID: "rf_refused", Amount: 500, Currency: "USD", Status: provider.RefundFailed},
			provider.RefundNotice{RefundID: "re_lost", ProviderRefundID: "rf_lost", Amount: 700, Currency: "USD", Status: provider.RefundSucceeded},
			provider.RefundNotice{ProviderRefundID: "rf_dashboard", Amount: 2000, Currency: "USD", Status: provider.RefundSucceeded},
		))
		if a.Ignored != "" {
			t.Errorf("settling refunds: ignored %q", a.Ignored)
		}
		want := map[string]state.RefundStatus{"re_settles": state.RefundSucceeded, "re_refused": state.RefundFailed, "re_lost": state.RefundSucceeded, "re_young": state.RefundPending}
		for id, status := range want {
			if r := db.Ent.Refund.GetX(ctx, id); r.Status != status {
				t.Errorf("%s is %s, want %s", id, r.Status, status)
			}
		}
		if r := db.Ent.Refund.GetX(ctx, "re_lost"); r.ProviderRefundID == nil || *r.ProviderRefundID != "rf_lost" {
			t.Errorf("the refund whose answer was lost keeps the provider's id: %v", r.ProviderRefundID)
		}
		dashboard := db.Ent.Refund.Query().Where(refund.ProviderRefundID("rf_dashboard")).AllX(ctx)
		if p := n.get("pay_1"); len(dashboard) != 1 || dashboard[0].Status != state.RefundSucceeded || dashboard[0].Amount != 2000 ||
			p.AmountRefunded != 1000+700+2000 || p.Status != state.PaymentPartiallyRefunded {
			t.Errorf("dashboard refund %+v; payment %s with %d refunded", dashboard, p.Status, p.AmountRefunded)
		}

		// The same report again, and reports that do not fit; those that disagree with the books
		// need a person.
		for _, tc := range misfitRefundReports {
			a := n.apply("memory", refunds(tc.notice))
			if (tc.reason == "") != (a.Ignored == "") || !strings.Contains(a.Ignored, tc.reason) || a.NeedsAttention != tc.attention {
				t.Errorf("%s: ignored %q (attention %v), want %q (%v)", tc.name, a.Ignored, a.NeedsAttention, tc.reason, tc.attention)
			}
		}
		if p := n.get("pay_1"); p.AmountRefunded != 3700 || db.Ent.Refund.Query().Where(refund.StatusNEQ(state.RefundFailed)).CountX(ctx) != 4 {
			t.Errorf("the reports that did not fit changed the books: %d refunded", p.AmountRefunded)
		}

		// The rest beside the pending refund, refunded at the provider, then the pending one
		// settling, refund the payment.
		n.apply("memory", refunds(provider.RefundNotice{ProviderRefundID: "rf_rest", Amount: 6000, Currency: "USD", Status: provider.RefundSucceeded}))
		n.now = n.now.Add(time.Hour)
		n.apply("memory", refunds(provider.RefundNotice{RefundID: "re_young", ProviderRefundID: "rf_young", Amount: 300, Currency: "USD", Status: provider.RefundSucceeded}))
		if p := n.get("pay_1"); p.Status != state.PaymentRefunded || p.AmountRefunded != 10000 {
			t.Errorf("after the rest: %s with %d refunded", p.Status, p.AmountRefunded)
		}
	})
}

// misfitRefundReports are reports, after TestNotificationsSettleRefunds has settled its refunds,
// that repeat what is recorded or do not fit it; reason is why each is ignored, "" for none.
var misfitRefundReports = []struct {
	name      string
	notice    provider.RefundNotice
	reason    string
	attention bool
}{
	{"the same dashboard refund", provider.RefundNotice{ProviderRefundID: "rf_dashboard", Amount: 2000, Currency: "USD", Status: provider.RefundSucceeded}, "", false},
	{"a settled refund again", provider.RefundNotice{RefundID: "re_settles", Amount: 1000, Currency: "USD", Status: provider.RefundSucceeded}, "", false},
	{"a succeeded refund failing", provider.RefundNotice{ProviderRefundID: "rf_settles", Amount: 1000, Currency: "USD", Status: provider.RefundFailed}, "re_settles is succeeded but memory reports it failed", true},
	{"a failed refund succeeding", provider.RefundNotice{ProviderRefundID: "rf_refused", Amount: 500, Currency: "USD", Status: provider.RefundSucceeded}, "re_refused is failed but memory reports it succeeded", true},
	{"a refund of ours of another amount", provider.RefundNotice{RefundID: "re_settles", Amount: 100, Currency: "USD", Status: provider.RefundSucceeded}, "as 100, Paygate made it for 1000", true},
	{"more than is left beside the pending refund", provider.RefundNotice{ProviderRefundID: "rf_big", Amount: 6001, Currency: "USD", Status: provider.RefundSucceeded}, "more than the 6000 left", true},
	{"another currency", provider.RefundNotice{ProviderRefundID: "rf_eur", Amount: 100, Currency: "EUR", Status: provider.RefundSucceeded}, "100 EUR on payment pay_1 in USD", true},
	{"no provider id", provider.RefundNotice{Amount: 100, Currency: "USD", Status: provider.RefundSucceeded}, "cannot be told from others", true},
	{"an unknown refund that failed, recorded failed", provider.RefundNotice{ProviderRefundID: "rf_other", Amount: 100, Currency: "USD", Status: provider.RefundFailed}, "", false},
	{"an older report that it succeeded", provider.RefundNotice{ProviderRefundID: "rf_other", Amount: 100, Currency: "USD", Status: provider.RefundSucceeded}, "is failed but memory reports it succeeded", true},
}

// TestLostRefundReportedWithoutOurIDIsOurs: a refund of Paygate's whose answer was lost, reported
// by the provider without Paygate's id, is the one pending refund of that amount without a
// provider id: it settles, and is not counted a second time as a refund made at the provider.
func TestLostRefundReportedWithoutOurIDIsOurs(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		ctx := databasetest.AsMerchant()
		old := n.now.Add(-time.Hour)
		n.payment("pay_1", state.PaymentSucceeded, old)
		db.Ent.Refund.Create().SetID("re_lost").SetPaymentID("pay_1").SetAmount(3000).SetCurrency("USD").
			SetStatus(state.RefundPending).SetCreatedAt(old).SetUpdatedAt(old).ExecX(ctx)
		a := n.apply("memory", provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "ch_pay_1",
			Refunds: []provider.RefundNotice{{ProviderRefundID: "rf_1", Amount: 3000, Currency: "USD", Status: provider.RefundSucceeded}}})
		r := db.Ent.Refund.GetX(ctx, "re_lost")
		if p := n.get("pay_1"); a.Ignored != "" || r.Status != state.RefundSucceeded || *r.ProviderRefundID != "rf_1" ||
			p.AmountRefunded != 3000 || db.Ent.Refund.Query().CountX(ctx) != 1 {
			t.Errorf("%+v: refund %s, payment %d refunded; want the lost refund settled, once", a, r.Status, p.AmountRefunded)
		}
	})
}

// TestRefundReportedPendingKeepsTheProviderID: a refund whose answer was lost, reported pending by
// the provider, stays pending and keeps the provider's id, as the request keeps it from a pending
// answer; a report naming it by that id alone then settles it.
func TestRefundReportedPendingKeepsTheProviderID(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		ctx := databasetest.AsMerchant()
		old := n.now.Add(-time.Hour)
		n.payment("pay_1", state.PaymentSucceeded, old)
		db.Ent.Refund.Create().SetID("re_lost").SetPaymentID("pay_1").SetAmount(3000).SetCurrency("USD").
			SetStatus(state.RefundPending).SetCreatedAt(old).SetUpdatedAt(old).ExecX(ctx)
		report := func(notice provider.RefundNotice) payment.Applied {
			return n.apply("memory", provider.Notification{Kind: provider.RefundsChanged, PaymentID: "pay_1", Refunds: []provider.RefundNotice{notice}})
		}
		a := report(provider.RefundNotice{RefundID: "re_lost", ProviderRefundID: "rf_1", Amount: 3000, Currency: "USD", Status: provider.RefundPending})
		if r := db.Ent.Refund.GetX(ctx, "re_lost"); a.Ignored != "" || r.Status != state.RefundPending || r.ProviderRefundID == nil || *r.ProviderRefundID != "rf_1" {
			t.Errorf("%+v: refund %s with provider id %v; want it pending with rf_1", a, r.Status, r.ProviderRefundID)
		}
		report(provider.RefundNotice{ProviderRefundID: "rf_1", Amount: 3000, Currency: "USD", Status: provider.RefundSucceeded})
		if r, p := db.Ent.Refund.GetX(ctx, "re_lost"), n.get("pay_1"); r.Status != state.RefundSucceeded || p.AmountRefunded != 3000 {
			t.Errorf("refund %s, payment %d refunded; want it settled by the provider's id", r.Status, p.AmountRefunded)
		}
	})
}

// TestEventAboutAChargeNotKnownYetWaits: an event naming a charge only by the provider's id, while
// a payment at that provider whose answer was lost has no provider id yet, waits rather than
// being ignored for good; once the payment is settled it applies.
func TestEventAboutAChargeNotKnownYetWaits(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		ctx := databasetest.AsMerchant()
		old := n.now.Add(-time.Hour)
		db.Ent.Payment.Create().SetID("pay_lost").SetAmount(10000).SetCurrency("USD").SetStatus(state.PaymentProcessing).
			SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
			SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("memory").
			SetCreatedAt(old).SetUpdatedAt(old).ExecX(ctx)
		refunded := provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "ch_lost",
			Refunds: []provider.RefundNotice{{ProviderRefundID: "rf_dash", Amount: 2500, Currency: "USD", Status: provider.RefundSucceeded}}}
		if a := n.apply("memory", refunded); !a.NotBefore.After(n.now) || a.Ignored != "" {
			t.Fatalf("before the charge is known: %+v, want it to wait", a)
		}
		n.apply("memory", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_lost", ProviderPaymentID: "ch_lost"})
		if a := n.apply("memory", refunded); a.Ignored != "" || !a.NotBefore.IsZero() || n.get("pay_lost").AmountRefunded != 2500 {
			t.Errorf("once the charge is known: %+v, payment %d refunded", a, n.get("pay_lost").AmountRefunded)
		}
		// With nothing left to settle, an unknown charge is ignored.
		if a := n.apply("memory", provider.Notification{Kind: provider.Disputed, ProviderPaymentID: "ch_nobody"}); !strings.Contains(a.Ignored, "no payment") {
			t.Errorf("an unknown charge: %+v", a)
		}
	})
}

// TestDisputeIsRecordedOnce: the first dispute report is kept with its reason, on a payment in
// any status; later ones change nothing.
func TestDisputeIsRecordedOnce(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		old := n.now.Add(-time.Hour)
		n.payment("pay_1", state.PaymentSucceeded, old)
		n.payment("pay_declined", state.PaymentFailed, old)
		n.apply("memory", provider.Notification{Kind: provider.Disputed, ProviderPaymentID: "ch_pay_1", Reason: "fraudulent"})
		first := n.get("pay_1")
		n.now = n.now.Add(time.Hour)
		n.apply("memory", provider.Notification{Kind: provider.Disputed, PaymentID: "pay_1", Reason: "duplicate"})
		if p := n.get("pay_1"); p.DisputedAt == nil || !p.DisputedAt.Equal(*first.DisputedAt) || *p.DisputeReason != "fraudulent" || p.Status != state.PaymentSucceeded {
			t.Errorf("dispute: %v %v, status %s", p.DisputedAt, p.DisputeReason, p.Status)
		}
		// Disputed, so charged: recorded whatever Paygate recorded of the charge.
		if a := n.apply("memory", provider.Notification{Kind: provider.Disputed, PaymentID: "pay_declined", Reason: "fraudulent"}); a.Ignored != "" || n.get("pay_declined").DisputedAt == nil {
			t.Errorf("dispute of a declined payment: %+v", a)
		}
	})
}

// heldProvider approves every charge once the test lets it answer.
type heldProvider struct {
	providertest.Memory
	called, release chan struct{}
}

func (h heldProvider) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	close(h.called)
	<-h.release
	return h.Memory.Charge(ctx, req)
}

// TestRequestOutlivingTheGraceAnswersWithThePayment: a request slower to record the provider's
// answer than the grace events wait finds the payment settled by the provider's event, and
// answers with it, as it is, rather than an error a client would retry (charging twice).
func TestRequestOutlivingTheGraceAnswersWithThePayment(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		held := heldProvider{called: make(chan struct{}), release: make(chan struct{})}
		var mu sync.Mutex
		now := time.Now().UTC().Truncate(time.Microsecond)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		keys := idempotency.NewStore(db.Ent, fingerprintKey, clock)
		svc := payment.NewService(db, keys, only(held, clock), fingerprintKey, 99999999, clock)

		type answer struct {
			p   *ent.Payment
			err error
		}
		answered := make(chan answer, 1)
		go func() {
			p, err := svc.Create(allowed(), validInput())
			answered <- answer{p, err}
		}()
		<-held.called
		made := db.Ent.Payment.Query().OnlyX(databasetest.AsMerchant())
		mu.Lock()
		now = made.CreatedAt.Add(payment.InFlightGrace + time.Second) // the request is slow to record
		mu.Unlock()
		n := &notified{t: t, db: db, svc: svc}
		n.apply("memory", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: made.ID, ProviderPaymentID: "ch_webhook"})
		close(held.release)
		got := <-answered
		if got.err != nil {
			t.Errorf("the payment succeeded (%s), but the request that charged it answered %v", n.get(made.ID).Status, got.err)
		} else if got.p.ProviderPaymentID == nil || *got.p.ProviderPaymentID != "ch_webhook" {
			// The request's answer moves nothing: the event's record stands, read afresh.
			t.Errorf("the request answered provider id %v; want the event's record, ch_webhook", got.p.ProviderPaymentID)
		}
	})
}

// TestUnnamedRefundsAtAProviderThatCannotList: an event that says more is refunded than Paygate
// knows, naming no refunds, from a provider that cannot list them, is left as it is by
// PrepareNotification and needs a person; one that says no more than Paygate knows is ignored.
func TestUnnamedRefundsAtAProviderThatCannotList(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		n.payment("pay_unnamed", state.PaymentSucceeded, n.now.Add(-time.Hour))
		total := int64(2500)
		event := provider.Notification{Kind: provider.RefundsChanged, PaymentID: "pay_unnamed", ProviderPaymentID: "ch_pay_unnamed", RefundedTotal: &total}
		prepared, err := n.svc.PrepareNotification(context.Background(), "memory", event)
		if err != nil || len(prepared.Refunds) != 0 {
			t.Fatalf("prepared = %+v, %v; the memory provider lists no refunds", prepared, err)
		}
		if applied := n.apply("memory", prepared); !applied.NeedsAttention || !strings.Contains(applied.Ignored, "25.00") {
			t.Errorf("more refunded than known = %+v, want a person told", applied)
		}
		none := int64(0)
		event.RefundedTotal = &none
		if applied := n.apply("memory", event); applied.NeedsAttention || applied.Ignored != "the event reports no refund" {
			t.Errorf("nothing more refunded = %+v", applied)
		}
	})
}

// listingMemory is the memory provider that lists refunds, counting how often it is asked.
type listingMemory struct {
	providertest.Memory
	asked *atomic.Int32
}

func (l listingMemory) ListRefunds(context.Context, string) ([]provider.RefundNotice, error) {
	l.asked.Add(1)
	return []provider.RefundNotice{{ProviderRefundID: "re_at_provider", Amount: 2500, Currency: "USD", Status: provider.RefundSucceeded}}, nil
}

// TestUnnamedRefundsAreAskedOfAPaidPaymentOnly: the refunds an event does not name are asked of
// the provider for a paid payment, and not for one still in doubt, whose event waits.
func TestUnnamedRefundsAreAskedOfAPaidPaymentOnly(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		n := newNotified(t, db)
		lister := listingMemory{asked: &atomic.Int32{}}
		svc := payment.NewService(db, idempotency.NewStore(db.Ent, fingerprintKey, time.Now), only(lister, time.Now), fingerprintKey, 99999999, time.Now)
		total := int64(2500)
		for _, tc := range []struct {
			status state.PaymentStatus
			asked  int32
		}{{state.PaymentProcessing, 0}, {state.PaymentSucceeded, 1}} {
			id := "pay_" + string(tc.status)
			n.payment(id, tc.status, n.now.Add(-time.Minute))
			lister.asked.Store(0)
			prepared, err := svc.PrepareNotification(context.Background(), "memory",
				provider.Notification{Kind: provider.RefundsChanged, PaymentID: id, RefundedTotal: &total})
			if err != nil || lister.asked.Load() != tc.asked || len(prepared.Refunds) != int(tc.asked) {
				t.Errorf("%s: asked %d times, prepared %+v, %v", tc.status, lister.asked.Load(), prepared, err)
			}
		}
	})
}
