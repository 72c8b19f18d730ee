package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// A payment made with capture_method manual stops at requires_capture: its amount is authorised
// and held on the card. The merchant captures all or part of it once, or cancels it; one left
// until capture_before is canceled as expired. A request claims its capture or cancellation on
// the payment (pending_action) before it asks the provider, so of two at once, on any servers,
// one goes ahead and the other is refused.

// DefaultCaptureWindow is how long an authorisation waits for its capture by default: 7 days, as
// long as the card networks hold most online authorisations.
const DefaultCaptureWindow = 7 * 24 * time.Hour

// captureWindow is how long a new authorisation waits for its capture.
func (s *Service) captureWindow() time.Duration {
	if s.CaptureWindow != nil {
		return s.CaptureWindow()
	}
	return DefaultCaptureWindow
}

// CaptureInput asks to capture Amount of a payment's authorisation, or all of it when nil.
type CaptureInput struct {
	PaymentID      string
	Amount         *money.Decimal
	IdempotencyKey *string
}

func (in CaptureInput) meaning() any {
	var amount *string
	if in.Amount != nil {
		amount = ptr(in.Amount.Normalized())
	}
	return struct {
		PaymentID string
		Amount    *string
	}{in.PaymentID, amount}
}

// CancelInput asks to cancel a payment that is authorised or waiting for the shopper, for
// Reason (requested_by_customer when nil).
type CancelInput struct {
	PaymentID      string
	Reason         *state.CancellationReason
	IdempotencyKey *string
}

func (in CancelInput) meaning() any {
	return struct {
		PaymentID string
		Reason    *state.CancellationReason
	}{in.PaymentID, in.Reason}
}

// captureKey and cancelKey are the idempotency keys a payment's capture and cancellation are sent
// to its provider with: one of each per payment, so a retry, by the client or by the expiry loop,
// never captures or voids twice.
func captureKey(paymentID string) string { return "capture_" + paymentID }
func cancelKey(paymentID string) string  { return "cancel_" + paymentID }

// Capture captures all or part of an authorised payment. It answers the payment: succeeded, or
// processing while a provider that confirms captures later (Adyen, Checkout.com) does so, or
// while the provider's answer was lost.
func (s *Service) Capture(ctx context.Context, in CaptureInput) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.CapturePayment); err != nil {
		return nil, err
	}
	key, err := s.keys.For(ctx, auth.CapturePayment, in.IdempotencyKey, in.meaning())
	if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	var p *ent.Payment
	var amount money.Amount
	earlier, err := s.claimAndWrite(ctx, key, in.PaymentID, func(tx *ent.Tx, id string) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		if amount, err = s.capturable(p, in.Amount); err != nil {
			return err
		}
		return s.move(ctx, tx, p, state.PaymentProcessing, "capture of "+amount.String()+" sent to "+p.Provider, actorOf(ctx),
			changes{pending: ptr(payment.PendingActionCapture), captureRequested: &amount.Minor})
	})
	switch {
	case err != nil:
		return nil, err
	case earlier != nil:
		return answer(ctx, *earlier, s.paymentOf)
	}
	defer s.settleOnPanic(ctx, key)
	result, callErr := atProvider(ctx, s, p.Provider, func(ctx context.Context, c provider.Capturer) (provider.CaptureResult, error) {
		return c.Capture(ctx, provider.CaptureRequest{PaymentID: p.ID, ProviderPaymentID: deref(p.ProviderPaymentID), Amount: amount, IdempotencyKey: captureKey(p.ID)})
	})
	return s.recordCapture(ctx, key, p.ID, amount, result, callErr)
}

