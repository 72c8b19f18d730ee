package provider

import "errors"

// NotificationKind is what a provider's webhook event says happened, in Paygate's terms.
type NotificationKind string

const (
	// ChargeSucceeded: the charge was approved.
	ChargeSucceeded NotificationKind = "charge_succeeded"
	// ChargeFailed: the charge was declined, or cancelled or failed after it was approved.
	ChargeFailed NotificationKind = "charge_failed"
	// RefundsChanged: one or more refunds of the charge settled (Refunds says which and how),
	// including refunds made at the provider, outside Paygate.
	RefundsChanged NotificationKind = "refunds_changed"
	// Disputed: the cardholder disputed the charge (a chargeback was opened).
	Disputed NotificationKind = "disputed"
	// Unhandled: an event Paygate takes no action on (Reason says which).
	Unhandled NotificationKind = "unhandled"
)

// Notification is one provider webhook event read into what Paygate acts on. Each adapter reads
// its own provider's events, since only it knows the wire format, the decline codes and the
// currency units.
type Notification struct {
	Kind NotificationKind
	// PaymentID is Paygate's payment id as the event carries it (Stripe's metadata, Adyen's
	// merchantReference, Checkout.com's reference), "" when it carries none.
	PaymentID string
	// ProviderPaymentID is the provider's id of the charge.
	ProviderPaymentID string
	// Decline is the charge's decline, for ChargeFailed.
	Decline ChargeResult
	// Refunds are the refunds the event reports, for RefundsChanged.
	Refunds []RefundNotice
	// Reason is the provider's words: the dispute's reason, why the event is Unhandled.
	Reason string
}

// RefundNotice is one refund as a provider's event reports it.
type RefundNotice struct {
	// RefundID is Paygate's refund id when the refund was made through Paygate ("" for a
	// refund made at the provider), ProviderRefundID the provider's.
	RefundID, ProviderRefundID string
	// Amount is in Paygate's minor units of Currency (upper case).
	Amount   int64
	Currency string
	Status   RefundStatus
}

// ErrUnreadable means a verified event lacks what its type must carry.
var ErrUnreadable = errors.New("the event lacks what its type must carry")
