package payment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tracing"
)

const MaxRefundReason = 500

// MaxRefunds is the most refunds one payment takes, failed ones included, so that a payment's
// refunds and its status history are lists of known length, which GraphQL cost estimates rely on.
const MaxRefunds = 100

// MaxStatusChanges is the longest status history of a payment none of whose captures was given
// back: pending and processing (2); waiting for the shopper, back to processing and authorised
// (3: a payment waits for its shopper once, see chargeOutcome.moves); sent for capture and
// captured (2); then one move per refund that succeeds. A capture the provider refused, or that
// reconciliation found it never took, gives the authorisation back, two moves more each time, and
// nothing bounds how often a merchant asks again: for such a payment GraphQL's cost estimate,
// which relies on this, is low.
const MaxStatusChanges = 7 + MaxRefunds

// RefundInput asks to give back Amount of a payment, or all that is left when Amount is nil.
type RefundInput struct {
	PaymentID string
	Amount    *money.Decimal
	Reason    *string
	// IdempotencyKey, when not nil, makes a retry with the same key and input answer with this
	// call's outcome instead of refunding again.
	IdempotencyKey *string
}

// meaning is what an idempotency key's fingerprint is taken of (see CreateInput's).
func (in RefundInput) meaning() any {
	var amount *string
	if in.Amount != nil {
		amount = ptr(in.Amount.Normalized())
	}
	return struct {
		PaymentID string
		Amount    *string
		Reason    *string
	}{in.PaymentID, amount, in.Reason}
}

// Refund gives back part or all of what a succeeded payment captured. The refund is recorded as pending and
// its amount counted against the payment before the provider is asked, under the payment's row
// lock, so concurrent refunds can never together exceed what was paid.
func (s *Service) Refund(ctx context.Context, in RefundInput) (*ent.Refund, error) {
	if err := auth.Authorize(ctx, auth.RefundPayment); err != nil {
		return nil, err
	}
	key, err := s.keys.For(ctx, auth.RefundPayment, in.IdempotencyKey, in.meaning())
	if err != nil {
		return nil, err
	}
	if in.Reason != nil && utf8.RuneCountInString(*in.Reason) > MaxRefundReason {
		return replayOr(ctx, s, key, s.refundOf, apierror.ForParam(apierror.InvalidRequest, "reason", fmt.Sprintf("reason must be at most %d characters", MaxRefundReason)))
	}
	ctx = context.WithoutCancel(ctx)
	p, created, earlier, err := s.recordPendingRefund(ctx, key, in)
	switch {
	case err != nil:
		return nil, err
	case earlier != nil:
		return answer(ctx, *earlier, s.refundOf)
	}
	defer s.settleOnPanic(ctx, key)

	result, err := s.refundAt(ctx, p.Provider, provider.RefundRequest{
		RefundID:          created.ID,
		ProviderPaymentID: deref(p.ProviderPaymentID),
		Amount:            money.Amount{Minor: created.Amount, Currency: created.Currency},
	})
	if err != nil && !errors.Is(err, provider.ErrUnavailable) {
		// The outcome is unknown: the refund stays pending, holding its amount, until it is
		// reconciled with the provider; it is never refunded again.
		return nil, s.endWith(ctx, key, fmt.Errorf("refunding %s: %v", created.ID, err))
	}
	return s.recordRefund(ctx, key, created, refundAnswered(result, err))
}

// recordPendingRefund records a pending refund of in's payment, with the claim of key, and returns
// the payment and the refund. The key is claimed before the payment is read, so a retry replays
// even when the payment can no longer be refunded (this call refunded all of it). When an earlier
// call has the key, nothing is written and that call's outcome is returned instead.
func (s *Service) recordPendingRefund(ctx context.Context, key *idempotency.Key, in RefundInput) (*ent.Payment, *ent.Refund, *idempotency.Outcome, error) {
	var p *ent.Payment
	var created *ent.Refund
	earlier, err := s.claimAndWrite(ctx, key, prefixid.New("re"), func(tx *ent.Tx, id string) error {
		var err error
		if p, err = lockPayment(ctx, tx, in.PaymentID); err != nil {
			return err
		}
		amount, err := s.refundable(ctx, tx, p, in.Amount)
		if err != nil {
			return err
		}
		created, err = tx.Refund.Create().
			SetID(id).
			SetMerchantID(p.MerchantID).
			SetPaymentID(p.ID).
			SetAmount(amount.Minor).
			SetCurrency(p.Currency).
			SetStatus(state.RefundPending).
			SetNillableReason(in.Reason).
			SetNillableTraceParent(tracing.Cause(ctx)).
			SetCreatedAt(s.now()).SetUpdatedAt(s.now()).
			Save(ctx)
		return err
	})
	return p, created, earlier, err
}

