package payment

import (
	"context"
	"fmt"
	"strings"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// A provider tells what became of a charge in three ways: its answer to the request, its webhook
// events, and reconciliation's look-ups. Each way reads what it is told into a chargeOutcome, and
// applyChargeOutcome records it, so a payment settles the same whichever way the news came.

// chargeOutcome is what became of a payment's charge, as its provider tells it.
type chargeOutcome struct {
	// status is PaymentSucceeded or PaymentFailed, PaymentRequiresAction while the provider waits
	// for the shopper to authenticate, or PaymentProcessing while nobody can tell.
	status state.PaymentStatus
	// reason is the status history's reason for the move: "approved", the decline code, or why
	// nothing was charged.
	reason string
	// recorded are the columns the outcome sets: the provider's id of the charge, and why it failed.
	recorded changes
	// captured and canceled are, for a payment captured manually whose charge succeeded, how much
	// of its authorisation the provider says was captured, and whether it was voided.
	captured int64
	canceled bool
}

// chargeInDoubt is the outcome of a charge whose answer was lost or that its provider cannot tell
// of yet.
var chargeInDoubt = chargeOutcome{status: state.PaymentProcessing}

// chargeAnswered is the outcome a provider's answer gives: approved, or declined with its codes.
// The provider's text is made to fit its column whichever way it came: any of them can carry
// anything, and PostgreSQL refuses a NUL.
func chargeAnswered(result provider.ChargeResult) chargeOutcome {
	var providerPaymentID *string // none when the provider gave none, rather than an id ""
	if result.ProviderPaymentID != "" {
		providerPaymentID = &result.ProviderPaymentID
	}
	if result.AwaitsShopper() {
		if len(result.RedirectURL) > maxNextActionURL || !provider.WebAddress(result.RedirectURL) {
			// No browser can be sent there, so nobody can authenticate: the provider's charge
			// lapses unauthorised, and the payment fails now rather than wait for it.
			return chargeOutcome{status: state.PaymentFailed, reason: "unusable authentication page", recorded: changes{
				providerPaymentID:   providerPaymentID,
				providerDeclineCode: ptr("unusable_redirect"),
				failureCode:         ptr(string(apierror.CardDeclined)),
				failureMessage:      ptr("The payment provider asked to send the shopper to a page that is not a web address."),
			}}
		}
		return chargeOutcome{status: state.PaymentRequiresAction, reason: "authentication asked",
			recorded: changes{providerPaymentID: providerPaymentID, nextActionURL: &result.RedirectURL}}
	}
	if result.Approved {
		return chargeOutcome{status: state.PaymentSucceeded, reason: "approved", recorded: changes{providerPaymentID: providerPaymentID},
			captured: result.Captured, canceled: result.Canceled}
	}
	return chargeOutcome{status: state.PaymentFailed, reason: result.DeclineCode, recorded: changes{
		providerPaymentID:   providerPaymentID,
		providerDeclineCode: ptr(clean(result.RawDeclineCode, 200)),
		failureCode:         &result.DeclineCode,
		failureMessage:      ptr(clean(result.DeclineMessage, 500)),
	}}
}

// notCharged is the outcome of a charge that no provider made: failed, for reason, with nothing
// charged.
func notCharged(reason, message string) chargeOutcome {
	return chargeOutcome{status: state.PaymentFailed, reason: reason, recorded: changes{
		failureCode:    ptr(string(apierror.ProviderUnavailable)),
		failureMessage: &message,
	}}
}

// sentCharge is how the request that charged a payment sent it: the provider it asked last (""
// when none could be asked) and the routing that chose it. Only that request knows it.
type sentCharge struct {
	provider string
	routing  state.RoutingDecision
}

// applyChargeOutcome records within tx what p's provider says became of p's charge, by actor; p
// is the payment as tx holds it locked, or as recorded when o's first move is conditional on its
// being unchanged since (changes.unchangedSince). A payment in doubt (processing) moves to the
// outcome, and the calls that made it and ended in doubt answer with it from now on; one waiting
// for the shopper to authenticate (requires_action) moves once the provider decided. Nothing else
// moves: a payment the provider cannot tell of yet stays as it is, and a settled one never moves
// back (the verdict says whether the outcome contradicts its record). sent, when not nil, is kept
// whatever became of the charge.
func (s *Service) applyChargeOutcome(ctx context.Context, tx *ent.Tx, p *ent.Payment, o chargeOutcome, actor string, sent *sentCharge) (verdict, error) {
	if !o.moves(p) {
		if sent != nil {
			if err := tx.Payment.UpdateOneID(p.ID).SetProvider(sent.provider).SetRouting(&sent.routing).Exec(ctx); err != nil {
				return verdict{}, err
			}
			p.Provider, p.Routing = sent.provider, &sent.routing
		}
		if o.status == state.PaymentSucceeded && canceledWhileWaiting(p) {
			return s.lateApproval(ctx, tx, p, o, actor)
		}
		return o.against(p), nil
	}
	path, c := s.chargeMoves(p, o, sent)
	if err := s.moveThrough(ctx, tx, p, path, o.reason, actor, c); err != nil {
		return verdict{}, err
	}
	// After the move, which holds the payment's lock if a read under it did not: the payment's
	// lock before its keys', the order every writer takes them in.
	return agreed(), s.keys.Resolve(ctx, tx, p.ID)
}

// chargeMoves is the path outcome o, which moves payment p, moves it along, and the changes that
// go with its last move (the sending of the charge among them, when sent is not nil).
func (s *Service) chargeMoves(p *ent.Payment, o chargeOutcome, sent *sentCharge) ([]state.PaymentStatus, changes) {
	c := o.recorded
	if sent != nil {
		c.provider, c.routing = &sent.provider, &sent.routing
	}
	path := []state.PaymentStatus{o.status}
	switch o.status {
	case state.PaymentSucceeded:
		path = s.approved(p, o, &c)
	case state.PaymentRequiresAction:
		c.authenticateBefore = ptr(s.now().Add(AuthenticationWindow))
	}
	if p.Status == state.PaymentRequiresAction {
		if o.status == state.PaymentSucceeded {
			path = append([]state.PaymentStatus{state.PaymentProcessing}, path...)
		}
		// A cancellation claimed while the shopper was away still voids an authorisation held,
		// and its answer records that; of a payment captured or declined it has nothing left to
		// cancel, and gives up.
		held := path[len(path)-1] == state.PaymentRequiresCapture
		c.clearPending, c.clearCancellation = !held, !held && p.PendingAction != nil
	}
	return path, c
}

// moves reports whether o moves payment p: one in doubt, to whatever the provider says; one
// waiting for the shopper, to the provider's decision. A capture is never waited on the shopper
// for: a payment being captured was authorised before it was sent for capture, so an answer
// asking for authentication is stale and moves nothing. Thus a payment waits for its shopper
// only from the processing it was created in, once (see MaxStatusChanges).
func (o chargeOutcome) moves(p *ent.Payment) bool {
	switch p.Status {
	case state.PaymentProcessing:
		return o.status != state.PaymentProcessing && (o.status != state.PaymentRequiresAction || !capturing(p))
	case state.PaymentRequiresAction:
		return o.status == state.PaymentSucceeded || o.status == state.PaymentFailed
	}
	return false
}

// approved is where an approved charge takes payment p, and what it records on the way (into c):
// a payment captured at once is paid in full; one captured manually is authorised, holding its
// amount until capture_before, unless the provider says it was captured or voided since.
func (s *Service) approved(p *ent.Payment, o chargeOutcome, c *changes) []state.PaymentStatus {
	switch {
	case p.CaptureMethod != state.CaptureManual:
		c.amountCaptured = &p.Amount
		return []state.PaymentStatus{state.PaymentSucceeded}
	case o.captured > 0:
		c.amountCaptured, c.amountCapturable, c.clearPending = ptr(min(o.captured, p.Amount)), ptr(int64(0)), true
		return []state.PaymentStatus{state.PaymentSucceeded}
	case o.canceled:
		c.amountCapturable, c.canceledAt, c.cancellationReason, c.clearPending = ptr(int64(0)), ptr(s.now()), p.CancellationReason, true
		return []state.PaymentStatus{state.PaymentRequiresCapture, state.PaymentCanceled}
	}
	c.amountCapturable, c.clearPending = &p.Amount, true
	if p.CaptureBefore == nil {
		c.captureBefore = ptr(s.now().Add(s.captureWindow()))
	}
	return []state.PaymentStatus{state.PaymentRequiresCapture}
}

// against is the verdict on o for payment p, which o does not move. An approval of a payment
// recorded failed needs a person: the provider took money for it, to be refunded there (one
// canceled while it waited is undone by Paygate: lateApproval). A failure reported after the
// approval (a cancellation, a late decline) does not move the payment back, and is kept as the
// reason it was ignored.
func (o chargeOutcome) against(p *ent.Payment) verdict {
	switch {
	case o.status == state.PaymentSucceeded && p.Status == state.PaymentFailed:
		return attention(fmt.Sprintf("payment %s is recorded %s but %s reports it approved: void or refund it at %s", p.ID, p.Status, p.Provider, p.Provider))
	case o.status == state.PaymentFailed && p.Status == state.PaymentCanceled:
		return ignore(fmt.Sprintf("payment %s is canceled; %s reports it declined, which agrees: nothing was charged", p.ID, p.Provider))
	case o.status == state.PaymentFailed && p.Status != state.PaymentFailed && p.Status != state.PaymentProcessing:
		why := strings.TrimSpace(deref(o.recorded.providerDeclineCode) + " " + deref(o.recorded.failureMessage))
		return attention(fmt.Sprintf("payment %s is %s; a failure reported after its approval (%s) does not move it back: check it at %s",
			p.ID, p.Status, clean(why, 200), p.Provider))
	}
	return agreed() // the same outcome, or one still in doubt
}

// refundOutcome is what became of a refund, as its provider tells it.
type refundOutcome struct {
	// status is RefundSucceeded or RefundFailed, or RefundPending while the provider has not
	// settled it.
	status state.RefundStatus
	// providerRefundID is the provider's id of the refund, "" when it gave none.
	providerRefundID string
	// failureCode says why it failed.
	failureCode string
}

// refundAnswered is the outcome of a provider's answer to a refund request; outage, when not nil,
// says it refunded nothing.
func refundAnswered(result provider.RefundResult, outage error) refundOutcome {
	switch {
	case outage != nil:
		return refundOutcome{status: state.RefundFailed, failureCode: string(apierror.ProviderUnavailable)}
	case result.Pending:
		return refundOutcome{status: state.RefundPending, providerRefundID: result.ProviderRefundID}
	}
	return refundOutcome{status: state.RefundSucceeded, providerRefundID: result.ProviderRefundID}
}

// refundReported is the outcome of a refund as its provider's event or look-up tells it.
func refundReported(status provider.RefundStatus, providerRefundID string) refundOutcome {
	o := refundOutcome{status: state.RefundPending, providerRefundID: providerRefundID}
	switch status {
	case provider.RefundSucceeded:
		o.status = state.RefundSucceeded
	case provider.RefundFailed: // taken, then refused
		o.status, o.failureCode = state.RefundFailed, refundDeclined
	case provider.RefundNotFound: // it never reached the provider
		o.status, o.failureCode = state.RefundFailed, string(apierror.ProviderUnavailable)
	}
	return o
}

// refundDeclined is the failure code of a refund the provider took and then refused.
const refundDeclined = "refund_declined"

// applyRefundOutcome records within tx what the provider says became of refund r of payment p, by
// actor; p is the payment as tx holds it locked, current with what tx wrote to it (move keeps it
// so), as the refunded total is counted from it; r is as read under that lock. A pending refund
// settles, and the calls that made it and ended in doubt answer with it from now on; one that
// succeeded is counted against the payment. One the provider has taken but not settled stays
// pending, holding its amount, with the provider's id so later events and look-ups find it. A
// settled refund stays as it is: the verdict says whether the outcome contradicts it.
func (s *Service) applyRefundOutcome(ctx context.Context, tx *ent.Tx, p *ent.Payment, r *ent.Refund, o refundOutcome, actor string) (verdict, error) {
	switch {
	case r.Status != state.RefundPending:
		if o.status == state.RefundPending || o.status == r.Status {
			return agreed(), nil
		}
		return attention(fmt.Sprintf("refund %s is %s but %s reports it %s: check it at %s", r.ID, r.Status, p.Provider, o.status, p.Provider)), nil
	case o.status == state.RefundPending:
		if r.ProviderRefundID != nil || o.providerRefundID == "" {
			return agreed(), nil
		}
		return agreed(), s.updateRefund(ctx, tx, r, o)
	}
	// The payment's lock, held, before the refund's keys': the order every writer takes them in.
	if err := s.keys.Resolve(ctx, tx, r.ID); err != nil {
		return verdict{}, err
	}
	if err := s.updateRefund(ctx, tx, r, o); err != nil {
		return verdict{}, err
	}
	if o.status == state.RefundFailed {
		return agreed(), nil
	}
	refunded := p.AmountRefunded + r.Amount
	next := state.PaymentPartiallyRefunded
	if refunded == p.AmountCaptured {
		next = state.PaymentRefunded
	}
	return agreed(), s.move(ctx, tx, p, next, "refund "+r.ID, actor, changes{amountRefunded: &refunded})
}
