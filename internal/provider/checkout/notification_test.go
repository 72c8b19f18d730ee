package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	ckosandbox "github.com/paygate/paygate/internal/provider/checkout/sandbox"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// deliveredEvent is a webhook's event as the receiver hands it to ReadNotification: its type and
// the whole body.
type deliveredEvent struct {
	Type    string
	Payload []byte
}

// deliveredSince returns a function that waits for the sandbox's deliveries under way and returns
// the events delivered since it was last called.
func deliveredSince(t *testing.T, sandbox *ckosandbox.Sandbox, receiver *providertest.WebhookReceiver) func() []deliveredEvent {
	seen := 0
	return func() []deliveredEvent {
		t.Helper()
		sandbox.WaitForWebhooks()
		bodies := receiver.Verified(t)
		var fresh []deliveredEvent
		for _, body := range bodies[seen:] {
			var e struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			fresh = append(fresh, deliveredEvent{Type: e.Type, Payload: body})
		}
		seen = len(bodies)
		return fresh
	}
}

// TestReadSandboxEvents reads the events the sandbox sends for payments, refunds through the
// adapter as they settle, and each simulation, each as it comes.
func TestReadSandboxEvents(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		clock := providertest.NewClock()
		sandbox, c, receiver := webhookSandboxOn(t, db, clock.Now)
		ctx := context.Background()
		next := deliveredSince(t, sandbox, receiver)

		var approved provider.ChargeRequest
		var payment provider.ChargeResult
		declined := func(number, code, raw string) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				req := providertest.Charge(t, number, 500)
				result, err := c.Charge(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				want := provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: code, RawDeclineCode: raw, DeclineMessage: "Declined"}
				if result != want {
					t.Errorf("the adapter's own decline %+v, want %+v", result, want)
				}
				return provider.Notification{Kind: provider.ChargeFailed, PaymentID: req.PaymentID, ProviderPaymentID: result.ProviderPaymentID, Decline: want}
			}
		}
		// refund refunds minor through the adapter, which Checkout.com tells of only as it settles.
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
		steps := []struct {
			name      string
			eventType string
			// do acts and returns what its one event must read as.
			do func(t *testing.T) provider.Notification
		}{
			{"approved", "payment_approved", func(t *testing.T) provider.Notification {
				approved = providertest.Charge(t, providertest.Approved, 5000)
				var err error
				if payment, err = c.Charge(ctx, approved); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID}
			}},
			{"do not honour", "payment_declined", declined(providertest.Declined, "card_declined", "20005")},
			{"insufficient funds", "payment_declined", declined(providertest.InsufficientFunds, "insufficient_funds", "20051")},
			{"expired card", "payment_declined", declined(providertest.ExpiredCard, "expired_card", "20054")},
			{"refund settled", "payment_refunded", refund(300, provider.RefundSucceeded)},
			{"refund of 13.13 declined at settlement", "payment_refund_declined", refund(provider.FailingRefundMinor, provider.RefundFailed)},
			{"dispute", "dispute_received", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateDispute, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Disputed, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID, Reason: "10.4"}
			}},
			{"refund in the Dashboard", "payment_refunded", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateRefund, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: payment.ProviderPaymentID,
					Refunds: []provider.RefundNotice{{ProviderRefundID: dashboardRefund(t, db.Ent, payment.ProviderPaymentID), Amount: 5000 - 300,
						Currency: "EUR", Status: provider.RefundSucceeded}}}
			}},
			{"late failure", "payment_declined", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.ChargeFailed, PaymentID: approved.PaymentID, ProviderPaymentID: payment.ProviderPaymentID,
					Decline: provider.ChargeResult{ProviderPaymentID: payment.ProviderPaymentID, DeclineCode: "card_declined", RawDeclineCode: "20005",
						DeclineMessage: "Declined - Do Not Honour"}}
			}},
		}
		for _, step := range steps {
			want := step.do(t)
			events := next()
			if len(events) != 1 || events[0].Type != step.eventType {
				t.Fatalf("%s: events %v, want one %s", step.name, events, step.eventType)
			}
			got, err := ReadNotification(events[0].Type, events[0].Payload)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read\n%+v, %v; want\n%+v", step.name, got, err, want)
			}
		}
	})
}

