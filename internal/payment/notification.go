package payment

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/tracing"
)

// InFlightGrace is how long after a payment or refund was made its own request may still be
// recording the provider's answer: longer than the provider call and the retried write of its
// outcome together. A provider event about it that arrives sooner waits until then, so the
// request and the event never race to record one outcome; by then the request has recorded it
// (and the event agrees) or lost the answer (and the event settles it).
const InFlightGrace = providerCallLimit + 40*time.Second

// Applied is what applying a provider's notification did.
type Applied struct {
	// PaymentID is the payment the notification is about, "" when none was found.
	PaymentID string
	// Ignored says why nothing changed, "" when the notification was applied or agreed with
	// what was already recorded.
	Ignored string
	// NeedsAttention means the provider and Paygate's books disagree in a way only a person can
	// settle (money taken for a failed payment, a refund of another amount): Ignored says what.
	NeedsAttention bool
	// NotBefore, when set, means the notification cannot be applied yet: the payment or refund
	// may still be recorded by its own request, or the payment it names is not known yet. The
	// caller rolls back whatever the call wrote and applies it again then.
	NotBefore time.Time
}

// verdict is what applying one part of a notification came to.
type verdict struct {
	ignored   string
	attention bool
	notBefore time.Time
}

func agreed() verdict                  { return verdict{} }
func ignore(why string) verdict        { return verdict{ignored: why} }
func attention(why string) verdict     { return verdict{ignored: why, attention: true} }
func waitUntil(when time.Time) verdict { return verdict{notBefore: when} }
func (v verdict) waits() bool          { return !v.notBefore.IsZero() }
func (v verdict) applied(to string) Applied {
	return Applied{PaymentID: to, Ignored: v.ignored, NeedsAttention: v.attention, NotBefore: v.notBefore}
}

// unknownChargeWait is how often an event naming a charge Paygate does not know yet is tried
// again while a payment at that provider could still turn out to be that charge, and
// unknownChargeWindow how long after its creation such a payment is waited for: as long as
// reconciliation takes to settle it.
const (
	unknownChargeWait   = 5 * time.Minute
	unknownChargeWindow = 24 * time.Hour
)

// ApplyNotification records within tx what providerName's notification n says happened to one of
// its payments, through the payment and refund lifecycles only: a state never moves backwards, so
// an event that comes late or twice changes nothing. The caller commits tx with its own record of
// the event, so an event is applied exactly once.
func (s *Service) ApplyNotification(ctx context.Context, tx *ent.Tx, providerName string, n provider.Notification) (Applied, error) {
	ctx = tenant.System(ctx) // a provider's notice names its payment by the provider's id, whoever's it is
	if n.Kind == provider.Unhandled {
		return Applied{Ignored: n.Reason}, nil
	}
	if !storable(n) {
		return attention("the event's ids are not text Paygate can store or look up: check it at " + providerName).applied(""), nil
	}
	now := s.now()
	p, err := findPayment(ctx, tx.Payment, providerName, n)
	if err != nil {
		return Applied{}, err
	}
	if p == nil {
		v, err := s.unknownPayment(ctx, tx, providerName, n, now)
		return v.applied(""), err
	}
	if p.Provider != providerName {
		if n.Kind == provider.ChargeFailed {
			// The provider the payment failed over from: it failed there, as the failover said.
			return ignore(fmt.Sprintf("payment %s failed over from %s to %s", p.ID, providerName, p.Provider)).applied(p.ID), nil
		}
		// A failover moves a payment on only when the provider did nothing.
		return attention(fmt.Sprintf("payment %s was charged through %s, yet %s reports on it: check both providers", p.ID, p.Provider, providerName)).applied(p.ID), nil
	}
	if p, err = lockPayment(ctx, tx, p.ID); err != nil {
		return Applied{}, err
	}
	// A capture in flight is answered "taken" at most, so its request records nothing its
	// provider's event could race.
	if p.Status == state.PaymentProcessing && p.PendingAction == nil && now.Sub(p.CreatedAt) < InFlightGrace {
		return waitUntil(p.CreatedAt.Add(InFlightGrace)).applied(p.ID), nil
	}
	actor := "webhook:" + providerName
	var v verdict
	switch n.Kind {
	case provider.ChargeSucceeded, provider.ChargeFailed:
		if capturing(p) {
			v = overCapture(p, "the event")
			break
		}
		v, err = s.applyChargeOutcome(ctx, tx, p, chargeReported(n), actor, nil)
	case provider.Captured:
		v, err = s.captureReported(ctx, tx, p, n, actor)
	case provider.CaptureFailed:
		v, err = s.captureRefused(ctx, tx, p, n.Reason, actor)
	case provider.Canceled:
		v, err = s.cancelReported(ctx, tx, p, actor)
	case provider.CancelFailed:
		v, err = s.cancelRefused(ctx, tx, p, n.Reason)
	case provider.Disputed:
		v, err = s.disputed(ctx, tx, p, n, now)
	case provider.RefundsChanged:
		if p.Status == state.PaymentCanceled && p.ReversalStatus != nil && p.ReversalRefund > 0 {
			// A canceled payment's one refund: Paygate's, of the provider's late approval.
			v, err = s.reversalRefundsReported(ctx, tx, p, n)
			break
		}
		v, err = s.refundsChanged(ctx, tx, p, n, actor, now)
	default:
		v = ignore(fmt.Sprintf("notification of kind %q is not acted on", n.Kind))
	}
	return v.applied(p.ID), err
}

