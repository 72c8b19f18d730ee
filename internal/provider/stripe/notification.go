package stripe

import (
	"encoding/json"
	"fmt"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

// paygateIDKey is the metadata key under which the adapter sends Paygate's id of a payment (on
// its PaymentIntent, which Stripe copies to the intent's charge) or of a refund.
const paygateIDKey = "paygate_id"

// maxEventBytes bounds the events read: the most a webhook body may be.
const maxEventBytes = 1 << 20

// ReadNotification reads a verified Stripe event, the whole event of type eventType, into what
// Paygate acts on. A type Paygate does not act on is Unhandled; one it acts on whose object lacks
// what it must carry is an error wrapping provider.ErrUnreadable.
//
// An object that is not a PaymentIntent made through Paygate carries no paygate_id, and its
// PaymentID is "": the provider's ids still name the charge.
func ReadNotification(eventType string, payload []byte) (provider.Notification, error) {
	read, actedOn := readers[stripego.EventType(eventType)]
	if !actedOn {
		return provider.Notification{Kind: provider.Unhandled, Reason: "stripe event type " + eventType + " is not acted on"}, nil
	}
	n, err := readEvent(payload, read)
	if err != nil {
		return provider.Notification{}, fmt.Errorf("stripe %s: %w", eventType, err)
	}
	return n, nil
}

// readers read the object of each event type Paygate acts on.
var readers = map[stripego.EventType]func(object json.RawMessage) (provider.Notification, error){
	stripego.EventTypePaymentIntentSucceeded: readSucceeded,
	// Stripe tells of an authorisation made to capture manually by this event, and of its
	// capture by payment_intent.succeeded; of a voided one (canceled, or let lapse) by
	// payment_intent.canceled.
	stripego.EventTypePaymentIntentAmountCapturableUpdated: tellsOf(provider.ChargeSucceeded),
	stripego.EventTypePaymentIntentPaymentFailed:           readPaymentFailed,
	stripego.EventTypePaymentIntentCanceled:                tellsOf(provider.Canceled),
	stripego.EventTypeChargeRefunded:                       readChargeRefunded,
	stripego.EventTypeChargeRefundUpdated:                  readRefundUpdated,
	// Since API version 2022-11-15 charge.refunded no longer lists the charge's refunds: Stripe
	// reports each refund, one made in its dashboard too, by these events, whose object is the
	// refund, as charge.refund.updated's is.
	stripego.EventTypeRefundCreated:        readRefundUpdated,
	stripego.EventTypeRefundUpdated:        readRefundUpdated,
	stripego.EventTypeRefundFailed:         readRefundUpdated,
	stripego.EventTypeChargeDisputeCreated: readDisputeCreated,
}

func readEvent(payload []byte, read func(object json.RawMessage) (provider.Notification, error)) (provider.Notification, error) {
	if len(payload) > maxEventBytes {
		return provider.Notification{}, unreadable("%d bytes, more than %d", len(payload), maxEventBytes)
	}
	var event stripego.Event
	if err := json.Unmarshal(payload, &event); err != nil || event.Data == nil {
		return provider.Notification{}, unreadable("not an event with data")
	}
	n, err := read(event.Data.Raw)
	if err == nil && n.PaymentID == "" && n.ProviderPaymentID == "" {
		err = unreadable("it names no payment")
	}
	return n, err
}

// unreadable is the error of an event that lacks what its type must carry.
func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{provider.ErrUnreadable}, args...)...)
}

// The readers check each object's name: stripe-go reads a bare JSON string as an object's id.

func readIntent(object json.RawMessage) (*stripego.PaymentIntent, error) {
	var intent stripego.PaymentIntent
	if json.Unmarshal(object, &intent) != nil || intent.Object != "payment_intent" {
		return nil, unreadable("data.object is no payment_intent")
	}
	return &intent, nil
}

// readSucceeded reads a charge captured at once as an approval, and one made to capture manually
// as its capture, of amount_received.
func readSucceeded(object json.RawMessage) (provider.Notification, error) {
	intent, err := readIntent(object)
	if err != nil {
		return provider.Notification{}, err
	}
	n := provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: intent.Metadata[paygateIDKey], ProviderPaymentID: intent.ID}
	if intent.CaptureMethod != stripego.PaymentIntentCaptureMethodManual {
		return n, nil
	}
	captured, err := paygateAmount(intent.AmountReceived, string(intent.Currency))
	if err != nil {
		return provider.Notification{}, fmt.Errorf("amount_received: %w", err)
	}
	n.Kind, n.Amount, n.Currency = provider.Captured, captured.Minor, captured.Currency
	return n, nil
}

