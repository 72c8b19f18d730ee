package adyen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// deliveredItem is one item of a webhook as the receiver hands it to ReadNotification: its event
// code and the item's own JSON.
type deliveredItem struct {
	EventCode string
	Payload   []byte
}

// deliveredSince returns a function that waits for the sandbox's deliveries under way and returns
// the items delivered since it was last called.
func deliveredSince(t *testing.T, sandbox *adyensandbox.Sandbox, receiver *providertest.WebhookReceiver) func() []deliveredItem {
	seen := 0
	return func() []deliveredItem {
		t.Helper()
		sandbox.WaitForWebhooks()
		bodies := receiver.Verified(t)
		var fresh []deliveredItem
		for _, body := range bodies[seen:] {
			var n struct {
				NotificationItems []struct {
					Item json.RawMessage `json:"NotificationRequestItem"`
				} `json:"notificationItems"`
			}
			if err := json.Unmarshal(body, &n); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			for _, wrapped := range n.NotificationItems {
				var item struct {
					EventCode string `json:"eventCode"`
				}
				if err := json.Unmarshal(wrapped.Item, &item); err != nil {
					t.Fatalf("%v: %s", err, wrapped.Item)
				}
				fresh = append(fresh, deliveredItem{EventCode: item.EventCode, Payload: wrapped.Item})
			}
		}
		seen = len(bodies)
		return fresh
	}
}

// TestReadSandboxNotifications reads the notifications the sandbox sends for payments, refunds
// through the adapter as they settle, captures and cancellations, and each simulation, each as it
// comes.
func TestReadSandboxNotifications(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		clock := providertest.NewClock()
		receiver := providertest.NewWebhookReceiver(t, verify)
		c, sandbox := newClient(t, db, clock.Now)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
			t.Fatal(err)
		}
		next := deliveredSince(t, sandbox, receiver)

		var approved, authorisation provider.ChargeRequest
		var payment, held provider.ChargeResult
		declined := func(number, code, reason string) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				req := providertest.Charge(t, number, 500)
				result, err := c.Charge(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if result.DeclineCode != code {
					t.Errorf("the adapter declined %+v, want %s", result, code)
				}
				return provider.Notification{Kind: provider.ChargeFailed, PaymentID: req.PaymentID, ProviderPaymentID: result.ProviderPaymentID,
					Decline: provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: code, RawDeclineCode: reason, DeclineMessage: reason}}
			}
		}
		// refund refunds minor through the adapter, which Adyen tells of only as it settles.
		refund := func(minor int64, status provider.RefundStatus) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				req := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: payment.ProviderPaymentID,
					Amount: money.Amount{Minor: minor, Currency: "EUR"}}
				result, err := c.Refund(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if early := next(); len(early) != 0 {
					t.Errorf("told of a refund before it settled: %v", early)
				}
				clock.Advance(provider.DefaultSettleAfter + time.Second)
				if n, err := sandbox.Settle(ctx); n != 1 || err != nil {
					t.Fatalf("settled %d, %v", n, err)
				}
				return provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: payment.ProviderPaymentID,
					Refunds: []provider.RefundNotice{{RefundID: req.RefundID, ProviderRefundID: result.ProviderRefundID, Amount: minor,
						Currency: "EUR", Status: status}}}
			}
		}
		authorise := func(t *testing.T) provider.Notification {
			authorisation, held = providertest.Authorize(t, c, providertest.Approved, 5000)
			return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: authorisation.PaymentID, ProviderPaymentID: held.ProviderPaymentID}
		}
		steps := []struct {
			name      string
			eventCode string
			// do acts and returns what its one item must read as.
			do func(t *testing.T) provider.Notification
		}{
			{"authorised", "AUTHORISATION", func(t *testing.T) provider.Notification {
				approved = providertest.Charge(t, providertest.Approved, 5000)
				var err error
				if payment, err = c.Charge(ctx, approved); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID}
			}},
			{"refused", "AUTHORISATION", declined(providertest.Declined, "card_declined", "Refused")},
			{"not enough balance", "AUTHORISATION", declined(providertest.InsufficientFunds, "insufficient_funds", "Not enough balance")},
			{"expired card", "AUTHORISATION", declined(providertest.ExpiredCard, "expired_card", "Expired Card")},
			{"authorised to capture manually", "AUTHORISATION", authorise},
			{"captured in part", "CAPTURE", func(t *testing.T) provider.Notification {
				if _, err := c.Capture(ctx, provider.CaptureRequest{PaymentID: authorisation.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
					Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Captured, PaymentID: authorisation.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
					Amount: 3000, Currency: "EUR"}
			}},
			{"authorised to cancel", "AUTHORISATION", authorise},
			{"cancelled", "CANCELLATION", func(t *testing.T) provider.Notification {
				if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: authorisation.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
					Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Canceled, PaymentID: authorisation.PaymentID, ProviderPaymentID: held.ProviderPaymentID}
			}},
			{"refund settled", "REFUND", refund(300, provider.RefundSucceeded)},
			{"refund of 13.13 failed at settlement", "REFUND_FAILED", refund(provider.FailingRefundMinor, provider.RefundFailed)},
			{"chargeback", "CHARGEBACK", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateDispute, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Disputed, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID,
					Reason: "Other Fraud-Card Absent Environment"}
			}},
			{"refund in the Customer Area", "REFUND", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateRefund, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.RefundsChanged, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID,
					Refunds: []provider.RefundNotice{{ProviderRefundID: customerAreaRefund(t, db.Ent, payment.ProviderPaymentID), Amount: 5000 - 300,
						Currency: "EUR", Status: provider.RefundSucceeded}}}
			}},
			{"cancellation at Adyen", "CANCELLATION", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Canceled, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID}
			}},
		}
		for _, step := range steps {
			want := step.do(t)
			items := next()
			if len(items) != 1 || items[0].EventCode != step.eventCode {
				t.Fatalf("%s: items %v, want one %s", step.name, items, step.eventCode)
			}
			got, err := ReadNotification(items[0].EventCode, items[0].Payload)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read\n%+v, %v; want\n%+v", step.name, got, err, want)
			}
		}
	})
}

