package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/tracing"
)

// reconcileBatch is how many payments or refunds are read at a time, and reconcileMost how many
// one pass asks about, so a pass is bounded however much is in doubt.
const (
	reconcileBatch = 100
	reconcileMost  = 1000
)

// Reconciled counts what one reconciliation pass settled and what it left for later, and the late
// approvals it found of payments canceled while they waited.
type Reconciled struct {
	Payments, Refunds, Left, LateApprovals int
}

// Window says what a reconciliation pass asks about: what has been in doubt for InDoubtAfter,
// long enough for the call that made it to have ended; and when a provider's "no such charge or
// refund" is believed: once it has been NotFoundAfter, longer than the provider can take to show
// what reached it (Stripe's search trails new charges by up to an hour in its incidents;
// Checkout.com lists a refund only once processed).
type Window struct {
	InDoubtAfter, NotFoundAfter time.Duration
}

// Reconcile asks the providers what became of the payments left processing (their answer was
// lost) and the refunds left pending (taken to settle later, or their answer lost) in window, and
// records what they say; and whether the payments canceled while they waited, whose provider
// could still approve them, were approved after all (checkLateApprovals). Only providers that can be asked are: Adyen has no look-up, and its
// notifications settle its outcomes. An answer that cannot tell yet leaves the item for a later
// pass, which pages past it. Every change is conditional on the state it was read in, so servers
// reconciling at once, or a webhook arriving meanwhile, settle each one once.
func (s *Service) Reconcile(ctx context.Context, window Window) (Reconciled, error) {
	ctx = tenant.System(ctx) // every merchant's
	var done Reconciled
	var errs []error
	count := func(settledCount *int, settled bool, err error) {
		switch {
		case err != nil:
			errs = append(errs, err)
			done.Left++
		case settled:
			*settledCount++
		default:
			done.Left++
		}
	}
	now := s.now()
	cutoff := now.Add(-window.InDoubtAfter)
	askable := s.askable()
	s.reconciling.Lock()
	defer s.reconciling.Unlock()
	err := walkDue(&s.reconcileFrom.payment, func(after *ent.Payment) ([]*ent.Payment, error) {
		// A charge is in doubt from its creation, a capture from when it was sent.
		query := s.client.Payment.Query().
			Where(payment.StatusEQ(state.PaymentProcessing), payment.ProviderIn(askable...), payment.Or(
				payment.And(payment.PendingActionIsNil(), payment.CreatedAtLT(cutoff)),
				payment.And(payment.PendingActionEQ(payment.PendingActionCapture), payment.UpdatedAtLT(cutoff))))
		if after != nil {
			query.Where(payment.Or(payment.CreatedAtGT(after.CreatedAt), payment.And(payment.CreatedAt(after.CreatedAt), payment.IDGT(after.ID))))
		}
		return query.Order(ent.Asc(payment.FieldCreatedAt), ent.Asc(payment.FieldID)).Limit(reconcileBatch).All(ctx)
	}, func(p *ent.Payment) {
		since := p.CreatedAt
		if capturing(p) {
			since = p.UpdatedAt
		}
		ctx, work := s.workOn(ctx, "reconcile payment", p)
		settled, err := s.reconcilePayment(ctx, p, now.Sub(since) >= window.NotFoundAfter)
		work.end(ctx, "reconciled a payment with its provider", settled, err, "payment_id", p.ID, "provider", p.Provider)
		count(&done.Payments, settled, err)
	})
	if err != nil {
		return done, errors.Join(append(errs, err)...)
	}
	err = walkDue(&s.reconcileFrom.refund, func(after *ent.Refund) ([]*ent.Refund, error) {
		query := s.client.Refund.Query().
			Where(refund.StatusEQ(state.RefundPending), refund.CreatedAtLT(cutoff), refund.HasPaymentWith(payment.ProviderIn(askable...)))
		if after != nil {
			query.Where(refund.Or(refund.CreatedAtGT(after.CreatedAt), refund.And(refund.CreatedAt(after.CreatedAt), refund.IDGT(after.ID))))
		}
		return query.Order(ent.Asc(refund.FieldCreatedAt), ent.Asc(refund.FieldID)).Limit(reconcileBatch).All(ctx)
	}, func(r *ent.Refund) {
		ctx, work := s.startWork(ctx, "reconcile refund", r.TraceParent,
			attribute.String("paygate.refund.id", r.ID), attribute.String("paygate.payment.id", r.PaymentID))
		settled, err := s.reconcileRefund(ctx, r, now.Sub(r.CreatedAt) >= window.NotFoundAfter)
		work.end(ctx, "reconciled a refund with its provider", settled, err, "refund_id", r.ID, "payment_id", r.PaymentID)
		count(&done.Refunds, settled, err)
	})
	if err != nil {
		errs = append(errs, err)
	}
	done.LateApprovals, err = s.checkLateApprovals(ctx, askable)
	return done, errors.Join(append(errs, err)...)
}