// tellsOf reads an event whose PaymentIntent says no more than that kind happened to it.
func tellsOf(kind provider.NotificationKind) func(object json.RawMessage) (provider.Notification, error) {
	return func(object json.RawMessage) (provider.Notification, error) {
		intent, err := readIntent(object)
		if err != nil {
			return provider.Notification{}, err
		}
		return provider.Notification{Kind: kind, PaymentID: intent.Metadata[paygateIDKey], ProviderPaymentID: intent.ID}, nil
	}
}

// readPaymentFailed reads the intent's last error as Charge reads a decline.
func readPaymentFailed(object json.RawMessage) (provider.Notification, error) {
	intent, err := readIntent(object)
	if err != nil {
		return provider.Notification{}, err
	}
	if intent.LastPaymentError == nil {
		return provider.Notification{}, unreadable("payment intent %s has no last_payment_error", intent.ID)
	}
	n := provider.Notification{Kind: provider.ChargeFailed, PaymentID: intent.Metadata[paygateIDKey], ProviderPaymentID: intent.ID,
		Decline: decline(intent.LastPaymentError)}
	n.Decline.ProviderPaymentID = intent.ID
	return n, nil
}

// readChargeRefunded reads the charge's refunds and how much is refunded in all. Stripe embeds
// the refunds in the charge only at API versions before 2022-11-15 (the sandbox embeds them);
// without them Refunds is empty, and the total says whether there are refunds to ask Stripe for.
func readChargeRefunded(object json.RawMessage) (provider.Notification, error) {
	var charge stripego.Charge
	if json.Unmarshal(object, &charge) != nil || charge.Object != "charge" {
		return provider.Notification{}, unreadable("data.object is no charge")
	}
	n := provider.Notification{Kind: provider.RefundsChanged, PaymentID: charge.Metadata[paygateIDKey]}
	if charge.PaymentIntent != nil {
		n.ProviderPaymentID = charge.PaymentIntent.ID
	}
	refunded, err := paygateAmount(charge.AmountRefunded, string(charge.Currency))
	if err != nil {
		return provider.Notification{}, fmt.Errorf("amount_refunded: %w", err)
	}
	n.RefundedTotal = &refunded.Minor
	if charge.Refunds == nil {
		return n, nil
	}
	for _, refund := range charge.Refunds.Data {
		notice, err := refundNotice(refund)
		if err != nil {
			return provider.Notification{}, err
		}
		n.Refunds = append(n.Refunds, notice)
	}
	return n, nil
}

// readRefundUpdated reads the one refund. A refund carries no metadata of its payment, so the
// payment is named by its PaymentIntent alone.
func readRefundUpdated(object json.RawMessage) (provider.Notification, error) {
	var refund stripego.Refund
	if json.Unmarshal(object, &refund) != nil || refund.Object != "refund" {
		return provider.Notification{}, unreadable("data.object is no refund")
	}
	notice, err := refundNotice(&refund)
	if err != nil {
		return provider.Notification{}, err
	}
	n := provider.Notification{Kind: provider.RefundsChanged, Refunds: []provider.RefundNotice{notice}}
	if refund.PaymentIntent != nil {
		n.ProviderPaymentID = refund.PaymentIntent.ID
	}
	return n, nil
}

func readDisputeCreated(object json.RawMessage) (provider.Notification, error) {
	var dispute stripego.Dispute
	if json.Unmarshal(object, &dispute) != nil || dispute.Object != "dispute" {
		return provider.Notification{}, unreadable("data.object is no dispute")
	}
	n := provider.Notification{Kind: provider.Disputed, Reason: string(dispute.Reason)}
	if dispute.PaymentIntent != nil {
		n.ProviderPaymentID = dispute.PaymentIntent.ID
	}
	return n, nil
}

// refundNotice reads a refund, its amount in Paygate's units.
func refundNotice(refund *stripego.Refund) (provider.RefundNotice, error) {
	if refund == nil || refund.ID == "" || refund.Status == "" {
		return provider.RefundNotice{}, unreadable("a refund without an id or a status")
	}
	amount, err := paygateAmount(refund.Amount, string(refund.Currency))
	if err != nil {
		return provider.RefundNotice{}, fmt.Errorf("refund %s: %w", refund.ID, err)
	}
	return provider.RefundNotice{RefundID: refund.Metadata[paygateIDKey], ProviderRefundID: refund.ID, Amount: amount.Minor,
		Currency: amount.Currency, Status: refundStatus(refund.Status)}, nil
}

// paygateAmount is an amount Stripe counts in its units of currency (lower case), in Paygate's.
func paygateAmount(stripeAmount int64, currency string) (money.Amount, error) {
	code, err := money.ParseCurrency(currency)
	if err != nil {
		return money.Amount{}, unreadable("currency %q", currency)
	}
	amount, err := counting.Amount(stripeAmount, code)
	if err != nil || stripeAmount < 0 {
		return money.Amount{}, unreadable("amount %d %s", stripeAmount, code)
	}
	return amount, nil
}
