package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// A payment canceled while it waited for its shopper can still be approved by its provider: the
// shopper completes the challenge after all, on a page the provider kept open because it had
// nothing to cancel yet (Adyen before it named the charge, Checkout.com before the
// authorisation). Stripe cancels the intent itself, whose page then refuses the shopper.
//
// Whichever way the approval reaches Paygate (the shopper's return, the provider's webhook,
// reconciliation), the payment stays canceled and Paygate undoes the approval at the provider:
// it voids an authorisation held, or refunds what was captured. The approval is noticed in the
// transaction that reads it, which records the reversal owed (reversal_status pending, due now)
// and a line of history; the reversal loop then asks the provider, under one idempotency key per
// payment, and records how it ended, with another line of history and an event to the merchant
// (payment.reversed, or payment.reversal_failed with an alert). So a server that stops between
// the two leaves the reversal owed for the next round, on any server, and an approval told
// several times is reversed once.

// reversalBatch bounds the reversals one round asks for; reversalLease is how long a round's
// claim on one keeps the others from asking at once (a server that dies asking leaves it to be
// asked again, with the same key, once it runs out).
const (
	reversalBatch = 100
	reversalLease = 2 * time.Minute
)

// reversalWaits are the pauses after each try the provider did not answer (an outage, an outcome
// unknown) before the next; the try after the last gives up: the reversal fails, and a person is
// alerted.
var reversalWaits = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}

// lateApprovalCheck is how long after a payment was canceled, its provider having had nothing to
// cancel yet, reconciliation asks the provider whether the shopper authenticated after all (its
// webhook or the shopper's return would normally have told): by then every provider's
// authentication has lapsed. lateApprovalChecks bounds how often it asks one that cannot tell.
const (
	lateApprovalCheck  = AuthenticationWindow
	lateApprovalChecks = 3
)

// reversalKey is the idempotency key, and reference, of the void or refund that undoes payment
// paymentID's late approval: one per payment, however often it is asked for.
func reversalKey(paymentID string) string { return "reversal_" + paymentID }

// lateApproval records within tx that payment p, canceled while it waited for its shopper, was
// approved by its provider (o) afterwards: a reversal is owed, due now. p is as tx holds it
// locked. An approval told again finds the reversal owed or done, and changes nothing.
func (s *Service) lateApproval(ctx context.Context, tx *ent.Tx, p *ent.Payment, o chargeOutcome, actor string) (verdict, error) {
	if p.ReversalStatus != nil {
		return agreed(), nil
	}
	refund := p.Amount // captured at once
	if p.CaptureMethod == state.CaptureManual {
		if o.canceled && o.captured == 0 {
			return ignore(fmt.Sprintf("payment %s is canceled; %s approved it after all, and has voided it since: nothing is taken", p.ID, p.Provider)), nil
		}
		refund = min(o.captured, p.Amount)
	}
	now := s.now()
	update := tx.Payment.Update().Where(payment.ID(p.ID), payment.StatusEQ(state.PaymentCanceled), payment.ReversalStatusIsNil()).
		SetReversalStatus(state.ReversalPending).SetReversalRefund(refund).SetReversalDue(now).SetReversalAttempts(0).SetUpdatedAt(now)
	if p.ProviderPaymentID == nil && o.recorded.providerPaymentID != nil {
		// Adyen names the charge only once it is decided: the void or refund needs its name.
		update.SetProviderPaymentID(*o.recorded.providerPaymentID)
		p.ProviderPaymentID = o.recorded.providerPaymentID
	}
	n, err := update.Save(ctx)
	if err != nil {
		return verdict{}, err
	}
	if n != 1 {
		return verdict{}, fmt.Errorf("payment %s changed while its late approval was recorded", p.ID)
	}
	p.ReversalStatus, p.ReversalRefund, p.ReversalDue, p.ReversalAttempts, p.UpdatedAt = ptr(state.ReversalPending), refund, &now, 0, now
	how := "voided"
	if refund > 0 {
		how = "refunded"
	}
	if err := s.reversalHistory(ctx, tx, p, fmt.Sprintf("approved by %s after its cancellation: to be %s there", p.Provider, how), actor, now); err != nil {
		return verdict{}, err
	}
	s.wakeReversalsOnCommit(tx)
	return agreed(), nil
}