// backgroundWork is one piece of work done in the background, traced in a span of its own.
type backgroundWork struct {
	name    string
	span    trace.Span
	service *Service
}

// startWork starts the span of background work called name, linked to the request or work whose
// traceparent cause is, with attributes; ctx is the work's from then on.
func (s *Service) startWork(ctx context.Context, name string, cause *string, attributes ...attribute.KeyValue) (context.Context, backgroundWork) {
	ctx, span := tracing.StartWork(ctx, name, cause, trace.SpanKindInternal, attributes...)
	return ctx, backgroundWork{name: name, span: span, service: s}
}

// workOn starts the span of background work called name on p, linked to the request that made p.
func (s *Service) workOn(ctx context.Context, name string, p *ent.Payment) (context.Context, backgroundWork) {
	return s.startWork(ctx, name, p.TraceParent, attribute.String("paygate.payment.id", p.ID), attribute.String("paygate.provider", p.Provider))
}

// end ends the work's span, marked failed by err and telling whether the work was done. Within
// the span, work done is logged as said, and work that failed by its name, with its error; each
// with attributes.
func (w backgroundWork) end(ctx context.Context, said string, done bool, err error, attributes ...any) {
	switch {
	case err != nil:
		w.service.logger().WarnContext(ctx, w.name+" failed: a later round tries again", append(attributes, "error", err.Error())...)
	case done:
		w.service.logger().InfoContext(ctx, said, attributes...)
	}
	w.span.SetAttributes(attribute.Bool("paygate.work.done", done))
	tracing.End(w.span, err)
}

// walkDue hands each item of the pages page returns, oldest first, to handle: paged by
// (created_at, id) from the item *from, so items that cannot be settled now never hide the ones
// behind. A walk that stops at reconcileMost leaves *from there for the next pass to go on from;
// one that reaches the end clears it, so the next starts over.
func walkDue[T any](from **T, page func(after *T) ([]*T, error), handle func(*T)) error {
	after := *from
	for seen := 0; seen < reconcileMost; {
		items, err := page(after)
		if err != nil {
			return err
		}
		for _, item := range items {
			handle(item)
		}
		if seen += len(items); len(items) < reconcileBatch {
			*from = nil
			return nil
		}
		after = items[len(items)-1]
	}
	*from = after
	return nil
}

// askable names the providers that can be asked what became of a charge or refund.
func (s *Service) askable() []string {
	var names []string
	for _, name := range s.router.Names() {
		if s.lookup(name) != nil {
			names = append(names, name)
		}
	}
	return names
}

// lookup returns the look-up of the provider called name, or nil when it has none.
func (s *Service) lookup(name string) provider.Reconciler {
	p, _ := s.router.Provider(name)
	r, _ := p.(provider.Reconciler)
	return r
}

