package adyen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Refusal reasons of Adyen's that Paygate tells apart. A notification gives the reason's text
// alone, not the refusalReasonCode of the payment's answer.
const (
	refusalNotEnoughBalance = "Not enough balance"
	refusalExpiredCard      = "Expired Card"
)

// maxItemBytes bounds the items read: the most a webhook body may be.
const maxItemBytes = 1 << 20

// ReadNotification reads one verified item of an Adyen notification (its NotificationRequestItem)
// with the event code eventType into what Paygate acts on. A code Paygate does not act on is
// Unhandled; an item of a code it acts on that lacks what the code must carry is an error wrapping
// provider.ErrUnreadable.
//
// The item's merchantReference is the reference the adapter sent: Paygate's payment id on a
// payment's events (its authorisation, capture and cancellation), Paygate's refund id on a
// refund's. A modification made in Adyen's Customer Area carries another reference (a refund its
// payment's), so a modification's merchantReference is read by its prefix, and its payment is
// named by the originalReference.
//
// Amounts are read as Adyen counts them (the Chilean peso and the króna in hundredths, the
// escudo and the rupiah whole) and converted into Paygate's minor units, as the adapter converts
// them on the way out.
func ReadNotification(eventType string, payload []byte) (provider.Notification, error) {
	switch eventType {
	case eventAuthorisation, eventRefund, eventRefundFailed, eventCapture, eventCaptureFailed, eventCancellation, eventChargeback:
	default:
		return provider.Notification{Kind: provider.Unhandled, Reason: "adyen event code " + eventType + " is not acted on"}, nil
	}
	n, err := readItem(eventType, payload)
	if err != nil {
		return provider.Notification{}, fmt.Errorf("adyen %s: %w", eventType, err)
	}
	return n, nil
}

func readItem(eventCode string, payload []byte) (provider.Notification, error) {
	if len(payload) > maxItemBytes {
		return provider.Notification{}, unreadable("%d bytes, more than %d", len(payload), maxItemBytes)
	}
	var item notificationItem
	if err := json.Unmarshal(payload, &item); err != nil {
		return provider.Notification{}, unreadable("not a notification item")
	}
	if item.PSPReference == "" || (item.Success != "true" && item.Success != "false") {
		return provider.Notification{}, unreadable("pspReference %q, success %q", item.PSPReference, item.Success)
	}
	succeeded := item.Success == "true"
	var n provider.Notification
	switch eventCode {
	case eventAuthorisation:
		n = provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: item.MerchantReference, ProviderPaymentID: item.PSPReference}
		if !succeeded {
			n.Kind, n.Decline = provider.ChargeFailed, refusal(item.PSPReference, item.Reason)
		}
	case eventRefund, eventRefundFailed:
		// REFUND_FAILED comes with success "true": the failure is the event.
		var err error
		if n, err = readRefund(item, eventCode == eventRefund && succeeded); err != nil {
			return provider.Notification{}, err
		}
	case eventCapture, eventCaptureFailed:
		// The item's pspReference is the capture's own. CAPTURE_FAILED, the card scheme refusing
		// a capture Adyen had confirmed, comes with success "true" as REFUND_FAILED does.
		n = provider.Notification{Kind: provider.CaptureFailed, PaymentID: paygatePaymentID(item.MerchantReference),
			ProviderPaymentID: item.OriginalReference, Reason: item.Reason}
		if eventCode == eventCapture && succeeded {
			captured, err := readAmount(item)
			if err != nil {
				return provider.Notification{}, err
			}
			n.Kind, n.Reason, n.Amount, n.Currency = provider.Captured, "", captured.Minor, captured.Currency
		}
	case eventCancellation:
		// An authorisation Adyen voided on its own comes with no originalReference: the item is
		// the payment's.
		payment := cmp.Or(item.OriginalReference, item.PSPReference)
		n = provider.Notification{Kind: provider.Canceled, PaymentID: paygatePaymentID(item.MerchantReference), ProviderPaymentID: payment}
		if !succeeded {
			n.Kind, n.Reason = provider.CancelFailed, item.Reason
		}
	case eventChargeback:
		n = provider.Notification{Kind: provider.Disputed, PaymentID: item.MerchantReference, ProviderPaymentID: item.OriginalReference,
			Reason: item.Reason}
	}
	if n.PaymentID == "" && n.ProviderPaymentID == "" {
		return provider.Notification{}, unreadable("it names no payment")
	}
	return n, nil
}

// unreadable is the error of an item that lacks what its event code must carry.
func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{provider.ErrUnreadable}, args...)...)
}

// refusal is the decline of an AUTHORISATION that did not succeed, mapped as Charge maps the
// refusal's code.
func refusal(pspReference, reason string) provider.ChargeResult {
	result := provider.ChargeResult{ProviderPaymentID: pspReference, DeclineCode: "card_declined", RawDeclineCode: reason, DeclineMessage: reason}
	switch {
	case strings.EqualFold(reason, refusalNotEnoughBalance):
		result.DeclineCode = "insufficient_funds"
	case strings.EqualFold(reason, refusalExpiredCard):
		result.DeclineCode = "expired_card"
	}
	return result
}

// readRefund reads a refund's item: the refund is its pspReference, its payment the
// originalReference.
func readRefund(item notificationItem, succeeded bool) (provider.Notification, error) {
	refunded, err := readAmount(item)
	if err != nil {
		return provider.Notification{}, err
	}
	notice := provider.RefundNotice{ProviderRefundID: item.PSPReference, Amount: refunded.Minor, Currency: refunded.Currency, Status: provider.RefundFailed}
	if succeeded {
		notice.Status = provider.RefundSucceeded
	}
	n := provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: item.OriginalReference}
	switch prefixid.Prefix(item.MerchantReference) {
	case "re":
		notice.RefundID = item.MerchantReference
	case "pay":
		n.PaymentID = item.MerchantReference
	}
	n.Refunds = []provider.RefundNotice{notice}
	return n, nil
}

// readAmount reads the item's amount, which must be in a currency and not below zero, into
// Paygate's minor units.
func readAmount(item notificationItem) (money.Amount, error) {
	currency, err := money.ParseCurrency(item.Amount.Currency)
	if err != nil || item.Amount.Value == nil || *item.Amount.Value < 0 {
		return money.Amount{}, unreadable("amount in %q missing or below zero", item.Amount.Currency)
	}
	read, err := counting.Amount(*item.Amount.Value, currency)
	if err != nil {
		return money.Amount{}, unreadable("%v", err)
	}
	return read, nil
}

// paygatePaymentID is a modification's merchantReference when it is a payment id of Paygate's, ""
// otherwise: one made in Adyen's Customer Area names the payment by its originalReference alone.
func paygatePaymentID(merchantReference string) string {
	if prefixid.Prefix(merchantReference) != "pay" {
		return ""
	}
	return merchantReference
}