// capturable checks that payment p, read under its lock, can be captured the amount asked, or
// all it holds when asked is nil, and returns that amount.
func (s *Service) capturable(p *ent.Payment, asked *money.Decimal) (money.Amount, error) {
	if p.Status != state.PaymentRequiresCapture || p.PendingAction != nil {
		return money.Amount{}, apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s is %s%s; only an authorised payment (requires_capture) can be captured, once",
			p.ID, p.Status, pendingNote(p)))
	}
	amount := money.Amount{Minor: p.AmountCapturable, Currency: p.Currency}
	if asked != nil {
		var err error
		if amount, err = money.Parse(string(*asked), p.Currency); err != nil {
			return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", err.Error())
		}
	}
	switch {
	case amount.Minor <= 0:
		return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", "amount must be greater than zero")
	case amount.Minor > p.AmountCapturable:
		return money.Amount{}, apierror.ForParam(apierror.CaptureExceedsAuthorization, "amount", fmt.Sprintf("amount %s is more than the %s authorised",
			amount, money.Amount{Minor: p.AmountCapturable, Currency: p.Currency}))
	}
	if charger, ok := s.router.Provider(p.Provider); ok {
		if err := provider.CheckAmount(charger, amount); err != nil {
			return money.Amount{}, apierror.ForParam(apierror.InvalidAmount, "amount", err.Error())
		}
	}
	return amount, nil
}

// pendingNote says what a payment is waiting for, if anything.
func pendingNote(p *ent.Payment) string {
	if p.PendingAction == nil {
		return ""
	}
	return fmt.Sprintf(" with a %s under way", *p.PendingAction)
}

// atProvider calls the capture or cancellation of the provider called name, bounded in time, and
// counts it in the provider's figures.
func atProvider[T any](ctx context.Context, s *Service, name string, call func(context.Context, provider.Capturer) (T, error)) (T, error) {
	var none T
	charger, ok := s.router.Provider(name)
	capturer, captures := charger.(provider.Capturer)
	if !ok || !captures {
		return none, fmt.Errorf("%w: the payment's provider %q cannot capture or cancel on this server", provider.ErrUnavailable, name)
	}
	callCtx, cancel := context.WithTimeout(ctx, providerCallLimit)
	defer cancel()
	start := s.now()
	result, err := call(callCtx, capturer)
	s.router.ObserveRefund(name, err, s.now().Sub(start))
	return result, err
}

// recordCapture records what the provider answered to the capture of amount of payment id, and
// settles key by it. A capture the provider refused leaves the authorisation as it was; one it
// took to confirm later, or whose answer was lost, leaves the payment processing until the
// provider's webhook (or reconciliation) settles it.
func (s *Service) recordCapture(ctx context.Context, key *idempotency.Key, id string, amount money.Amount, result provider.CaptureResult, callErr error) (*ent.Payment, error) {
	var p *ent.Payment
	var refused error
	err := s.recordOutcome(ctx, func(tx *ent.Tx) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		refused = nil
		// The provider's event may have settled the capture while this request was slow to
		// record the answer: its record stands.
		if capturing(p) {
			actor := "provider:" + p.Provider
			switch {
			case errors.Is(callErr, provider.ErrUnavailable):
				refused = apierror.New(apierror.ProviderUnavailable, "the payment provider did not capture the payment; the authorisation stands")
				err = s.move(ctx, tx, p, state.PaymentRequiresCapture, "capture refused: "+clean(callErr.Error(), 200), actor, changes{clearPending: true})
			case callErr != nil:
				s.logger().WarnContext(ctx, "capture outcome unknown: the provider's webhook or reconciliation will settle it",
					"payment_id", p.ID, "provider", p.Provider, "error", callErr.Error())
			case !result.Pending:
				err = s.move(ctx, tx, p, state.PaymentSucceeded, "captured "+amount.String(), actor,
					changes{amountCaptured: &amount.Minor, amountCapturable: ptr(int64(0)), clearPending: true})
			}
			if err != nil {
				return err
			}
		}
		if key != nil {
			return s.keys.Settle(ctx, tx, key, refused)
		}
		return nil
	})
	if err != nil {
		return nil, s.endWith(ctx, key, fmt.Errorf("recording the capture of payment %s: %v", id, err))
	}
	if refused != nil {
		return nil, refused
	}
	return p.Unwrap(), nil
}