// reconcilePayment settles p by what its provider says; a provider that has no charge for it is
// believed only when notFoundBelieved, and one that has not captured a capture sent to it, only
// then too: the capture reached it and was lost, or never reached it; either way the
// authorisation stands. It reports whether it settled p: one settled meanwhile, by
// another server or the provider's webhook, keeps that record.
func (s *Service) reconcilePayment(ctx context.Context, p *ent.Payment, notFoundBelieved bool) (bool, error) {
	lookup := s.lookup(p.Provider)
	if lookup == nil {
		return false, nil
	}
	result, found, err := lookup.LookupCharge(ctx, p.ID)
	var outcome chargeOutcome
	switch {
	case err != nil:
		return false, fmt.Errorf("looking up payment %s at %s: %w", p.ID, p.Provider, err)
	case capturing(p) && (!found || !result.Approved):
		return false, fmt.Errorf("payment %s is being captured, but %s does not find it authorised", p.ID, p.Provider)
	case capturing(p) && result.Captured == 0 && !result.Canceled && !notFoundBelieved:
		return false, nil // the provider may not have processed the capture yet
	case found:
		outcome = chargeAnswered(result)
	case notFoundBelieved:
		outcome = notCharged("not found at "+p.Provider, "The payment provider never received the payment; nothing was charged.")
	default:
		return false, nil // the provider may not show the charge yet
	}
	settled := false
	var v verdict
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		locked, err := lockPayment(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if capturing(locked) && (!capturing(p) || !locked.UpdatedAt.Equal(p.UpdatedAt)) {
			// Sent for capture (again) while the provider was asked: the answer is about what the
			// payment was then, and must not take this capture's place. The next pass asks anew.
			return nil
		}
		settled = locked.Status == state.PaymentProcessing && outcome.moves(locked)
		v, err = s.applyChargeOutcome(ctx, tx, locked, outcome, "reconciliation:"+p.Provider, nil)
		return err
	})
	if err == nil {
		s.tellPerson(ctx, v, p.ID)
	}
	return settled && err == nil, err
}

// reconcileRefund settles r by what its provider says. A provider that has no such refund is
// believed only when notFoundBelieved, and never when it gave the refund an id: it took it. It
// reports whether it settled r: one settled meanwhile, by another server or the provider's
// webhook, keeps that record.
func (s *Service) reconcileRefund(ctx context.Context, r *ent.Refund, notFoundBelieved bool) (bool, error) {
	p, err := s.client.Payment.Get(ctx, r.PaymentID)
	if err != nil {
		return false, err
	}
	lookup := s.lookup(p.Provider)
	if lookup == nil {
		return false, nil
	}
	status, err := lookup.LookupRefund(ctx, deref(p.ProviderPaymentID), r.ID, deref(r.ProviderRefundID))
	switch {
	case err != nil:
		return false, fmt.Errorf("looking up refund %s at %s: %w", r.ID, p.Provider, err)
	case status == provider.RefundNotFound && r.ProviderRefundID != nil:
		return false, fmt.Errorf("refund %s: %s does not find its refund %s, which it took", r.ID, p.Provider, *r.ProviderRefundID)
	case status == provider.RefundNotFound && !notFoundBelieved, status == provider.RefundPending:
		return false, nil // a later pass asks again
	}
	settled := false
	var v verdict
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		// The payment's lock before its refund is read, in the order every writer takes them.
		locked, err := lockPayment(ctx, tx, r.PaymentID)
		if err != nil {
			return err
		}
		current, err := tx.Refund.Get(ctx, r.ID)
		if err != nil {
			return err
		}
		settled = current.Status == state.RefundPending
		v, err = s.applyRefundOutcome(ctx, tx, locked, current, refundReported(status, ""), "reconciliation:"+p.Provider)
		return err
	})
	if err == nil {
		s.tellPerson(ctx, v, p.ID)
	}
	return settled && err == nil, err
}
