package provider

import "errors"

// NotificationKind is what a provider's webhook event says happened, in Paygate's terms.
type NotificationKind string

const (
	// ChargeSucceeded: the charge was approved; for a charge made to capture manually, its amount
	// was authorised and is held until captured.
	ChargeSucceeded NotificationKind = "charge_succeeded"
	// ChargeFailed: the charge was declined, or failed after it was approved.
	ChargeFailed NotificationKind = "charge_failed"
	// RefundsChanged: one or more refunds of the charge settled or changed (Refunds says which
	// and how), including refunds made at the provider, outside Paygate. Refunds is empty when
	// the event says no more than that the charge's refunds changed (Stripe's charge.refunded
	// at API versions that no longer embed them): the refunds are then to be looked up.
	RefundsChanged NotificationKind = "refunds_changed"
	// Captured: the provider captured the authorisation of a charge made to capture manually
	// (Amount and Currency say how much).
	Captured NotificationKind = "captured"
	// CaptureFailed: the provider refused a capture it had taken; the authorisation stands.
	CaptureFailed NotificationKind = "capture_failed"
	// Canceled: the charge's authorisation was voided, by a cancellation or because it lapsed.
	Canceled NotificationKind = "canceled"
	// CancelFailed: the provider refused a cancellation it had taken.
	CancelFailed NotificationKind = "cancel_failed"
	// Disputed: the cardholder disputed the charge (a chargeback was opened).
	Disputed NotificationKind = "disputed"
	// Unhandled: an event Paygate takes no action on (Reason says which).
	Unhandled NotificationKind = "unhandled"
)

// Notification is one provider webhook event read into what Paygate acts on. Each adapter reads
// its own provider's events (its ReadNotification), since only it knows the wire format, the
// decline codes and the currency units. Every kind but Unhandled names its payment by
// PaymentID, ProviderPaymentID or both.
type Notification struct {
	Kind NotificationKind
	// PaymentID is Paygate's payment id as the event carries it (Stripe's metadata, Adyen's
	// merchantReference, Checkout.com's reference), "" when it carries none.
	PaymentID string
	// ProviderPaymentID is the provider's id of the charge.
	ProviderPaymentID string
	// Decline is the charge's decline, for ChargeFailed: its DeclineCode mapped as the adapter
	// maps a charge's decline, RawDeclineCode the provider's code or words for it (Adyen's
	// notifications give the refusal reason's text, not its code), and its ProviderPaymentID
	// ProviderPaymentID.
	Decline ChargeResult
	// Refunds are the refunds the event reports, for RefundsChanged.
	Refunds []RefundNotice
	// RefundedTotal, for RefundsChanged, is how much of the charge the provider says is refunded
	// in all, in Paygate's minor units, when the event says so (Stripe's charge.refunded); nil
	// when it does not. An event that names no refunds but a total above Paygate's record has
	// its refunds asked of the provider (RefundLister).
	RefundedTotal *int64
	// Amount, for Captured, is how much was captured, in Paygate's minor units of Currency
	// (upper case).
	Amount   int64
	Currency string
	// Reason is the provider's words: the dispute's reason, why a capture or cancellation
	// failed, why the event is Unhandled.
	Reason string
}

// RefundNotice is one refund as a provider's event reports it.
type RefundNotice struct {
	// RefundID is Paygate's refund id when the refund was made through Paygate ("" for a
	// refund made at the provider), ProviderRefundID the provider's.
	RefundID, ProviderRefundID string
	// Amount is in Paygate's minor units of Currency (upper case), never negative.
	Amount   int64
	Currency string
	// Status is RefundSucceeded, RefundFailed or RefundPending.
	Status RefundStatus
}

// ErrUnreadable means a verified event of a type Paygate acts on lacks what its type must carry
// (it is no JSON of the type's shape, names no payment, or has an amount that is negative or in
// no currency); an event of a type Paygate does not act on is Unhandled, never unreadable.
var ErrUnreadable = errors.New("the event lacks what its type must carry")