// customerAreaRefund is the pspReference of the one refund of the payment that Paygate did not
// make: Adyen answers no look-ups, so the sandbox's store is asked.
func customerAreaRefund(t *testing.T, db *ent.Client, pspReference string) string {
	t.Helper()
	refunds, err := sandboxstore.New(db, Name, time.Now).Refunds(context.Background(), pspReference, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refunds {
		if r.Reference == "" {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("refunds made in the Customer Area: %v, want one", ids)
	}
	return ids[0]
}

const (
	paygatePayment = "pay_01jgz0000000000000000000aa"
	paygateRefund  = "re_01jgz0000000000000000000aa"
)

// itemJSON is a NotificationRequestItem in the shape Adyen sends; amount is its amount object
// (JSON), and an empty reference is left out.
func itemJSON(eventCode, success, pspReference, originalReference, merchantReference, amount, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"additionalData":{"hmacSignature":"c2lnbmVk","expiryDate":"03/2030","cardSummary":"1111"},"amount":%s,`, amount)
	fmt.Fprintf(&b, `"eventCode":%q,"eventDate":"2025-01-01T12:00:00+01:00","merchantAccountCode":"PaygateTest",`, eventCode)
	if merchantReference != "" {
		fmt.Fprintf(&b, `"merchantReference":%q,`, merchantReference)
	}
	if originalReference != "" {
		fmt.Fprintf(&b, `"originalReference":%q,`, originalReference)
	}
	if pspReference != "" {
		fmt.Fprintf(&b, `"pspReference":%q,`, pspReference)
	}
	fmt.Fprintf(&b, `"reason":%q,"success":%q}`, reason, success)
	return b.String()
}

const eur = `{"currency":"EUR","value":1000}`

// readCases are items written by hand, in Adyen's shape, for what the sandbox never sends, and
// malformed ones.
var readCases = []struct {
	name, eventCode, payload string
	want                     provider.Notification
	unreadable               bool
}{
	{name: "authorised", eventCode: "AUTHORISATION", payload: itemJSON("AUTHORISATION", "true", "8535296650153317", "", paygatePayment, eur, "061532:1111:03/2030"),
		want: provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317"}},
	{name: "refused, not enough balance", eventCode: "AUTHORISATION",
		payload: itemJSON("AUTHORISATION", "false", "8535296650153317", "", paygatePayment, eur, "Not enough balance"),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317",
			Decline: provider.ChargeResult{ProviderPaymentID: "8535296650153317", DeclineCode: "insufficient_funds", RawDeclineCode: "Not enough balance",
				DeclineMessage: "Not enough balance"}}},
	{name: "refused, CVC declined", eventCode: "AUTHORISATION",
		payload: itemJSON("AUTHORISATION", "false", "8535296650153317", "", paygatePayment, eur, "CVC Declined"),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317",
			Decline: provider.ChargeResult{ProviderPaymentID: "8535296650153317", DeclineCode: "card_declined", RawDeclineCode: "CVC Declined",
				DeclineMessage: "CVC Declined"}}},
	{name: "refund not successful", eventCode: "REFUND",
		payload: itemJSON("REFUND", "false", "8835511210681145", "8535296650153317", paygateRefund, eur, "Insufficient balance on payment"),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "8835511210681145", Amount: 1000, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "refund failed, success true", eventCode: "REFUND_FAILED",
		payload: itemJSON("REFUND_FAILED", "true", "8835511210681145", "8535296650153317", paygateRefund, eur, "Refund rejected"),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "8835511210681145", Amount: 1000, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "refund in yen", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"JPY","value":500}`, ""),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "8835511210681145", Amount: 500, Currency: "JPY", Status: provider.RefundSucceeded}}}},
	// Adyen counts pesos and krónur in hundredths, escudos and rupiahs whole, unlike ISO 4217.
	{name: "refund in Chilean pesos, counted in hundredths", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"CLP","value":150000}`, ""),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "8835511210681145", Amount: 1500, Currency: "CLP", Status: provider.RefundSucceeded}}}},
	{name: "refund in escudos, counted whole", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"CVE","value":25}`, ""),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "8835511210681145", Amount: 2500, Currency: "CVE", Status: provider.RefundSucceeded}}}},
	{name: "refund made elsewhere, under another reference", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", "order-42", eur, ""),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "8535296650153317", Refunds: []provider.RefundNotice{
			{ProviderRefundID: "8835511210681145", Amount: 1000, Currency: "EUR", Status: provider.RefundSucceeded}}}},
	{name: "captured", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, eur, ""),
		want:    provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317", Amount: 1000, Currency: "EUR"}},
	{name: "captured in Chilean pesos, counted in hundredths", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, `{"currency":"CLP","value":150000}`, ""),
		want:    provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317", Amount: 1500, Currency: "CLP"}},
	{name: "captured in the Customer Area, under another reference", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", "order-42", eur, ""),
		want:    provider.Notification{Kind: provider.Captured, ProviderPaymentID: "8535296650153317", Amount: 1000, Currency: "EUR"}},
	{name: "capture not successful", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "false", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, eur, "Insufficient balance on payment"),
		want: provider.Notification{Kind: provider.CaptureFailed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317",
			Reason: "Insufficient balance on payment"}},
	{name: "capture failed, success true", eventCode: "CAPTURE_FAILED",
		payload: itemJSON("CAPTURE_FAILED", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, eur, "Capture rejected by the card scheme"),
		want: provider.Notification{Kind: provider.CaptureFailed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317",
			Reason: "Capture rejected by the card scheme"}},
	{name: "cancelled", eventCode: "CANCELLATION",
		payload: itemJSON("CANCELLATION", "true", "JDD6LKT8MBLZNN84", "8535296650153317", paygatePayment, eur, ""),
		want:    provider.Notification{Kind: provider.Canceled, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317"}},
	{name: "cancellation not successful", eventCode: "CANCELLATION",
		payload: itemJSON("CANCELLATION", "false", "8835511210681145", "8535296650153317", paygatePayment, eur, "Transaction not cancellable"),
		want: provider.Notification{Kind: provider.CancelFailed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317",
			Reason: "Transaction not cancellable"}},
	{name: "cancellation without originalReference", eventCode: "CANCELLATION",
		payload: itemJSON("CANCELLATION", "true", "8535296650153317", "", paygatePayment, eur, ""),
		want:    provider.Notification{Kind: provider.Canceled, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317"}},
	{name: "chargeback", eventCode: "CHARGEBACK", payload: itemJSON("CHARGEBACK", "true", "9915555555555555", "8535296650153317", paygatePayment, eur, "Merchandise/Services Not Received"),
		want: provider.Notification{Kind: provider.Disputed, PaymentID: paygatePayment, ProviderPaymentID: "8535296650153317", Reason: "Merchandise/Services Not Received"}},

	{name: "unknown code", eventCode: "REPORT_AVAILABLE", payload: itemJSON("REPORT_AVAILABLE", "true", "PaygateTest_report", "", "", `{"currency":"EUR","value":0}`, "https://example.test/report.csv"),
		want: provider.Notification{Kind: provider.Unhandled, Reason: "adyen event code REPORT_AVAILABLE is not acted on"}},
	{name: "a code not acted on, however malformed", eventCode: "OFFER_CLOSED", payload: `{`,
		want: provider.Notification{Kind: provider.Unhandled, Reason: "adyen event code OFFER_CLOSED is not acted on"}},

	{name: "bad JSON", eventCode: "AUTHORISATION", payload: `{"pspReference":`, unreadable: true},
	{name: "not an object", eventCode: "AUTHORISATION", payload: `["8535296650153317"]`, unreadable: true},
	{name: "no pspReference", eventCode: "AUTHORISATION", payload: itemJSON("AUTHORISATION", "true", "", "", paygatePayment, eur, ""), unreadable: true},
	{name: "success neither true nor false", eventCode: "AUTHORISATION",
		payload: itemJSON("AUTHORISATION", "yes", "8535296650153317", "", paygatePayment, eur, ""), unreadable: true},
	{name: "negative refund", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"EUR","value":-1}`, ""), unreadable: true},
	{name: "refund without currency", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"value":1000}`, ""), unreadable: true},
	{name: "refund in no currency", eventCode: "REFUND_FAILED",
		payload: itemJSON("REFUND_FAILED", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"XYZ","value":1000}`, ""), unreadable: true},
	{name: "refund, its amount a fraction", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"EUR","value":10.5}`, ""), unreadable: true},
	{name: "refund of a fraction of a króna", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "8535296650153317", paygateRefund, `{"currency":"ISK","value":150}`, ""), unreadable: true},
	{name: "refund naming no payment", eventCode: "REFUND",
		payload: itemJSON("REFUND", "true", "8835511210681145", "", paygateRefund, eur, ""), unreadable: true},
	{name: "capture without currency", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, `{"value":1000}`, ""), unreadable: true},
	{name: "negative capture", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, `{"currency":"EUR","value":-1}`, ""), unreadable: true},
	{name: "capture of a fraction of an escudo", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "8535296650153317", paygatePayment, `{"currency":"CVE","value":2.5}`, ""), unreadable: true},
	// A capture's own pspReference is not its payment's.
	{name: "capture naming no payment", eventCode: "CAPTURE",
		payload: itemJSON("CAPTURE", "true", "QJCMPCBRJRGXWD82", "", "order-42", eur, ""), unreadable: true},
	{name: "capture failure naming no payment", eventCode: "CAPTURE_FAILED",
		payload: itemJSON("CAPTURE_FAILED", "true", "QJCMPCBRJRGXWD82", "", "", eur, "Capture rejected"), unreadable: true},
	{name: "chargeback naming no payment", eventCode: "CHARGEBACK",
		payload: itemJSON("CHARGEBACK", "true", "9915555555555555", "", "", eur, "Fraud"), unreadable: true},
	{name: "more than 1 MiB", eventCode: "AUTHORISATION",
		payload: itemJSON("AUTHORISATION", "true", "8535296650153317", "", paygatePayment, eur, strings.Repeat("x", maxItemBytes)), unreadable: true},
}

func TestReadNotification(t *testing.T) {
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadNotification(c.eventCode, []byte(c.payload))
			switch {
			case c.unreadable && !errors.Is(err, provider.ErrUnreadable):
				t.Errorf("read %+v, %v; want ErrUnreadable", got, err)
			case !c.unreadable && (err != nil || !reflect.DeepEqual(got, c.want)):
				t.Errorf("read\n%+v, %v; want\n%+v", got, err, c.want)
			}
		})
	}
}

func FuzzReadNotification(f *testing.F) {
	for _, c := range readCases {
		if len(c.payload) <= 64<<10 {
			f.Add(c.eventCode, []byte(c.payload))
		}
	}
	f.Fuzz(func(t *testing.T, eventCode string, payload []byte) {
		n, err := ReadNotification(eventCode, payload)
		providertest.CheckNotification(t, n, err)
	})
}