// dashboardRefund is the action id of the one refund of the payment that Paygate did not make, as
// the sandbox stored it.
func dashboardRefund(t *testing.T, db *ent.Client, paymentID string) string {
	t.Helper()
	refunds, err := sandboxstore.New(db, Name, time.Now).Refunds(context.Background(), paymentID, 100)
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
		t.Fatalf("refunds made in the Dashboard: %v, want one", ids)
	}
	return ids[0]
}

const (
	paygatePayment = "pay_01jgz0000000000000000000aa"
	paygateRefund  = "re_01jgz0000000000000000000aa"
	ckoPayment     = "pay_mbabizu24mvu3mela5njyhpit4"
	ckoAction      = "act_y3oqhf46pyzuxjbcn2giaqnb44"
)

// eventJSON is a Checkout.com event of type kind about data (JSON), in the shape Checkout.com
// sends.
func eventJSON(kind, data string) string {
	return `{"id":"evt_az5sblvku4ge3dwpztvyizgcau","type":"` + kind + `","version":"1.0.33","created_on":"2025-01-01T12:00:00.000Z",` +
		`"data":` + data + `,"_links":{"self":{"href":"https://api.sandbox.checkout.com/workflows/events/evt_az5sblvku4ge3dwpztvyizgcau"}}}`
}

// paymentData is the data of a payment's event with its action, amount (JSON), currency,
// reference (left out when empty) and response.
func paymentData(action, amount, currency, reference, code, summary string) string {
	data := `{"id":"` + ckoPayment + `","action_id":"` + action + `","amount":` + amount + `,"currency":"` + currency + `",`
	if reference != "" {
		data += `"reference":"` + reference + `",`
	}
	return data + `"response_code":"` + code + `","response_summary":"` + summary + `","processed_on":"2025-01-01T12:00:00.000Z",` +
		`"metadata":{},"balances":{"total_authorized":2000,"total_captured":2000,"total_refunded":0,"available_to_refund":2000}}`
}

func disputeData(paymentID, reference, reasonCode string) string {
	return `{"id":"dsp_rbhwd2qrg13uhrp2newf","category":"fraudulent","status":"evidence_required","amount":2000,"currency":"EUR",` +
		`"reason_code":"` + reasonCode + `","payment_id":"` + paymentID + `","payment_reference":"` + reference + `",` +
		`"payment_arn":"74548998294293193445538","payment_method":"VISA","evidence_required_by":"2025-01-08T12:00:00.000Z",` +
		`"received_on":"2025-01-01T12:00:00.000Z"}`
}