// capturing reports whether a capture of p is under way: sent, and not yet settled.
func capturing(p *ent.Payment) bool {
	return p.Status == state.PaymentProcessing && p.PendingAction != nil && *p.PendingAction == payment.PendingActionCapture
}

// overCapture is the verdict on news of payment p's authorisation (what names it: an event, an
// answer) that arrives while p is being captured: ignored, since the authorisation was recorded
// before the capture was sent, and the capture's own answer settles the payment.
func overCapture(p *ent.Payment, what string) verdict {
	return ignore(fmt.Sprintf("payment %s is being captured; %s is about its authorisation, recorded before", p.ID, what))
}

// Cancel voids a payment's authorisation, or ends its wait for the shopper, releasing the amount.
func (s *Service) Cancel(ctx context.Context, in CancelInput) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.CancelPayment); err != nil {
		return nil, err
	}
	key, err := s.keys.For(ctx, auth.CancelPayment, in.IdempotencyKey, in.meaning())
	if err != nil {
		return nil, err
	}
	reason := state.CanceledByCustomer
	if in.Reason != nil {
		reason = *in.Reason
	}
	if !reason.Requestable() {
		return replayOr(ctx, s, key, s.paymentOf, apierror.ForParam(apierror.InvalidRequest, "reason",
			"reason must be requested_by_customer, duplicate or fraudulent"))
	}
	ctx = context.WithoutCancel(ctx)
	var p *ent.Payment
	earlier, err := s.claimAndWrite(ctx, key, in.PaymentID, func(tx *ent.Tx, id string) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		return s.claimCancel(ctx, tx, p, reason)
	})
	switch {
	case err != nil:
		return nil, err
	case earlier != nil:
		return answer(ctx, *earlier, s.paymentOf)
	}
	defer s.settleOnPanic(ctx, key)
	return s.cancelAtProvider(ctx, key, p, actorOf(ctx))
}

// claimCancel claims the cancellation of payment p, read under its lock in tx, for reason.
func (s *Service) claimCancel(ctx context.Context, tx *ent.Tx, p *ent.Payment, reason state.CancellationReason) error {
	if (p.Status != state.PaymentRequiresCapture && p.Status != state.PaymentRequiresAction) || p.PendingAction != nil {
		return apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s is %s%s; only an authorised payment (requires_capture) or one waiting for the shopper (requires_action) can be canceled",
			p.ID, p.Status, pendingNote(p)))
	}
	n, err := tx.Payment.Update().Where(payment.ID(p.ID), payment.StatusEQ(p.Status), payment.PendingActionIsNil()).
		SetPendingAction(payment.PendingActionCancel).SetCancellationReason(reason).SetUpdatedAt(s.now()).Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s changed while being canceled; read it again", p.ID))
	}
	p.PendingAction, p.CancellationReason = ptr(payment.PendingActionCancel), &reason
	return nil
}