// reversalHistory writes a line of p's history about its reversal: the payment stays canceled.
func (s *Service) reversalHistory(ctx context.Context, tx *ent.Tx, p *ent.Payment, reason, actor string, at time.Time) error {
	return tx.PaymentStatusChange.Create().SetMerchantID(p.MerchantID).SetPaymentID(p.ID).SetFrom(p.Status).SetTo(p.Status).
		SetReason(reason).SetActor(actor).SetAt(at).Exec(ctx)
}

// wakeReversalsOnCommit wakes the reversal loop once tx commits, so the reversal it records owed
// is asked for at once rather than at the loop's next round.
func (s *Service) wakeReversalsOnCommit(tx *ent.Tx) {
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				select {
				case s.reversalWake <- struct{}{}:
				default:
				}
			}
			return err
		})
	})
}

// ReversalsWoken receives when a transaction recorded a reversal owed.
func (s *Service) ReversalsWoken() <-chan struct{} { return s.reversalWake }

// endReversal records within tx that p's reversal became to (voided, refunded or failed, for
// why), by actor: a line of history, and the event that tells the merchant. A failure raises an
// alert in the same transaction, and its verdict asks a person to undo the approval at the
// provider. p is as tx holds it locked; a reversal already in to changes nothing.
func (s *Service) endReversal(ctx context.Context, tx *ent.Tx, p *ent.Payment, to state.ReversalStatus, why, actor string) (verdict, error) {
	from := *p.ReversalStatus
	if from == to {
		return agreed(), nil
	}
	if !from.CanMoveTo(to) {
		return ignore(fmt.Sprintf("payment %s's reversal is %s; it does not become %s", p.ID, from, to)), nil
	}
	now := s.now()
	update := tx.Payment.Update().Where(payment.ID(p.ID), payment.ReversalStatusEQ(from)).SetReversalStatus(to).ClearReversalDue().SetUpdatedAt(now)
	if to == state.ReversalFailed {
		update.SetReversalFailureMessage(clean(why, 500))
	}
	n, err := update.Save(ctx)
	if err != nil {
		return verdict{}, err
	}
	if n != 1 {
		return verdict{}, fmt.Errorf("payment %s's reversal changed while it was recorded", p.ID)
	}
	p.ReversalStatus, p.ReversalDue, p.UpdatedAt = &to, nil, now
	reason := fmt.Sprintf("%s's late approval %s there", p.Provider, to)
	eventType := event.PaymentReversed
	v := agreed()
	if to == state.ReversalFailed {
		p.ReversalFailureMessage = ptr(clean(why, 500))
		reason = fmt.Sprintf("%s's late approval could not be undone there: %s", p.Provider, clean(why, 200))
		eventType = event.PaymentReversalFailed
		amount := money.Amount{Minor: p.Amount, Currency: p.Currency}
		message := fmt.Sprintf("Payment %s of %s (merchant %s) was canceled while its shopper authenticated, but %s approved it afterwards, and Paygate could not undo that there (%s): the shopper's money may still be taken. Void or refund it at %s.",
			p.ID, amount, p.MerchantID, p.Provider, clean(why, 200), p.Provider)
		if _, err := alerting.RaiseIn(ctx, tx, alerting.RuleReversalFailed, p.ID, state.AlertCritical, message, now); err != nil {
			return verdict{}, err
		}
		v = attention(message)
	}
	if err := s.reversalHistory(ctx, tx, p, reason, actor, now); err != nil {
		return verdict{}, err
	}
	return v, s.Events.Record(ctx, tx, p.MerchantID, eventType, p.ID, ObjectOf(p), now)
}

// ReverseLateApprovals asks the providers to void or refund the late approvals of canceled
// payments whose reversal is due, and records how each ended; it returns how many it ended.
// Every server runs it: each payment is claimed by a conditional update, so one server asks at a
// time, and every try carries the payment's one idempotency key.
func (s *Service) ReverseLateApprovals(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	due, err := s.client.Payment.Query().Where(payment.ReversalStatusEQ(state.ReversalPending), payment.ReversalDueLTE(s.now())).
		Order(ent.Asc(payment.FieldReversalDue)).Limit(reversalBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	ended := 0
	var errs []error
	for _, p := range due {
		ctx, work := s.workOn(ctx, "reverse late approval", p)
		done, err := s.reverse(ctx, p)
		work.end(ctx, "the reversal of a canceled payment's late approval ended: the payment's reversal status tells how", done, err, "payment_id", p.ID, "provider", p.Provider)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			ended++
		}
	}
	return ended, errors.Join(errs...)
}

