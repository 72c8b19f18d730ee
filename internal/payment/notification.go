package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
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
	// NotBefore, when set, means the payment or refund may still be recorded by its own request:
	// the caller rolls back whatever the call wrote and applies the notification again then.
	NotBefore time.Time
}

// ApplyNotification records within tx what providerName's notification n says happened to one of
// its payments, through the payment and refund lifecycles only: a state never moves backwards, so
// an event that comes late or twice changes nothing. The caller commits tx with its own record of
// the event, so an event is applied exactly once.
func (s *Service) ApplyNotification(ctx context.Context, tx *ent.Tx, providerName string, n provider.Notification) (Applied, error) {
	if n.Kind == provider.Unhandled {
		return Applied{Ignored: n.Reason}, nil
	}
	p, err := findPayment(ctx, tx, providerName, n)
	if err != nil || p == nil {
		return Applied{Ignored: "no payment of Paygate's is " + describeReference(providerName, n)}, err
	}
	applied := Applied{PaymentID: p.ID}
	if p.Provider != providerName {
		// A failover moves a payment on only when the provider did nothing, so this is a charge
		// nobody expected: it needs a person.
		applied.Ignored = fmt.Sprintf("payment %s was charged through %s, not %s: check both providers", p.ID, p.Provider, providerName)
		return applied, nil
	}
	if p, err = lockPayment(ctx, tx, p.ID); err != nil {
		return applied, err
	}
	now := s.now()
	if p.Status == state.PaymentProcessing && now.Sub(p.CreatedAt) < InFlightGrace {
		applied.NotBefore = p.CreatedAt.Add(InFlightGrace)
		return applied, nil
	}
	actor := "webhook:" + providerName
	switch n.Kind {
	case provider.ChargeSucceeded:
		applied.Ignored, err = s.chargeSucceeded(ctx, tx, p, n, actor)
	case provider.ChargeFailed:
		applied.Ignored, err = s.chargeFailed(ctx, tx, p, n, actor)
	case provider.Disputed:
		applied.Ignored, err = s.disputed(ctx, tx, p, n, now)
	case provider.RefundsChanged:
		applied.Ignored, applied.NotBefore, err = s.refundsChanged(ctx, tx, p, n, actor, now)
	default:
		applied.Ignored = fmt.Sprintf("notification of kind %q is not acted on", n.Kind)
	}
	return applied, err
}