// cancelAtProvider asks p's provider to void its authorisation, p's cancellation being claimed,
// and records the answer, settling key by it. A refusal gives up the claim, the payment as it
// was; an answer lost keeps it, so nothing captures the payment meanwhile, until the expiry loop
// asks again (with the same idempotency key) and settles it.
func (s *Service) cancelAtProvider(ctx context.Context, key *idempotency.Key, p *ent.Payment, actor string) (*ent.Payment, error) {
	_, callErr := atProvider(ctx, s, p.Provider, func(ctx context.Context, c provider.Capturer) (provider.CancelResult, error) {
		return c.Cancel(ctx, provider.CancelRequest{PaymentID: p.ID, ProviderPaymentID: deref(p.ProviderPaymentID),
			Reason: string(*p.CancellationReason), IdempotencyKey: cancelKey(p.ID)})
	})
	// A provider with nothing to cancel yet is asked whether the shopper authenticated after all:
	// what it decided stands; still waiting, or unable to tell, the payment is canceled here.
	var decided *chargeOutcome
	if p.Status == state.PaymentRequiresAction && errors.Is(callErr, provider.ErrNothingToCancel) {
		if result, err := s.askAuthentication(ctx, p, nil); err == nil && !result.AwaitsShopper() {
			decided = ptr(chargeAnswered(result))
		}
	}
	id := p.ID
	var refused error
	err := s.recordOutcome(ctx, func(tx *ent.Tx) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		refused = nil
		if p.PendingAction != nil && *p.PendingAction == payment.PendingActionCancel {
			canceled := changes{canceledAt: ptr(s.now()), amountCapturable: ptr(int64(0)), clearPending: true}
			switch {
			case decided != nil && p.Status == state.PaymentRequiresAction:
				_, err = s.applyChargeOutcome(ctx, tx, p, *decided, "provider:"+p.Provider, nil)
			case p.Status == state.PaymentRequiresAction && errors.Is(callErr, provider.ErrNothingToCancel):
				// The provider's page may still take the shopper: one that can be asked is asked
				// later whether it did, should neither its webhook nor the shopper's return tell.
				if s.lookup(p.Provider) != nil {
					canceled.reversalDue = ptr(s.now().Add(lateApprovalCheck))
				}
				err = s.move(ctx, tx, p, state.PaymentCanceled, "canceled: "+string(*p.CancellationReason)+"; "+p.Provider+" had nothing to cancel yet", actor, canceled)
			case errors.Is(callErr, provider.ErrUnavailable):
				refused = apierror.New(apierror.ProviderUnavailable, "the payment provider did not cancel the payment; it is as it was")
				err = s.releaseCancel(ctx, tx, p)
			case callErr != nil:
				s.logger().WarnContext(ctx, "cancellation outcome unknown: it is asked again", "payment_id", id, "provider", p.Provider, "error", callErr.Error())
			default:
				err = s.move(ctx, tx, p, state.PaymentCanceled, "canceled: "+string(*p.CancellationReason), actor, canceled)
			}
			if err != nil {
				return err
			}
		}
		if p.Status != state.PaymentCanceled && (p.PendingAction == nil || *p.PendingAction != payment.PendingActionCancel) && refused == nil {
			// The shopper's authentication overtook the cancellation: nothing was left to cancel.
			refused = apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s became %s before it could be canceled", id, p.Status))
		}
		if key != nil {
			return s.keys.Settle(ctx, tx, key, refused)
		}
		return nil
	})
	if err != nil {
		return nil, s.endWith(ctx, key, fmt.Errorf("recording the cancellation of payment %s: %v", id, err))
	}
	if refused != nil {
		return nil, refused
	}
	return p.Unwrap(), nil
}

// releaseCancel gives up the cancellation claimed on p, which its provider refused: the payment
// is as it was before it was asked.
func (s *Service) releaseCancel(ctx context.Context, tx *ent.Tx, p *ent.Payment) error {
	p.PendingAction, p.CancellationReason = nil, nil
	return tx.Payment.UpdateOneID(p.ID).ClearPendingAction().ClearCancellationReason().SetUpdatedAt(s.now()).Exec(ctx)
}

// expiryBatch is how many lapsed authorisations one pass cancels, so a pass is bounded however
// many lapsed at once; staleCancel is how long a cancellation claimed stays its request's before
// the expiry loop takes it over (its request ended without an answer).
const (
	expiryBatch = 100
	staleCancel = 2 * time.Minute
)

// ExpireAuthorizations cancels, as expired, the authorisations not captured by their
// capture_before, settles or cancels as abandoned the payments left waiting for their shopper past
// their authenticate_before, and asks again for the cancellations whose answer was lost. Every
// server runs it: each payment is claimed by a conditional update, so one server cancels it. It
// returns how many payments it canceled.
func (s *Service) ExpireAuthorizations(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	now := s.now()
	due, err := s.client.Payment.Query().Where(payment.Or(
		payment.And(payment.StatusEQ(state.PaymentRequiresCapture), payment.CaptureBeforeLT(now), payment.PendingActionIsNil()),
		payment.And(payment.StatusEQ(state.PaymentRequiresAction), payment.AuthenticateBeforeLT(now), payment.PendingActionIsNil()),
		payment.And(payment.PendingActionEQ(payment.PendingActionCancel), payment.UpdatedAtLT(now.Add(-staleCancel))),
	)).Order(ent.Asc(payment.FieldUpdatedAt)).Limit(expiryBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	canceled := 0
	var errs []error
	for _, p := range due {
		ctx, work := s.workOn(ctx, "expire payment", p)
		done, err := s.expire(ctx, p, now)
		work.end(ctx, "canceled a payment not captured or authenticated in time", done, err, "payment_id", p.ID, "provider", p.Provider)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			canceled++
		}
	}
	return canceled, errors.Join(errs...)
}

