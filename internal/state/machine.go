package state

import "slices"

// paymentMoves is the payment lifecycle: every move a payment may make. A payment is born
// pending and handed to a provider (processing), which charges it, declines it, asks the shopper
// to authenticate first (requires_action, then processing once they did) or, for a manual
// capture, authorises it (requires_capture). An authorisation is captured (succeeded, or
// processing while a provider that confirms later does so, back to requires_capture if it
// refuses) or voided (canceled); so is an authentication abandoned.
var paymentMoves = map[PaymentStatus][]PaymentStatus{
	PaymentPending:           {PaymentProcessing},
	PaymentProcessing:        {PaymentSucceeded, PaymentFailed, PaymentRequiresAction, PaymentRequiresCapture},
	PaymentRequiresAction:    {PaymentProcessing, PaymentFailed, PaymentCanceled},
	PaymentRequiresCapture:   {PaymentProcessing, PaymentSucceeded, PaymentCanceled},
	PaymentSucceeded:         {PaymentPartiallyRefunded, PaymentRefunded},
	PaymentPartiallyRefunded: {PaymentPartiallyRefunded, PaymentRefunded},
}

// CanMoveTo reports whether a payment in status s may move to next.
func (s PaymentStatus) CanMoveTo(next PaymentStatus) bool {
	return slices.Contains(paymentMoves[s], next)
}

// Refundable reports whether a payment in status s may be refunded (more).
func (s PaymentStatus) Refundable() bool {
	return s.CanMoveTo(PaymentRefunded)
}

// refundMoves is the refund lifecycle: pending, then succeeded or failed, for good.
var refundMoves = map[RefundStatus][]RefundStatus{
	RefundPending: {RefundSucceeded, RefundFailed},
}

// CanMoveTo reports whether a refund in status s may move to next.
func (s RefundStatus) CanMoveTo(next RefundStatus) bool {
	return slices.Contains(refundMoves[s], next)
}