// findPayment finds the payment a notification names: by Paygate's id when it carries one, else
// by the provider's id of the charge. It returns nil when there is none.
func findPayment(ctx context.Context, tx *ent.Tx, providerName string, n provider.Notification) (*ent.Payment, error) {
	var query *ent.PaymentQuery
	switch {
	case n.PaymentID != "":
		query = tx.Payment.Query().Where(payment.ID(n.PaymentID))
	case n.ProviderPaymentID != "":
		query = tx.Payment.Query().Where(payment.Provider(providerName), payment.ProviderPaymentID(n.ProviderPaymentID))
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

// chargeSucceeded settles a payment whose answer was lost as succeeded; one already succeeded
// agrees. One recorded failed cannot succeed, but the provider took money for it: a person must
// refund it there.
func (s *Service) chargeSucceeded(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, actor string) (string, error) {
	switch p.Status {
	case state.PaymentProcessing:
		if err := s.keys.Resolve(ctx, tx, p.ID); err != nil {
			return "", err
		}
		var providerPaymentID *string
		if n.ProviderPaymentID != "" {
			providerPaymentID = &n.ProviderPaymentID
		}
		return "", s.move(ctx, tx, p, state.PaymentSucceeded, "approved", actor, changes{providerPaymentID: providerPaymentID})
	case state.PaymentFailed:
		return fmt.Sprintf("payment %s is recorded failed but %s reports it approved: refund it at %s", p.ID, p.Provider, p.Provider), nil
	}
	return "", nil // succeeded, or refunded since: the event agrees
}

// chargeFailed settles a payment whose answer was lost as failed; one already failed agrees. A
// payment that succeeded is never moved back: a failure reported after the approval (a
// cancellation, a late decline) is kept as the reason it was ignored.
func (s *Service) chargeFailed(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, actor string) (string, error) {
	switch p.Status {
	case state.PaymentProcessing:
		if err := s.keys.Resolve(ctx, tx, p.ID); err != nil {
			return "", err
		}
		c := changes{
			providerDeclineCode: &n.Decline.RawDeclineCode,
			failureCode:         &n.Decline.DeclineCode,
			failureMessage:      &n.Decline.DeclineMessage,
		}
		if n.ProviderPaymentID != "" {
			c.providerPaymentID = &n.ProviderPaymentID
		}
		return "", s.move(ctx, tx, p, state.PaymentFailed, n.Decline.DeclineCode, actor, c)
	case state.PaymentFailed:
		return "", nil
	}
	return fmt.Sprintf("payment %s is %s; a failure reported after its approval (%s) does not move it back",
		p.ID, p.Status, strings.TrimSpace(n.Decline.RawDeclineCode+" "+n.Decline.DeclineMessage)), nil
}

// disputed records the cardholder's dispute of a payment, once.
func (s *Service) disputed(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, now time.Time) (string, error) {
	if p.DisputedAt != nil {
		return "", nil
	}
	if p.Status == state.PaymentProcessing || p.Status == state.PaymentFailed {
		return fmt.Sprintf("payment %s is %s; there is no charge to dispute", p.ID, p.Status), nil
	}
	reason := truncateRunes(n.Reason, 500)
	return "", tx.Payment.UpdateOneID(p.ID).SetDisputedAt(now).SetDisputeReason(reason).SetUpdatedAt(now).Exec(ctx)
}

// refundsChanged settles each refund the notification reports: a pending refund of Paygate's
// succeeds or fails; one made at the provider is recorded as a refund here. What it cannot apply
// it says why; it applies the rest.
func (s *Service) refundsChanged(ctx context.Context, tx *ent.Tx, p *ent.Payment, n provider.Notification, actor string, now time.Time) (string, time.Time, error) {
	var ignored []string
	for _, notice := range n.Refunds {
		why, notBefore, err := s.refundChanged(ctx, tx, p, notice, actor, now)
		switch {
		case err != nil:
			return "", time.Time{}, err
		case !notBefore.IsZero():
			return "", notBefore, nil
		case why != "":
			ignored = append(ignored, why)
		}
	}
	if len(n.Refunds) == 0 {
		ignored = append(ignored, "the event reports no refund")
	}
	return strings.Join(ignored, "; "), time.Time{}, nil
}

func (s *Service) refundChanged(ctx context.Context, tx *ent.Tx, p *ent.Payment, notice provider.RefundNotice, actor string, now time.Time) (string, time.Time, error) {
	r, err := findRefund(ctx, tx, p.ID, notice)
	if err != nil {
		return "", time.Time{}, err
	}
	if r == nil {
		if notice.Status != provider.RefundSucceeded {
			return fmt.Sprintf("%s refund %s is unknown here and %s", p.Provider, notice.ProviderRefundID, notice.Status), time.Time{}, nil
		}
		why, err := s.refundMadeAtProvider(ctx, tx, p, notice, actor, now)
		return why, time.Time{}, err
	}
	if r.Status == state.RefundPending && r.ProviderRefundID == nil && now.Sub(r.CreatedAt) < InFlightGrace {
		return "", r.CreatedAt.Add(InFlightGrace), nil
	}
	switch {
	case notice.Status == provider.RefundPending:
		return "", time.Time{}, nil
	case r.Status == state.RefundPending && notice.Status == provider.RefundSucceeded:
		if err := s.keys.Resolve(ctx, tx, r.ID); err != nil {
			return "", time.Time{}, err
		}
		providerRefundID := deref(r.ProviderRefundID)
		if providerRefundID == "" {
			providerRefundID = notice.ProviderRefundID
		}
		return "", time.Time{}, s.settleRefundOutcome(ctx, tx, r, provider.RefundResult{ProviderRefundID: providerRefundID}, nil, actor)
	case r.Status == state.RefundPending && notice.Status == provider.RefundFailed:
		if err := s.keys.Resolve(ctx, tx, r.ID); err != nil {
			return "", time.Time{}, err
		}
		return "", time.Time{}, settleRefund(ctx, tx, r, state.RefundFailed, func(u *ent.RefundUpdate) {
			u.SetFailureCode(refundDeclined)
			if r.ProviderRefundID == nil && notice.ProviderRefundID != "" {
				u.SetProviderRefundID(notice.ProviderRefundID)
			}
		})
	case string(r.Status) == string(notice.Status):
		return "", time.Time{}, nil // settled already: the event agrees
	}
	return fmt.Sprintf("refund %s is %s but %s reports it %s: check it at %s", r.ID, r.Status, p.Provider, notice.Status, p.Provider), time.Time{}, nil
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

// refundMadeAtProvider records a refund made at the provider, outside Paygate (its dashboard):
// the money is back with the cardholder, so the payment counts it. Whatever does not fit the
// payment is not recorded, and needs a person.
func (s *Service) refundMadeAtProvider(ctx context.Context, tx *ent.Tx, p *ent.Payment, notice provider.RefundNotice, actor string, now time.Time) (string, error) {
	switch {
	case notice.ProviderRefundID == "":
		return fmt.Sprintf("a refund of payment %s without %s's id cannot be told from others", p.ID, p.Provider), nil
	case !p.Status.Refundable():
		return fmt.Sprintf("payment %s is %s; %s's refund %s cannot be counted against it", p.ID, p.Status, p.Provider, notice.ProviderRefundID), nil
	case !strings.EqualFold(notice.Currency, p.Currency):
		return fmt.Sprintf("%s's refund %s is in %s, payment %s in %s", p.Provider, notice.ProviderRefundID, notice.Currency, p.ID, p.Currency), nil
	case notice.Amount <= 0 || notice.Amount > p.Amount-p.AmountRefunded:
		return fmt.Sprintf("%s's refund %s of %d is more than the %d left of payment %s", p.Provider, notice.ProviderRefundID, notice.Amount, p.Amount-p.AmountRefunded, p.ID), nil
	}
	count, err := tx.Refund.Query().Where(refund.PaymentID(p.ID)).Count(ctx)
	if err != nil {
		return "", err
	}
	if count >= MaxRefunds {
		return fmt.Sprintf("payment %s has had %d refunds, the most one payment takes; %s's refund %s is not recorded", p.ID, MaxRefunds, p.Provider, notice.ProviderRefundID), nil
	}
	r, err := tx.Refund.Create().
		SetID(prefixid.New("re")).
		SetPaymentID(p.ID).
		SetAmount(notice.Amount).
		SetCurrency(p.Currency).
		SetStatus(state.RefundPending).
		SetProviderRefundID(notice.ProviderRefundID).
		SetReason("made at " + p.Provider).
		SetCreatedAt(now).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return "", err
	}
	return "", s.settleRefundOutcome(ctx, tx, r, provider.RefundResult{ProviderRefundID: notice.ProviderRefundID}, nil, actor)
}

func truncateRunes(s string, most int) string {
	if runes := []rune(s); len(runes) > most {
		return string(runes[:most])
	}
	return s
}