// expire cancels p, found lapsed at now, and reports whether it is canceled.
func (s *Service) expire(ctx context.Context, p *ent.Payment, now time.Time) (bool, error) {
	if p.PendingAction == nil {
		reason := state.CanceledExpired
		if p.Status == state.PaymentRequiresAction {
			reason = state.CanceledAbandoned
			// The shopper may have authenticated, with neither their browser nor the
			// provider's webhook telling: the provider says so, and is believed first.
			if settled, err := s.settleIfDecided(ctx, p); err != nil || settled {
				return false, err
			}
		}
		claimed, err := s.claimLapsed(ctx, p, reason)
		if err != nil || !claimed {
			return false, err
		}
	} else if err := s.client.Payment.UpdateOneID(p.ID).Where(payment.UpdatedAt(p.UpdatedAt)).SetUpdatedAt(now).Exec(ctx); err != nil {
		// Taken over by another server meanwhile (or gone): it asks.
		if ent.IsNotFound(err) {
			err = nil
		}
		return false, err
	}
	settled, err := s.cancelAtProvider(ctx, nil, p, "system")
	if err != nil && !errors.Is(err, provider.ErrUnavailable) {
		if _, refused := errors.AsType[*apierror.Error](err); refused {
			err = nil
		}
		return false, err
	}
	return settled != nil && settled.Status == state.PaymentCanceled, nil
}

// claimLapsed claims the cancellation of p, for reason, if it is still in the status it was found
// lapsed in and unclaimed; it reports whether it did, and leaves p as locked.
func (s *Service) claimLapsed(ctx context.Context, p *ent.Payment, reason state.CancellationReason) (bool, error) {
	claimed := true
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		locked, err := lockPayment(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if locked.Status != p.Status || locked.PendingAction != nil {
			claimed = false // settled, captured, canceled or claimed meanwhile
			return nil
		}
		*p = *locked
		return s.claimCancel(ctx, tx, p, reason)
	})
	return claimed && err == nil, err
}

// captureReported records a capture the provider reports (its webhook): the capture Paygate sent,
// confirmed, or one made at the provider. For a payment captured at once, it is the charge's
// success.
func (s *Service) captureReported(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, actor string) (verdict, error) {
	if p.CaptureMethod != state.CaptureManual {
		return s.applyChargeOutcome(ctx, tx, p, chargeReported(provider.Notification{Kind: provider.ChargeSucceeded, ProviderPaymentID: n.ProviderPaymentID}), actor, nil)
	}
	captured := money.Amount{Minor: n.Amount, Currency: p.Currency}
	if n.Amount <= 0 || n.Amount > p.Amount || n.Currency != p.Currency {
		return attention(fmt.Sprintf("%s reports a capture of %d %s of payment %s of %s: check it at %s",
			p.Provider, n.Amount, clean(n.Currency, 10), p.ID, money.Amount{Minor: p.Amount, Currency: p.Currency}, p.Provider)), nil
	}
	switch p.Status {
	case state.PaymentProcessing, state.PaymentRequiresCapture:
		return agreed(), s.move(ctx, tx, p, state.PaymentSucceeded, "captured "+captured.String(), actor,
			changes{amountCaptured: &n.Amount, amountCapturable: ptr(int64(0)), clearPending: true})
	case state.PaymentSucceeded, state.PaymentPartiallyRefunded, state.PaymentRefunded:
		if p.AmountCaptured == n.Amount {
			return agreed(), nil
		}
	}
	return attention(fmt.Sprintf("payment %s is %s with %s captured, but %s reports %s captured: check it at %s",
		p.ID, p.Status, money.Amount{Minor: p.AmountCaptured, Currency: p.Currency}, p.Provider, captured, p.Provider)), nil
}