// unknownPayment is the verdict on a notification about no payment Paygate knows: one named only
// by the provider's id of the charge may be about a payment whose answer was lost, whose id is
// not recorded yet, so it waits while such a payment is still being settled; else it is ignored.
func (s *Service) unknownPayment(ctx context.Context, tx *ent.Tx, providerName string, n provider.Notification, now time.Time) (verdict, error) {
	why := "no payment of Paygate's is " + describeReference(providerName, n)
	if n.PaymentID != "" || n.ProviderPaymentID == "" {
		return ignore(why), nil
	}
	unsettled, err := tx.Payment.Query().Where(payment.Provider(providerName), payment.StatusEQ(state.PaymentProcessing),
		payment.ProviderPaymentIDIsNil(), payment.CreatedAtGT(now.Add(-unknownChargeWindow))).Exist(ctx)
	if err != nil || !unsettled {
		return ignore(why), err
	}
	return waitUntil(now.Add(unknownChargeWait)), nil
}

// findPayment finds the payment a notification names: by Paygate's id when it carries one, else
// by the provider's id of the charge. It returns nil when there is none.
func findPayment(ctx context.Context, payments *ent.PaymentClient, providerName string, n provider.Notification) (*ent.Payment, error) {
	var query *ent.PaymentQuery
	switch {
	case n.PaymentID != "":
		query = payments.Query().Where(payment.ID(n.PaymentID))
	case n.ProviderPaymentID != "":
		query = payments.Query().Where(payment.Provider(providerName), payment.ProviderPaymentID(n.ProviderPaymentID))
	default:
		return nil, nil
	}
	p, err := query.First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

func describeReference(providerName string, n provider.Notification) string {
	switch {
	case n.PaymentID != "":
		return n.PaymentID
	case n.ProviderPaymentID != "":
		return providerName + "'s charge " + n.ProviderPaymentID
	}
	return "named by the event"
}

// chargeReported is the outcome of a charge that a provider's event reports.
func chargeReported(n provider.Notification) chargeOutcome {
	if n.Kind == provider.ChargeSucceeded {
		return chargeAnswered(provider.ChargeResult{Approved: true, ProviderPaymentID: n.ProviderPaymentID})
	}
	declined := n.Decline
	declined.Approved, declined.ProviderPaymentID = false, n.ProviderPaymentID
	return chargeAnswered(declined)
}

// disputed records the cardholder's dispute of a payment, once, whatever its status: the
// provider says money was taken and is being claimed back.
func (s *Service) disputed(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, now time.Time) (verdict, error) {
	if p.DisputedAt != nil {
		return agreed(), nil
	}
	reason := clean(n.Reason, 500)
	if err := tx.Payment.UpdateOneID(p.ID).SetDisputedAt(now).SetDisputeReason(reason).SetUpdatedAt(now).Exec(ctx); err != nil {
		return verdict{}, err
	}
	p.DisputedAt, p.DisputeReason, p.UpdatedAt = &now, &reason, now
	return agreed(), s.Events.Record(ctx, tx, p.MerchantID, event.DisputeCreated, p.ID, ObjectOf(p), now)
}

// refundsChanged settles each refund the notification reports: a pending refund of Paygate's
// succeeds or fails; one made at the provider is recorded as a refund here. What it cannot apply
// it says why; it applies the rest.
func (s *Service) refundsChanged(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, actor string, now time.Time) (verdict, error) {
	if refundsUnnamed(p, n) {
		return attention(fmt.Sprintf("the provider reports %s of payment %s refunded, more than Paygate knows, and names no refunds Paygate could ask for: check it at %s",
			money.Amount{Minor: *n.RefundedTotal, Currency: p.Currency}, p.ID, p.Provider)), nil
	}
	if len(n.Refunds) == 0 {
		return ignore("the event reports no refund"), nil
	}
	var whys []string
	needsAttention := false
	for _, notice := range n.Refunds {
		v, err := s.refundChanged(ctx, tx, p, notice, actor, now)
		switch {
		case err != nil:
			return verdict{}, err
		case v.waits():
			return v, nil
		case v.ignored != "":
			whys = append(whys, v.ignored)
			needsAttention = needsAttention || v.attention
		}
	}
	return verdict{ignored: strings.Join(whys, "; "), attention: needsAttention}, nil
}

func (s *Service) refundChanged(ctx context.Context, tx *ent.Tx, p *ent.Payment, notice provider.RefundNotice, actor string, now time.Time) (verdict, error) {
	if notice.Amount <= 0 || !strings.EqualFold(notice.Currency, p.Currency) {
		return attention(fmt.Sprintf("%s reports a refund %s of %d %s on payment %s in %s", p.Provider, clean(notice.ProviderRefundID, 100), notice.Amount, clean(notice.Currency, 10), p.ID, p.Currency)), nil
	}
	r, err := findRefund(ctx, tx, p.ID, notice)
	if err != nil {
		return verdict{}, err
	}
	if r == nil {
		return s.unknownRefund(ctx, tx, p, notice, actor, now)
	}
	if r.Status == state.RefundPending && r.ProviderRefundID == nil && now.Sub(r.CreatedAt) < InFlightGrace {
		return waitUntil(r.CreatedAt.Add(InFlightGrace)), nil
	}
	if notice.Amount != r.Amount {
		return attention(fmt.Sprintf("%s reports refund %s as %d, Paygate made it for %d: check it at %s", p.Provider, r.ID, notice.Amount, r.Amount, p.Provider)), nil
	}
	return s.applyRefundOutcome(ctx, tx, p, r, refundReported(notice.Status, notice.ProviderRefundID), actor)
}

// findRefund finds the refund of payment paymentID a notice names: by the provider's id, else by
// Paygate's. It returns nil when there is none.
func findRefund(ctx context.Context, tx *ent.Tx, paymentID string, notice provider.RefundNotice) (*ent.Refund, error) {
	var named []*ent.Refund
	var err error
	if notice.ProviderRefundID != "" {
		named, err = tx.Refund.Query().Where(refund.PaymentID(paymentID), refund.ProviderRefundID(notice.ProviderRefundID)).All(ctx)
	}
	if err == nil && len(named) == 0 && notice.RefundID != "" {
		named, err = tx.Refund.Query().Where(refund.PaymentID(paymentID), refund.ID(notice.RefundID)).All(ctx)
	}
	if err != nil || len(named) == 0 {
		return nil, err
	}
	return named[0], nil
}

// unknownRefund handles a refund Paygate has no record of by either id. It may be one of
// Paygate's whose answer was lost, reported without Paygate's id: the one pending refund of the
// same amount that has no provider id yet is taken to be it. Otherwise it was made at the
// provider, outside Paygate (its dashboard), and is recorded: succeeded, counted against the
// payment; failed, so that an older report of it is not believed after.
func (s *Service) unknownRefund(ctx context.Context, tx *ent.Tx, p *ent.Payment, notice provider.RefundNotice, actor string, now time.Time) (verdict, error) {
	if notice.ProviderRefundID == "" {
		return attention(fmt.Sprintf("a refund of payment %s without %s's id cannot be told from others", p.ID, p.Provider)), nil
	}
	refunds, err := tx.Refund.Query().Where(refund.PaymentID(p.ID)).All(ctx)
	if err != nil {
		return verdict{}, err
	}
	var unnamed []*ent.Refund
	pending := int64(0)
	for _, r := range refunds {
		if r.Status != state.RefundPending {
			continue
		}
		pending += r.Amount
		if r.ProviderRefundID == nil && r.Amount == notice.Amount {
			unnamed = append(unnamed, r)
		}
	}
	switch {
	case len(unnamed) == 1:
		if now.Sub(unnamed[0].CreatedAt) < InFlightGrace {
			return waitUntil(unnamed[0].CreatedAt.Add(InFlightGrace)), nil
		}
		return s.applyRefundOutcome(ctx, tx, p, unnamed[0], refundReported(notice.Status, notice.ProviderRefundID), actor)
	case len(unnamed) > 1:
		return attention(fmt.Sprintf("%s's refund %s of %d may be any of payment %s's %d pending refunds of that amount: check it at %s",
			p.Provider, notice.ProviderRefundID, notice.Amount, p.ID, len(unnamed), p.Provider)), nil
	case notice.Status == provider.RefundPending:
		return agreed(), nil // recorded once it settles
	case len(refunds) >= MaxRefunds:
		return attention(fmt.Sprintf("payment %s has had %d refunds, the most one payment takes; %s's refund %s is not recorded", p.ID, MaxRefunds, p.Provider, notice.ProviderRefundID)), nil
	case notice.Status == provider.RefundFailed:
		r, err := tx.Refund.Create().SetID(prefixid.New("re")).SetMerchantID(p.MerchantID).SetPaymentID(p.ID).SetAmount(notice.Amount).SetCurrency(p.Currency).
			SetStatus(state.RefundFailed).SetFailureCode(refundDeclined).SetProviderRefundID(notice.ProviderRefundID).
			SetReason("made at " + p.Provider).SetNillableTraceParent(tracing.Cause(ctx)).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return verdict{}, err
		}
		return agreed(), s.refundSettled(ctx, tx, r)
	case p.Status == state.PaymentProcessing && now.Sub(p.CreatedAt) < unknownChargeWindow:
		// Refunded, so charged: the payment settles soon, by its own event or reconciliation.
		return waitUntil(now.Add(unknownChargeWait)), nil
	case !p.Status.Refundable():
		return attention(fmt.Sprintf("payment %s is %s; %s's refund %s cannot be counted against it: check it at %s", p.ID, p.Status, p.Provider, notice.ProviderRefundID, p.Provider)), nil
	case notice.Amount > p.AmountCaptured-p.AmountRefunded-pending:
		return attention(fmt.Sprintf("%s's refund %s of %d is more than the %d left of payment %s beside its pending refunds: check it at %s",
			p.Provider, notice.ProviderRefundID, notice.Amount, p.AmountCaptured-p.AmountRefunded-pending, p.ID, p.Provider)), nil
	}
	r, err := tx.Refund.Create().
		SetID(prefixid.New("re")).
		SetMerchantID(p.MerchantID).
		SetPaymentID(p.ID).
		SetAmount(notice.Amount).
		SetCurrency(p.Currency).
		SetStatus(state.RefundPending).
		SetProviderRefundID(notice.ProviderRefundID).
		SetReason("made at " + p.Provider).
		SetNillableTraceParent(tracing.Cause(ctx)).
		SetCreatedAt(now).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return verdict{}, err
	}
	return s.applyRefundOutcome(ctx, tx, p, r, refundReported(notice.Status, notice.ProviderRefundID), actor)
}

