package providertest

import (
	"errors"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/provider"
)

// CheckNotification fails t unless n and err, what an adapter's ReadNotification returned for
// any payload, are what its callers may rely on: an error is provider.ErrUnreadable; a
// notification has a known kind, names its payment unless Unhandled, reports a capture with a
// non-negative amount and an upper-case currency, and reports refunds only when they changed, each
// with the provider's id, a non-negative amount, an upper-case currency
// and a known status.
func CheckNotification(t *testing.T, n provider.Notification, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, provider.ErrUnreadable) {
			t.Errorf("error %v is not provider.ErrUnreadable", err)
		}
		return
	}
	switch n.Kind {
	case provider.ChargeSucceeded, provider.ChargeFailed, provider.RefundsChanged, provider.Disputed,
		provider.Captured, provider.CaptureFailed, provider.Canceled, provider.CancelFailed:
		if n.PaymentID == "" && n.ProviderPaymentID == "" {
			t.Errorf("%s names no payment: %+v", n.Kind, n)
		}
	case provider.Unhandled:
		if n.Reason == "" {
			t.Error("unhandled without a reason")
		}
	default:
		t.Errorf("kind %q", n.Kind)
	}
	if n.Kind == provider.ChargeFailed && n.Decline.DeclineCode != "card_declined" && n.Decline.DeclineCode != "insufficient_funds" &&
		n.Decline.DeclineCode != "expired_card" {
		t.Errorf("decline code %q", n.Decline.DeclineCode)
	}
	if n.Kind == provider.Captured && (n.Amount < 0 || len(n.Currency) != 3 || n.Currency != strings.ToUpper(n.Currency)) {
		t.Errorf("capture of %d %q", n.Amount, n.Currency)
	}
	if n.Kind != provider.RefundsChanged && len(n.Refunds) > 0 {
		t.Errorf("%s with refunds %+v", n.Kind, n.Refunds)
	}
	for _, r := range n.Refunds {
		if r.ProviderRefundID == "" || r.Amount < 0 || len(r.Currency) != 3 || r.Currency != strings.ToUpper(r.Currency) {
			t.Errorf("refund %+v", r)
		}
		switch r.Status {
		case provider.RefundSucceeded, provider.RefundFailed, provider.RefundPending:
		default:
			t.Errorf("refund status %q", r.Status)
		}
	}
}