// refundable checks that payment p, read under its lock in tx, can be refunded the amount asked,
// or all that is left when asked is nil, and returns that amount. What is left counts the refunds
// still pending, as they may yet go through.
func (s *Service) refundable(ctx context.Context, tx *ent.Tx, p *ent.Payment, asked *money.Decimal) (money.Amount, error) {
	switch {
	case p.Status == state.PaymentRequiresCapture:
		return money.Amount{}, apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s is authorised and not captured: nothing was taken to refund; cancel it to release the authorisation", p.ID))
	case !p.Status.Refundable():
		return money.Amount{}, apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s is %s; only a succeeded or partially refunded payment can be refunded", p.ID, p.Status))
	}
	refunds, err := tx.Refund.Query().Where(refund.PaymentID(p.ID)).
		Select(refund.FieldStatus, refund.FieldAmount).All(ctx)
	if err != nil {
		return money.Amount{}, err
	}
	if len(refunds) >= MaxRefunds {
		return money.Amount{}, apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s has had %d refunds, the most one payment takes", p.ID, MaxRefunds))
	}
	left := p.AmountCaptured - p.AmountRefunded
	for _, r := range refunds {
		if r.Status == state.RefundPending {
			left -= r.Amount
		}
	}
	amount, err := refundAmount(asked, p.Currency, left)
	if err != nil {
		return money.Amount{}, err
	}
	// A provider that counts the currency coarser than ISO 4217 (Adyen's whole escudos)
	// cannot be sent every amount: refused here, before a refund is recorded to fail.
	if charger, ok := s.router.Provider(p.Provider); ok {
		if err := provider.CheckAmount(charger, amount); err != nil {
			return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", err.Error())
		}
	}
	return amount, nil
}

// recordRefund records what the provider answered for refund created and settles key by it: the
// refund as recorded answers the call.
func (s *Service) recordRefund(ctx context.Context, key *idempotency.Key, created *ent.Refund, outcome refundOutcome) (*ent.Refund, error) {
	err := s.recordOutcome(ctx, func(tx *ent.Tx) error {
		p, err := lockPayment(ctx, tx, created.PaymentID)
		if err != nil {
			return err
		}
		// Read afresh under the payment's lock: the provider's event may have settled the refund
		// while this request was slow to record it; its record, from the same provider, stands.
		r, err := tx.Refund.Get(ctx, created.ID)
		if err != nil {
			return err
		}
		if _, err := s.applyRefundOutcome(ctx, tx, p, r, outcome, actorOf(ctx)); err != nil {
			return err
		}
		if key != nil {
			if err := s.keys.Settle(ctx, tx, key, nil); err != nil {
				return err
			}
		}
		*created = *r
		return nil
	})
	if err != nil {
		// Not wrapped: the provider has been asked, so whatever went wrong recording its answer is
		// ours, a server error, whatever the cause says.
		return nil, s.endWith(ctx, key, fmt.Errorf("recording the outcome of refund %s (provider id %q): %v", created.ID, outcome.providerRefundID, err))
	}
	return created.Unwrap(), nil // detached from the committed transaction, so edges load
}

// refundOf loads the refund an earlier call with an idempotency key made, for its replay.
func (s *Service) refundOf(ctx context.Context, id string) (*ent.Refund, error) {
	return s.client.Refund.Get(ctx, id)
}

// refundAt asks the provider that made the charge to refund it.
func (s *Service) refundAt(ctx context.Context, name string, req provider.RefundRequest) (provider.RefundResult, error) {
	charger, ok := s.router.Provider(name)
	if !ok {
		return provider.RefundResult{}, fmt.Errorf("%w: the payment's provider %q is not configured on this server", provider.ErrUnavailable, name)
	}
	callCtx, cancel := context.WithTimeout(ctx, providerCallLimit)
	defer cancel()
	start := s.now()
	result, err := charger.Refund(callCtx, req)
	s.router.ObserveRefund(name, err, s.now().Sub(start))
	return result, err
}

