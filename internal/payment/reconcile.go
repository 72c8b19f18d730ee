package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// reconcileBatch bounds how many payments and refunds one pass asks providers about.
const reconcileBatch = 100

// Reconciled counts what one reconciliation pass settled and what it left for later.
type Reconciled struct {
	Payments, Refunds, Left int
}

// Reconcile asks the providers what became of the payments left processing (their answer was
// lost) and the refunds left pending (taken to settle later, or their answer lost) that have been
// in doubt longer than after, and records what they say. A provider that cannot be asked now, or
// has no look-up (Adyen reports by webhook), leaves them for its webhook or a later pass. Every
// change is conditional on the state it was read in, so servers reconciling at once, or a webhook
// arriving meanwhile, settle each one once.
func (s *Service) Reconcile(ctx context.Context, after time.Duration) (Reconciled, error) {
	var done Reconciled
	cutoff := s.now().Add(-after)
	payments, err := s.client.Payment.Query().
		Where(payment.StatusEQ(state.PaymentProcessing), payment.CreatedAtLT(cutoff)).
		Order(ent.Asc(payment.FieldCreatedAt)).Limit(reconcileBatch).All(ctx)
	if err != nil {
		return done, err
	}
	var errs []error
	for _, p := range payments {
		settled, err := s.reconcilePayment(ctx, p)
		switch {
		case err != nil:
			errs = append(errs, err)
			done.Left++
		case settled:
			done.Payments++
		default:
			done.Left++
		}
	}
	refunds, err := s.client.Refund.Query().
		Where(refund.StatusEQ(state.RefundPending), refund.CreatedAtLT(cutoff)).
		Order(ent.Asc(refund.FieldCreatedAt)).Limit(reconcileBatch).All(ctx)
	if err != nil {
		return done, errors.Join(append(errs, err)...)
	}
	for _, r := range refunds {
		settled, err := s.reconcileRefund(ctx, r)
		switch {
		case err != nil:
			errs = append(errs, err)
			done.Left++
		case settled:
			done.Refunds++
		default:
			done.Left++
		}
	}
	return done, errors.Join(errs...)
}

// lookup returns the look-up of the provider called name, or nil when it has none.
func (s *Service) lookup(name string) provider.Reconciler {
	p, _ := s.router.Provider(name)
	r, _ := p.(provider.Reconciler)
	return r
}

func (s *Service) reconcilePayment(ctx context.Context, p *ent.Payment) (bool, error) {
	lookup := s.lookup(p.Provider)
	if lookup == nil {
		return false, nil
	}
	result, found, err := lookup.LookupCharge(ctx, p.ID)
	if err != nil {
		if errors.Is(err, provider.ErrNoLookup) {
			return false, nil // its webhook settles it
		}
		return false, fmt.Errorf("looking up payment %s at %s: %w", p.ID, p.Provider, err)
	}
	by := "reconciliation:" + p.Provider
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		if err := s.keys.Resolve(ctx, tx, p.ID); err != nil {
			return err
		}
		switch {
		case !found:
			code := string(apierror.ProviderUnavailable)
			return s.move(ctx, tx, p, state.PaymentFailed, "not found at "+p.Provider, by, changes{
				failureCode:    &code,
				failureMessage: ptr("The payment provider never received the payment; nothing was charged."),
			})
		case result.Approved:
			return s.move(ctx, tx, p, state.PaymentSucceeded, "approved", by, changes{providerPaymentID: &result.ProviderPaymentID})
		default:
			return s.move(ctx, tx, p, state.PaymentFailed, result.DeclineCode, by, changes{
				providerPaymentID:   &result.ProviderPaymentID,
				providerDeclineCode: &result.RawDeclineCode,
				failureCode:         &result.DeclineCode,
				failureMessage:      &result.DeclineMessage,
			})
		}
	})
	if _, moved := errors.AsType[*apierror.Error](err); moved {
		return false, nil // settled meanwhile, by another server or the provider's webhook
	}
	return err == nil, err
}

func (s *Service) reconcileRefund(ctx context.Context, r *ent.Refund) (bool, error) {
	p, err := s.client.Payment.Get(ctx, r.PaymentID)
	if err != nil {
		return false, err
	}
	lookup := s.lookup(p.Provider)
	if lookup == nil {
		return false, nil
	}
	status, err := lookup.LookupRefund(ctx, deref(p.ProviderPaymentID), r.ID, deref(r.ProviderRefundID))
	if err != nil {
		if errors.Is(err, provider.ErrNoLookup) {
			return false, nil // its webhook settles it
		}
		return false, fmt.Errorf("looking up refund %s at %s: %w", r.ID, p.Provider, err)
	}
	by := "reconciliation:" + p.Provider
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		if err := s.keys.Resolve(ctx, tx, r.ID); err != nil {
			return err
		}
		switch status {
		case provider.RefundSucceeded:
			return s.settleRefundOutcome(ctx, tx, r, provider.RefundResult{ProviderRefundID: deref(r.ProviderRefundID)}, nil, by)
		case provider.RefundFailed:
			return settleRefund(ctx, tx, r, state.RefundFailed, func(u *ent.RefundUpdate) { u.SetFailureCode(refundDeclined) })
		case provider.RefundNotFound:
			return settleRefund(ctx, tx, r, state.RefundFailed, func(u *ent.RefundUpdate) {
				u.SetFailureCode(string(apierror.ProviderUnavailable))
			})
		}
		return errNotYet
	})
	switch _, moved := errors.AsType[*apierror.Error](err); {
	case errors.Is(err, errNotYet):
		return false, nil
	case moved:
		return false, nil // settled meanwhile, by another server or the provider's webhook
	}
	return err == nil, err
}

// errNotYet rolls back a reconciliation that found the provider still at work.
var errNotYet = errors.New("the provider has not settled it yet")

// refundDeclined is the failure code of a refund the provider took and then refused.
const refundDeclined = "refund_declined"