// captureRefused records that the provider refused a capture it had taken: the authorisation
// stands, and can be captured again or canceled.
func (s *Service) captureRefused(ctx context.Context, tx *ent.Tx, p *ent.Payment, why, actor string) (verdict, error) {
	if !capturing(p) {
		return ignore(fmt.Sprintf("payment %s is %s: no capture of it is waiting for %s", p.ID, p.Status, p.Provider)), nil
	}
	return agreed(), s.move(ctx, tx, p, state.PaymentRequiresCapture, "capture refused: "+clean(why, 200), actor, changes{clearPending: true})
}

// cancelReported records that the provider voided the payment's authorisation: a cancellation
// Paygate sent, confirmed, or one made at the provider (its dashboard, or the authorisation
// lapsing there).
func (s *Service) cancelReported(ctx context.Context, tx *ent.Tx, p *ent.Payment, actor string) (verdict, error) {
	voided := changes{canceledAt: ptr(s.now()), amountCapturable: ptr(int64(0)), clearPending: true}
	switch {
	case p.Status == state.PaymentCanceled && voidingLateApproval(p):
		return s.reversalVoidReported(ctx, tx, p, true, "")
	case p.Status == state.PaymentCanceled:
		return agreed(), nil
	case p.Status == state.PaymentProcessing && p.CaptureMethod != state.CaptureManual:
		return s.applyChargeOutcome(ctx, tx, p, notCharged("canceled at "+p.Provider, "The payment provider canceled the payment; nothing was charged."), actor, nil)
	case p.Status == state.PaymentProcessing:
		// An authorisation in doubt, or a capture refused for it, found void.
		return agreed(), s.moveThrough(ctx, tx, p, []state.PaymentStatus{state.PaymentRequiresCapture, state.PaymentCanceled}, "canceled at "+p.Provider, actor, voided)
	case p.Status == state.PaymentRequiresCapture, p.Status == state.PaymentRequiresAction:
		return agreed(), s.move(ctx, tx, p, state.PaymentCanceled, "canceled at "+p.Provider, actor, voided)
	}
	return attention(fmt.Sprintf("payment %s is %s; a cancellation reported after its capture does not move it back: check it at %s", p.ID, p.Status, p.Provider)), nil
}

// cancelRefused records that the provider refused a cancellation it had taken. Paygate records a
// cancellation once the provider takes it, so one refused after needs a person: the
// authorisation may still hold the amount.
func (s *Service) cancelRefused(ctx context.Context, tx *ent.Tx, p *ent.Payment, why string) (verdict, error) {
	switch {
	case p.Status == state.PaymentCanceled && voidingLateApproval(p):
		return s.reversalVoidReported(ctx, tx, p, false, why)
	case p.Status == state.PaymentCanceled:
		return attention(fmt.Sprintf("payment %s is canceled, but %s refused its cancellation (%s): its authorisation may still hold the amount; check it at %s",
			p.ID, p.Provider, clean(why, 200), p.Provider)), nil
	case p.PendingAction != nil && *p.PendingAction == payment.PendingActionCancel:
		return ignore("the cancellation was refused: " + clean(why, 200)), s.releaseCancel(ctx, tx, p)
	}
	return ignore(fmt.Sprintf("payment %s is %s: no cancellation of it is waiting", p.ID, p.Status)), nil
}

// voidingLateApproval reports whether canceled payment p's provider approved it late and Paygate
// voids, or voided, that approval: the provider's word on a void of p is about that.
func voidingLateApproval(p *ent.Payment) bool {
	return p.ReversalStatus != nil && *p.ReversalStatus != state.ReversalRefunded && p.ReversalRefund == 0
}