// refundAmount reads the requested amount, or takes all that is left, and checks it fits.
func refundAmount(text *money.Decimal, currency string, left int64) (money.Amount, error) {
	if text == nil {
		if left <= 0 {
			return money.Amount{}, apierror.New(apierror.RefundExceedsPayment, "nothing is left to refund")
		}
		return money.Amount{Minor: left, Currency: currency}, nil
	}
	amount, err := money.Parse(string(*text), currency)
	if err != nil {
		return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", err.Error())
	}
	if amount.Minor <= 0 {
		return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", "amount must be greater than zero")
	}
	if amount.Minor > left {
		return money.Amount{}, apierror.ForParam(apierror.RefundExceedsPayment, "amount",
			fmt.Sprintf("amount %s is more than the %s left to refund", amount, money.Amount{Minor: max(left, 0), Currency: currency}))
	}
	return amount, nil
}

// lockPayment reads a payment inside tx after taking its row lock, so that what changes one
// payment (its refunds, its provider's events) runs one after another, on every server. The lock
// changes nothing, so an event that turns out to change nothing leaves the payment as it was.
func lockPayment(ctx context.Context, tx *ent.Tx, id string) (*ent.Payment, error) {
	p, err := tx.Payment.Query().Where(payment.ID(id), database.ForUpdate).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no payment has the id "+id)
	}
	return p, err
}

// updateRefund writes outcome o onto pending refund r, with the provider's id when r has none
// yet, and updates r to match; a refund settled tells merchants so. The UPDATE is conditional on
// the status r was read with, so of two concurrent writes one fails instead of both applying.
func (s *Service) updateRefund(ctx context.Context, tx *ent.Tx, r *ent.Refund, o refundOutcome) error {
	if o.status != r.Status && !r.Status.CanMoveTo(o.status) {
		return apierror.New(apierror.InvalidState, fmt.Sprintf("a %s refund cannot become %s", r.Status, o.status))
	}
	update := tx.Refund.Update().Where(refund.ID(r.ID), refund.StatusEQ(r.Status)).SetStatus(o.status)
	if o.failureCode != "" {
		update.SetFailureCode(o.failureCode)
	}
	if r.ProviderRefundID == nil && o.providerRefundID != "" {
		update.SetProviderRefundID(o.providerRefundID)
	}
	n, err := update.Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return apierror.New(apierror.InvalidState, fmt.Sprintf("refund %s changed while being updated", r.ID))
	}
	fresh, err := tx.Refund.Get(ctx, r.ID)
	if err != nil {
		return err
	}
	settled := fresh.Status != r.Status
	*r = *fresh
	if !settled {
		return nil
	}
	return s.refundSettled(ctx, tx, r)
}

// refundSettled tells merchants that refund r succeeded or failed, within tx.
func (s *Service) refundSettled(ctx context.Context, tx *ent.Tx, r *ent.Refund) error {
	eventType := event.RefundSucceeded
	if r.Status == state.RefundFailed {
		eventType = event.RefundFailed
	}
	return s.Events.Record(ctx, tx, r.MerchantID, eventType, r.ID, RefundObjectOf(r), s.now())
}

// GetRefund returns one refund.
func (s *Service) GetRefund(ctx context.Context, id string) (*ent.Refund, error) {
	if err := auth.Authorize(ctx, auth.GetRefund); err != nil {
		return nil, err
	}
	r, err := s.client.Refund.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no refund has the id "+id)
	}
	return r, err
}

// GetRefunds returns those of the refunds ids that the principal may read, in no set order: one
// read for a page of things that name refunds, such as events.
func (s *Service) GetRefunds(ctx context.Context, ids []string) ([]*ent.Refund, error) {
	if err := auth.Authorize(ctx, auth.GetRefund); err != nil {
		return nil, err
	}
	return s.client.Refund.Query().Where(refund.IDIn(ids...)).All(ctx)
}

// Oldest sorts a payment's refunds or history entries oldest first, as ent loads edges in no
// particular order: by time, then by ID, which within one server sorts by creation (prefixid).
func Oldest[T any](items []T, key func(T) (time.Time, string)) []T {
	slices.SortFunc(items, func(a, b T) int {
		aTime, aID := key(a)
		bTime, bID := key(b)
		if c := aTime.Compare(bTime); c != 0 {
			return c
		}
		return strings.Compare(aID, bID)
	})
	return items
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