// storable reports whether every id n carries is text a column holds: bounded, valid UTF-8,
// without NUL. A signed event can carry anything.
func storable(n provider.Notification) bool {
	ids := []string{n.PaymentID, n.ProviderPaymentID}
	for _, r := range n.Refunds {
		ids = append(ids, r.RefundID, r.ProviderRefundID)
	}
	for _, id := range ids {
		if len(id) > 200 || id != clean(id, 200) {
			return false
		}
	}
	return true
}

// clean makes provider text fit a column: valid UTF-8 without NUL (which PostgreSQL's text
// refuses), at most most runes.
func clean(s string, most int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if runes := []rune(s); len(runes) > most {
		return string(runes[:most])
	}
	return s
}

// refundsUnnamed reports whether n says more of p is refunded than p records, without naming the
// refunds: Stripe's charge.refunded since API version 2022-11-15, for a refund made in its
// dashboard whose own event was lost or not subscribed to.
func refundsUnnamed(p *ent.Payment, n provider.Notification) bool {
	return n.Kind == provider.RefundsChanged && len(n.Refunds) == 0 && n.RefundedTotal != nil && *n.RefundedTotal > p.AmountRefunded
}

// PrepareNotification completes n, before the transaction that applies it, with what only the
// provider can tell: the refunds of an event that says more is refunded than Paygate knows
// without naming them, asked of the provider if it can list them. Anything else is left as it
// is, for ApplyNotification to judge.
func (s *Service) PrepareNotification(ctx context.Context, providerName string, n provider.Notification) (provider.Notification, error) {
	ctx = tenant.System(ctx)
	if n.Kind != provider.RefundsChanged || len(n.Refunds) > 0 || n.RefundedTotal == nil || !storable(n) {
		return n, nil
	}
	p, err := findPayment(ctx, s.client.Payment, providerName, n)
	// Only a paid payment has refunds to ask for: the event of one still in doubt waits for it
	// to settle, and is not to ask the provider again each time it waits.
	if err != nil || p == nil || p.Provider != providerName || !slices.Contains(state.PaidStatuses(), p.Status) || !refundsUnnamed(p, n) {
		return n, err
	}
	chosen, _ := s.router.Provider(providerName)
	lister, ok := chosen.(provider.RefundLister)
	charge := cmp.Or(n.ProviderPaymentID, deref(p.ProviderPaymentID))
	if !ok || charge == "" {
		return n, nil
	}
	ctx, cancel := context.WithTimeout(ctx, providerCallLimit)
	defer cancel()
	if n.Refunds, err = lister.ListRefunds(ctx, charge); err != nil {
		return n, fmt.Errorf("listing the refunds of payment %s at %s: %w", p.ID, providerName, err)
	}
	return n, nil
}