// readCases are events written by hand, in Checkout.com's shape, for what the sandbox never
// sends, and malformed ones.
var readCases = []struct {
	name, eventType, payload string
	want                     provider.Notification
	unreadable               bool
}{
	{name: "captured", eventType: "payment_captured", payload: eventJSON("payment_captured", paymentData(ckoAction, "2000", "EUR", paygatePayment, "10000", "Approved")),
		want: provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Amount: 2000, Currency: "EUR"}},
	{name: "captured in Chilean pesos, counted in hundredths", eventType: "payment_captured",
		payload: eventJSON("payment_captured", paymentData(ckoAction, "150000", "CLP", paygatePayment, "10000", "Approved")),
		want:    provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Amount: 1500, Currency: "CLP"}},
	{name: "captured in the Dashboard, under another reference", eventType: "payment_captured",
		payload: eventJSON("payment_captured", paymentData(ckoAction, "500", "JPY", "order-42", "10000", "Approved")),
		want:    provider.Notification{Kind: provider.Captured, ProviderPaymentID: ckoPayment, Amount: 500, Currency: "JPY"}},
	{name: "capture declined", eventType: "payment_capture_declined",
		payload: eventJSON("payment_capture_declined", paymentData(ckoAction, "2000", "EUR", paygatePayment, "20005", "Declined - Do Not Honour")),
		want:    provider.Notification{Kind: provider.CaptureFailed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Reason: "Declined - Do Not Honour"}},
	{name: "voided", eventType: "payment_voided", payload: eventJSON("payment_voided", paymentData(ckoAction, "2000", "EUR", paygatePayment, "10000", "Approved")),
		want: provider.Notification{Kind: provider.Canceled, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment}},
	{name: "void declined, with a code alone", eventType: "payment_void_declined",
		payload: eventJSON("payment_void_declined", paymentData(ckoAction, "2000", "EUR", paygatePayment, "20005", "")),
		want:    provider.Notification{Kind: provider.CancelFailed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Reason: "20005"}},
	{name: "approved", eventType: "payment_approved", payload: eventJSON("payment_approved", paymentData(ckoAction, "2000", "EUR", paygatePayment, "10000", "Approved")),
		want: provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment}},
	{name: "declined, insufficient funds", eventType: "payment_declined",
		payload: eventJSON("payment_declined", paymentData(ckoAction, "2000", "EUR", paygatePayment, "20051", "Insufficient Funds")),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment,
			Decline: provider.ChargeResult{ProviderPaymentID: ckoPayment, DeclineCode: "insufficient_funds", RawDeclineCode: "20051", DeclineMessage: "Insufficient Funds"}}},
	{name: "declined, restricted card", eventType: "payment_declined",
		payload: eventJSON("payment_declined", paymentData(ckoAction, "2000", "EUR", paygatePayment, "20062", "Restricted Card")),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment,
			Decline: provider.ChargeResult{ProviderPaymentID: ckoPayment, DeclineCode: "card_declined", RawDeclineCode: "20062", DeclineMessage: "Restricted Card"}}},
	{name: "authentication failed", eventType: "payment_authentication_failed",
		payload: eventJSON("payment_authentication_failed", `{"id":"`+ckoPayment+`","action_id":"`+ckoAction+`","processed_on":"2025-01-01T12:00:00.000Z",`+
			`"reference":"`+paygatePayment+`","amount":2000,"currency":"EUR","response_code":"20151","response_summary":"Cardholder failed 3D-Secure authentication",`+
			`"3ds":{"authentication_status_reason":"01","authentication_id":"sid_y7u4zjxld2iureedktq7qb4weq","version":"2.1.0","challenged":true,`+
			`"redirect_url":"https://api.sandbox.checkout.com/sessions-interceptor/sid_y7u4zjxld2iureedktq7qb4weq"},"metadata":{}}`),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment,
			Decline: provider.ChargeResult{ProviderPaymentID: ckoPayment, DeclineCode: "card_declined", RawDeclineCode: "20151",
				DeclineMessage: "Cardholder failed 3D-Secure authentication"}}},
	{name: "refund declined", eventType: "payment_refund_declined",
		payload: eventJSON("payment_refund_declined", paymentData(ckoAction, "700", "EUR", paygateRefund, "20005", "Declined - Do Not Honour")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: ckoPayment, Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: ckoAction, Amount: 700, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "refund under the payment's reference", eventType: "payment_refunded",
		payload: eventJSON("payment_refunded", paymentData(ckoAction, "100000", "BHD", paygatePayment, "10000", "Approved")),
		want: provider.Notification{Kind: provider.RefundsChanged, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Refunds: []provider.RefundNotice{
			{ProviderRefundID: ckoAction, Amount: 100000, Currency: "BHD", Status: provider.RefundSucceeded}}}},
	{name: "refund in Chilean pesos, counted in hundredths", eventType: "payment_refunded",
		payload: eventJSON("payment_refunded", paymentData(ckoAction, "150000", "CLP", paygateRefund, "10000", "Approved")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: ckoPayment, Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: ckoAction, Amount: 1500, Currency: "CLP", Status: provider.RefundSucceeded}}}},
	{name: "refund under another reference", eventType: "payment_refunded",
		payload: eventJSON("payment_refunded", paymentData(ckoAction, "500", "JPY", "order-42", "10000", "Approved")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: ckoPayment, Refunds: []provider.RefundNotice{
			{ProviderRefundID: ckoAction, Amount: 500, Currency: "JPY", Status: provider.RefundSucceeded}}}},
	{name: "dispute without a reason code", eventType: "dispute_received", payload: eventJSON("dispute_received", disputeData(ckoPayment, paygatePayment, "")),
		want: provider.Notification{Kind: provider.Disputed, PaymentID: paygatePayment, ProviderPaymentID: ckoPayment, Reason: "fraudulent"}},

	{name: "unknown type", eventType: "payment_pending", payload: eventJSON("payment_pending", paymentData(ckoAction, "2000", "EUR", paygatePayment, "", "")),
		want: provider.Notification{Kind: provider.Unhandled, Reason: "checkout.com event type payment_pending is not acted on"}},
	{name: "a type not acted on, however malformed", eventType: "card_verified", payload: `{`,
		want: provider.Notification{Kind: provider.Unhandled, Reason: "checkout.com event type card_verified is not acted on"}},

	{name: "bad JSON", eventType: "payment_approved", payload: `{"id":"evt_1","data":`, unreadable: true},
	{name: "no data", eventType: "payment_approved", payload: `{"id":"evt_1","type":"payment_approved"}`, unreadable: true},
	{name: "data null", eventType: "payment_approved", payload: eventJSON("payment_approved", "null"), unreadable: true},
	{name: "data a string", eventType: "payment_captured", payload: eventJSON("payment_captured", `"pay_1"`), unreadable: true},
	{name: "approved, naming no payment", eventType: "payment_approved", payload: eventJSON("payment_approved", `{"action_id":"act_1","amount":100,"currency":"EUR"}`),
		unreadable: true},
	{name: "capture without currency", eventType: "payment_captured", payload: eventJSON("payment_captured", paymentData(ckoAction, "2000", "", paygatePayment, "10000", "Approved")),
		unreadable: true},
	{name: "negative capture", eventType: "payment_captured", payload: eventJSON("payment_captured", paymentData(ckoAction, "-2000", "EUR", paygatePayment, "10000", "Approved")),
		unreadable: true},
	{name: "capture of a fraction of a peso", eventType: "payment_captured",
		payload: eventJSON("payment_captured", paymentData(ckoAction, "150050", "CLP", paygatePayment, "10000", "Approved")), unreadable: true},
	{name: "void naming no payment", eventType: "payment_voided", payload: eventJSON("payment_voided", `{"action_id":"act_1","amount":100,"currency":"EUR","reference":"order-42"}`),
		unreadable: true},
	{name: "refund without an action", eventType: "payment_refunded", payload: eventJSON("payment_refunded", paymentData("", "700", "EUR", paygateRefund, "10000", "Approved")),
		unreadable: true},
	{name: "negative refund", eventType: "payment_refunded", payload: eventJSON("payment_refunded", paymentData(ckoAction, "-700", "EUR", paygateRefund, "10000", "Approved")),
		unreadable: true},
	{name: "refund of a fraction", eventType: "payment_refunded", payload: eventJSON("payment_refunded", paymentData(ckoAction, "7.5", "EUR", paygateRefund, "10000", "Approved")),
		unreadable: true},
	{name: "refund of a fraction of a peso", eventType: "payment_refunded", payload: eventJSON("payment_refunded", paymentData(ckoAction, "150050", "CLP", paygateRefund, "10000", "Approved")),
		unreadable: true},
	{name: "refund without currency", eventType: "payment_refund_declined",
		payload: eventJSON("payment_refund_declined", paymentData(ckoAction, "700", "", paygateRefund, "20005", "Declined")), unreadable: true},
	{name: "refund in no currency", eventType: "payment_refunded", payload: eventJSON("payment_refunded", paymentData(ckoAction, "700", "ABC", paygateRefund, "10000", "Approved")),
		unreadable: true},
	{name: "refund naming no payment", eventType: "payment_refunded",
		payload: eventJSON("payment_refunded", `{"action_id":"act_1","amount":100,"currency":"EUR","reference":"re_1"}`), unreadable: true},
	{name: "authentication failed, naming no payment", eventType: "payment_authentication_failed",
		payload: eventJSON("payment_authentication_failed", `{"action_id":"act_1","amount":100,"currency":"EUR","response_code":"20152"}`), unreadable: true},
	{name: "dispute naming no payment", eventType: "dispute_received", payload: eventJSON("dispute_received", disputeData("", "", "10.4")), unreadable: true},
	{name: "more than 1 MiB", eventType: "payment_approved",
		payload: eventJSON("payment_approved", paymentData(ckoAction, "2000", "EUR", paygatePayment, "10000", strings.Repeat("x", maxEventBytes))), unreadable: true},
}

func TestReadNotification(t *testing.T) {
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadNotification(c.eventType, []byte(c.payload))
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
			f.Add(c.eventType, []byte(c.payload))
		}
	}
	f.Fuzz(func(t *testing.T, eventType string, payload []byte) {
		n, err := ReadNotification(eventType, payload)
		providertest.CheckNotification(t, n, err)
	})
}
