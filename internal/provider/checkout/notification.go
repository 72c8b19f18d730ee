package checkout

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Types of the events Paygate reads.
const (
	eventPaymentApproved        = "payment_approved"
	eventPaymentCaptured        = "payment_captured"
	eventPaymentCaptureDeclined = "payment_capture_declined"
	eventPaymentVoided          = "payment_voided"
	eventPaymentVoidDeclined    = "payment_void_declined"
	eventPaymentDeclined        = "payment_declined"
	eventPaymentRefunded        = "payment_refunded"
	eventPaymentRefundDeclined  = "payment_refund_declined"
	eventDisputeReceived        = "dispute_received"

	// A payment whose shopper failed to authenticate (3-D Secure), or did not in time: declined,
	// which Checkout.com tells by this event instead of payment_declined.
	eventPaymentAuthenticationFailed = "payment_authentication_failed"
)

// paymentEvent is what Paygate reads of the data of an event about a payment or one of its
// actions.
type paymentEvent struct {
	ID              string `json:"id"`
	ActionID        string `json:"action_id"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	Reference       string `json:"reference"`
	ResponseCode    string `json:"response_code"`
	ResponseSummary string `json:"response_summary"`
}

// disputeEvent is what Paygate reads of the data of a dispute's event.
type disputeEvent struct {
	Category         string `json:"category"`
	ReasonCode       string `json:"reason_code"`
	PaymentID        string `json:"payment_id"`
	PaymentReference string `json:"payment_reference"`
}

// maxEventBytes bounds the events read: the most a webhook body may be.
const maxEventBytes = 1 << 20

// ReadNotification reads a verified Checkout.com event, the whole event of type eventType, into
// what Paygate acts on. A type Paygate does not act on is Unhandled; one it acts on whose data
// lacks what it must carry is an error wrapping provider.ErrUnreadable.
//
// The data's reference is the one sent with the request: Paygate's payment id on a payment's
// events and on its captures' and voids', Paygate's refund id on a refund's, none on a refund
// made in the Dashboard. So the reference of a refund, a capture or a void is read by its prefix.
//
// payment_authentication_failed is ChargeFailed as payment_declined is: its response code (20151,
// the shopper failed 3-D Secure; 20152, they did not finish it in time) is card_declined. A
// payment waiting for the shopper (payment_pending) is not acted on: the payment waits already.
//
// payment_captured is Captured for every payment, whether captured later or at once (capture
// true, where it follows payment_approved): the payment service takes the capture of a payment
// captured at once as its success.
//
// Amounts are read as Checkout.com counts them (the Chilean peso in hundredths, three-decimal
// currencies in whole hundredths) and converted into Paygate's minor units, as the adapter
// converts them on the way out.
func ReadNotification(eventType string, payload []byte) (provider.Notification, error) {
	switch eventType {
	case eventPaymentApproved, eventPaymentCaptured, eventPaymentCaptureDeclined, eventPaymentVoided, eventPaymentVoidDeclined,
		eventPaymentDeclined, eventPaymentAuthenticationFailed, eventPaymentRefunded, eventPaymentRefundDeclined, eventDisputeReceived:
	default:
		return provider.Notification{Kind: provider.Unhandled, Reason: "checkout.com event type " + eventType + " is not acted on"}, nil
	}
	n, err := readEvent(eventType, payload)
	if err != nil {
		return provider.Notification{}, fmt.Errorf("checkout.com %s: %w", eventType, err)
	}
	return n, nil
}

func readEvent(eventType string, payload []byte) (provider.Notification, error) {
	if len(payload) > maxEventBytes {
		return provider.Notification{}, unreadable("%d bytes, more than %d", len(payload), maxEventBytes)
	}
	var event struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(payload, &event); err != nil {
		return provider.Notification{}, unreadable("not an event")
	}
	var n provider.Notification
	if eventType == eventDisputeReceived {
		var dispute disputeEvent
		if err := json.Unmarshal(event.Data, &dispute); err != nil {
			return provider.Notification{}, unreadable("data is no dispute")
		}
		n = provider.Notification{Kind: provider.Disputed, PaymentID: dispute.PaymentReference, ProviderPaymentID: dispute.PaymentID,
			Reason: cmp.Or(dispute.ReasonCode, dispute.Category)}
	} else {
		var payment paymentEvent
		if err := json.Unmarshal(event.Data, &payment); err != nil {
			return provider.Notification{}, unreadable("data is no payment")
		}
		var err error
		if n, err = readPayment(eventType, payment); err != nil {
			return provider.Notification{}, err
		}
	}
	if n.PaymentID == "" && n.ProviderPaymentID == "" {
		return provider.Notification{}, unreadable("it names no payment")
	}
	return n, nil
}

// unreadable is the error of an event that lacks what its type must carry.
func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{provider.ErrUnreadable}, args...)...)
}

// readPayment reads the data of an event about a payment or one of its actions.
func readPayment(eventType string, payment paymentEvent) (provider.Notification, error) {
	// An action on the authorisation: its id is the payment's.
	onAuthorisation := provider.Notification{PaymentID: paymentReference(payment.Reference), ProviderPaymentID: payment.ID}
	switch eventType {
	case eventPaymentApproved:
		return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: payment.Reference, ProviderPaymentID: payment.ID}, nil
	case eventPaymentDeclined, eventPaymentAuthenticationFailed:
		return provider.Notification{Kind: provider.ChargeFailed, PaymentID: payment.Reference, ProviderPaymentID: payment.ID,
			Decline: decline(payment.ID, payment.ResponseCode, payment.ResponseSummary)}, nil
	case eventPaymentCaptured:
		captured, err := amountOf("capture", payment)
		if err != nil {
			return provider.Notification{}, err
		}
		onAuthorisation.Kind, onAuthorisation.Amount, onAuthorisation.Currency = provider.Captured, captured.Minor, captured.Currency
		return onAuthorisation, nil
	case eventPaymentCaptureDeclined:
		onAuthorisation.Kind, onAuthorisation.Reason = provider.CaptureFailed, cmp.Or(payment.ResponseSummary, payment.ResponseCode)
		return onAuthorisation, nil
	case eventPaymentVoided:
		onAuthorisation.Kind = provider.Canceled
		return onAuthorisation, nil
	case eventPaymentVoidDeclined:
		onAuthorisation.Kind, onAuthorisation.Reason = provider.CancelFailed, cmp.Or(payment.ResponseSummary, payment.ResponseCode)
		return onAuthorisation, nil
	}
	// A refund: its action is the refund, its id the payment's.
	if payment.ActionID == "" {
		return provider.Notification{}, unreadable("refund of %d %q without an action", payment.Amount, payment.Currency)
	}
	refunded, err := amountOf(fmt.Sprintf("refund %q", payment.ActionID), payment)
	if err != nil {
		return provider.Notification{}, err
	}
	notice := provider.RefundNotice{ProviderRefundID: payment.ActionID, Amount: refunded.Minor, Currency: refunded.Currency, Status: provider.RefundFailed}
	if eventType == eventPaymentRefunded {
		notice.Status = provider.RefundSucceeded
	}
	n := provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: payment.ID}
	switch prefixid.Prefix(payment.Reference) {
	case "re":
		notice.RefundID = payment.Reference
	case "pay":
		n.PaymentID = payment.Reference
	}
	n.Refunds = []provider.RefundNotice{notice}
	return n, nil
}

// paymentReference is Paygate's payment id when reference is one, else "".
func paymentReference(reference string) string {
	if prefixid.Prefix(reference) == "pay" {
		return reference
	}
	return ""
}

// amountOf reads the amount of the event's action (what), as Checkout.com counts it, in Paygate's
// minor units.
func amountOf(what string, payment paymentEvent) (money.Amount, error) {
	currency, err := money.ParseCurrency(payment.Currency)
	if err != nil || payment.Amount < 0 {
		return money.Amount{}, unreadable("%s of %d %q", what, payment.Amount, payment.Currency)
	}
	amount, err := counting.Amount(payment.Amount, currency)
	if err != nil {
		return money.Amount{}, unreadable("%s: %v", what, err)
	}
	return amount, nil
}