// reverse claims p's reversal, as found due, asks its provider for it, and records the answer:
// taken (voided, refunded), refused (failed), or not had (asked again after a while, until
// reversalWaits runs out). It reports whether the reversal ended.
func (s *Service) reverse(ctx context.Context, p *ent.Payment) (bool, error) {
	now := s.now()
	claimed, err := s.client.Payment.Update().Where(payment.ID(p.ID), payment.ReversalStatusEQ(state.ReversalPending), payment.ReversalDue(*p.ReversalDue)).
		SetReversalDue(now.Add(reversalLease)).AddReversalAttempts(1).Save(ctx)
	if err != nil || claimed == 0 {
		return false, err // taken by another server, or settled meanwhile
	}
	attempt := p.ReversalAttempts + 1
	callErr := s.reverseAtProvider(ctx, p)
	refused := errors.Is(callErr, provider.ErrUnavailable) && !errors.Is(callErr, provider.ErrOutage)
	var v verdict
	ended := false
	err = s.recordOutcome(ctx, func(tx *ent.Tx) error {
		locked, err := lockPayment(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		v, ended = agreed(), false
		if locked.ReversalStatus == nil || *locked.ReversalStatus != state.ReversalPending {
			return nil // the provider's notification settled it meanwhile
		}
		switch {
		case callErr == nil:
			to := state.ReversalVoided
			if locked.ReversalRefund > 0 {
				to = state.ReversalRefunded
			}
			ended = true
			v, err = s.endReversal(ctx, tx, locked, to, "", "provider:"+locked.Provider)
		case refused:
			ended = true
			v, err = s.endReversal(ctx, tx, locked, state.ReversalFailed, callErr.Error(), "provider:"+locked.Provider)
		case attempt > len(reversalWaits):
			ended = true
			v, err = s.endReversal(ctx, tx, locked, state.ReversalFailed,
				fmt.Sprintf("no answer after %d tries: %v", attempt, callErr), "system")
		default:
			s.logger().WarnContext(ctx, "reversal not answered: it is asked again", "payment_id", p.ID, "provider", p.Provider,
				"attempt", attempt, "error", callErr.Error())
			err = tx.Payment.UpdateOneID(p.ID).SetReversalDue(s.now().Add(reversalWaits[attempt-1])).Exec(ctx)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("recording the reversal of payment %s: %w", p.ID, err)
	}
	s.tellPerson(ctx, v, p.ID)
	return ended, nil
}

// reverseAtProvider asks p's provider to undo its approval: to refund what it captured, or void
// the authorisation it holds.
func (s *Service) reverseAtProvider(ctx context.Context, p *ent.Payment) error {
	if p.ReversalRefund > 0 {
		_, err := s.refundAt(ctx, p.Provider, provider.RefundRequest{RefundID: reversalKey(p.ID), ProviderPaymentID: deref(p.ProviderPaymentID),
			Amount: money.Amount{Minor: p.ReversalRefund, Currency: p.Currency}})
		return err
	}
	reason := state.CanceledByCustomer
	if p.CancellationReason != nil {
		reason = *p.CancellationReason
	}
	_, err := atProvider(ctx, s, p.Provider, func(ctx context.Context, c provider.Capturer) (provider.CancelResult, error) {
		return c.Cancel(ctx, provider.CancelRequest{PaymentID: p.ID, ProviderPaymentID: deref(p.ProviderPaymentID), Reason: string(reason),
			IdempotencyKey: reversalKey(p.ID)})
	})
	return err
}

// reversalVoidReported records the provider's word on the void of p's late approval: confirmed
// (a void whose answer was lost is done), or refused after it was taken.
func (s *Service) reversalVoidReported(ctx context.Context, tx *ent.Tx, p *ent.Payment, confirmed bool, why string) (verdict, error) {
	if confirmed {
		if *p.ReversalStatus == state.ReversalPending {
			return s.endReversal(ctx, tx, p, state.ReversalVoided, "", "webhook:"+p.Provider)
		}
		return agreed(), nil
	}
	return s.endReversal(ctx, tx, p, state.ReversalFailed, fmt.Sprintf("%s refused the void: %s", p.Provider, why), "webhook:"+p.Provider)
}

// reversalRefundsReported records what the provider says of the refund of p's late approval: the
// only refund a canceled payment has. Succeeded, it is done (one whose answer was lost too); failed,
// the reversal failed.
func (s *Service) reversalRefundsReported(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification) (verdict, error) {
	actor := "webhook:" + p.Provider
	if len(n.Refunds) == 0 {
		if n.RefundedTotal != nil && *n.RefundedTotal >= p.ReversalRefund && *p.ReversalStatus == state.ReversalPending {
			return s.endReversal(ctx, tx, p, state.ReversalRefunded, "", actor)
		}
		return agreed(), nil
	}
	for _, notice := range n.Refunds {
		if notice.Amount != p.ReversalRefund {
			return attention(fmt.Sprintf("payment %s is canceled, and %s was refunded %d of its late approval of %d: check it at %s",
				p.ID, p.Provider, notice.Amount, p.ReversalRefund, p.Provider)), nil
		}
		switch notice.Status {
		case provider.RefundSucceeded:
			if *p.ReversalStatus == state.ReversalPending {
				return s.endReversal(ctx, tx, p, state.ReversalRefunded, "", actor)
			}
		case provider.RefundFailed:
			return s.endReversal(ctx, tx, p, state.ReversalFailed, p.Provider+" refused the refund", actor)
		}
	}
	return agreed(), nil
}

// checkLateApprovals asks the providers whether the shopper authenticated after all for the
// payments canceled while they waited whose provider had nothing to cancel then, once their
// check is due: an approval found is reversed as any other; one still waiting is asked about
// again later, up to lateApprovalChecks times; anything else ends the watch. It returns how many
// approvals it found.
func (s *Service) checkLateApprovals(ctx context.Context, askable []string) (int, error) {
	due, err := s.client.Payment.Query().Where(payment.StatusEQ(state.PaymentCanceled), payment.ReversalStatusIsNil(),
		payment.ReversalDueLTE(s.now()), payment.ProviderIn(askable...)).
		Order(ent.Asc(payment.FieldReversalDue)).Limit(reconcileBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	found := 0
	var errs []error
	for _, p := range due {
		ctx, work := s.workOn(ctx, "check for a late approval", p)
		result, charged, askErr := s.lookup(p.Provider).LookupCharge(ctx, p.ID)
		if askErr != nil {
			work.span.SetStatus(codes.Error, "asking the provider: "+askErr.Error())
		}
		approved := askErr == nil && charged && result.Approved
		var v verdict
		noticed := false
		err := s.inTx(ctx, func(tx *ent.Tx) error {
			locked, err := lockPayment(ctx, tx, p.ID)
			if err != nil {
				return err
			}
			noticed = false
			if locked.ReversalStatus != nil || locked.ReversalDue == nil || !locked.ReversalDue.Equal(*p.ReversalDue) {
				return nil // checked by another server meanwhile, or its approval told otherwise
			}
			update := tx.Payment.UpdateOneID(p.ID)
			switch {
			case approved:
				noticed = true
				v, err = s.applyChargeOutcome(ctx, tx, locked, chargeAnswered(result), "reconciliation:"+p.Provider, nil)
				return err
			case (askErr != nil || charged && result.AwaitsShopper()) && locked.ReversalAttempts+1 < lateApprovalChecks:
				update.SetReversalDue(s.now().Add(lateApprovalCheck)).AddReversalAttempts(1)
			default: // declined, never charged, or asked often enough
				update.ClearReversalDue().SetReversalAttempts(0)
			}
			return update.Exec(ctx)
		})
		switch {
		case err != nil:
			errs = append(errs, err)
		case noticed:
			found++
			s.tellPerson(ctx, v, p.ID)
		}
		work.end(ctx, "found a canceled payment approved after all: its reversal is owed", noticed, err, "payment_id", p.ID, "provider", p.Provider)
	}
	return found, errors.Join(errs...)
}
