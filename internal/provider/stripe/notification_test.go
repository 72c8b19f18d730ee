package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/stripe/sandbox"
)

// deliveredEvent is a webhook's event as the receiver hands it to ReadNotification: its type and
// the whole body.
type deliveredEvent struct {
	Type    string
	Payload []byte
}

// deliveredSince returns a function that waits for the sandbox's deliveries under way and returns
// the events delivered since it was last called.
func deliveredSince(t *testing.T, sandbox *sandbox.Sandbox, receiver *providertest.WebhookReceiver) func() []deliveredEvent {
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

// TestReadSandboxEvents reads the events the sandbox sends for charges, authorisations and their
// captures and cancellations, refunds through the adapter, each simulation, and charges the
// shopper authenticated, each as it comes: a charge decided on the shopper's page is told of as
// any other, so that it settles if the browser never comes back.
func TestReadSandboxEvents(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		next := deliveredSince(t, sandbox, receiver)

		var approved, failing, authorised, voided provider.ChargeRequest
		var charge, failingCharge, authorisation, voidedAuthorisation provider.ChargeResult
		var refunds []provider.RefundNotice // of charge, newest first, as Stripe lists them
		chargeOK := func(req *provider.ChargeRequest, result *provider.ChargeResult, minor int64) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				*req = providertest.Charge(t, providertest.Approved, minor)
				var err error
				if *result, err = c.Charge(ctx, *req); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: result.ProviderPaymentID}
			}
		}
		declined := func(number, code, raw string) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				req := providertest.Charge(t, number, 500)
				result, err := c.Charge(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				want := provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: code, RawDeclineCode: raw,
					DeclineMessage: "Your card was declined."}
				if result != want {
					t.Errorf("the adapter's own decline %+v, want %+v", result, want)
				}
				return provider.Notification{Kind: provider.ChargeFailed, PaymentID: req.PaymentID, ProviderPaymentID: result.ProviderPaymentID, Decline: want}
			}
		}
		refund := func(minor int64) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				req := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charge.ProviderPaymentID,
					Amount: money.Amount{Minor: minor, Currency: "EUR"}}
				result, err := c.Refund(ctx, req)
				if err != nil || result.Pending {
					t.Fatalf("refund = %+v, %v; Stripe refunds at once", result, err)
				}
				refunds = append([]provider.RefundNotice{{RefundID: req.RefundID, ProviderRefundID: result.ProviderRefundID, Amount: minor,
					Currency: "EUR", Status: provider.RefundSucceeded}}, refunds...)
				return provider.Notification{Kind: provider.RefundsChanged, PaymentID: approved.PaymentID, ProviderPaymentID: charge.ProviderPaymentID,
					Refunds: refunds, RefundedTotal: refundedOf(refunds)}
			}
		}
		authorise := func(req *provider.ChargeRequest, result *provider.ChargeResult) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				*req, *result = providertest.Authorize(t, c, providertest.Approved, 5000)
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: result.ProviderPaymentID}
			}
		}
		var challenged provider.ChargeRequest
		var challenge provider.ChargeResult
		awaitShopper := func(number string, manual bool) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				challenged = providertest.Charge(t, number, 2500)
				challenged.CaptureManually, challenged.ReturnURL = manual, "https://shop.example/paid"
				var err error
				if challenge, err = c.Charge(ctx, challenged); err != nil || !challenge.AwaitsShopper() {
					t.Fatalf("charge = %+v, %v; want a page for the shopper", challenge, err)
				}
				// Paygate knows from the answer: it waits for the shopper.
				return provider.Notification{Kind: provider.Unhandled, Reason: "stripe event type payment_intent.requires_action is not acted on"}
			}
		}
		// authenticate has the shopper submit outcome on the page; a zero decline says approved.
		authenticate := func(outcome string, decline provider.ChargeResult) func(t *testing.T) provider.Notification {
			return func(t *testing.T) provider.Notification {
				providertest.Shopper(t, challenge.RedirectURL, outcome)
				n := provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: challenged.PaymentID, ProviderPaymentID: challenge.ProviderPaymentID}
				if decline != (provider.ChargeResult{}) {
					decline.ProviderPaymentID = challenge.ProviderPaymentID
					n.Kind, n.Decline = provider.ChargeFailed, decline
				}
				return n
			}
		}
		steps := []struct {
			name      string
			eventType string
			// do acts and returns what its one event must read as.
			do func(t *testing.T) provider.Notification
		}{
			{"approved", "payment_intent.succeeded", chargeOK(&approved, &charge, 5000)},
			{"declined", "payment_intent.payment_failed", declined(providertest.Declined, "card_declined", "generic_decline")},
			{"insufficient funds", "payment_intent.payment_failed", declined(providertest.InsufficientFunds, "insufficient_funds", "insufficient_funds")},
			{"expired card", "payment_intent.payment_failed", declined(providertest.ExpiredCard, "expired_card", "expired_card")},
			{"refund", "charge.refunded", refund(300)},
			// Stripe settles refunds at once: the sandbox refuses none, 13.13 neither.
			{"refund of 13.13", "charge.refunded", refund(provider.FailingRefundMinor)},
			{"dispute", "charge.dispute.created", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateDispute, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Disputed, ProviderPaymentID: charge.ProviderPaymentID, Reason: "fraudulent"}
			}},
			{"refund at Stripe", "charge.refunded", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateRefund, approved.PaymentID); err != nil {
					t.Fatal(err)
				}
				refunds = append([]provider.RefundNotice{{ProviderRefundID: dashboardRefund(t, c, charge.ProviderPaymentID), Amount: 5000 - 300 - 1313,
					Currency: "EUR", Status: provider.RefundSucceeded}}, refunds...)
				return provider.Notification{Kind: provider.RefundsChanged, PaymentID: approved.PaymentID, ProviderPaymentID: charge.ProviderPaymentID,
					Refunds: refunds, RefundedTotal: refundedOf(refunds)}
			}},
			{"approved, to fail late", "payment_intent.succeeded", chargeOK(&failing, &failingCharge, 700)},
			{"late failure", "payment_intent.payment_failed", func(t *testing.T) provider.Notification {
				if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, failing.PaymentID); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.ChargeFailed, PaymentID: failing.PaymentID, ProviderPaymentID: failingCharge.ProviderPaymentID,
					Decline: provider.ChargeResult{ProviderPaymentID: failingCharge.ProviderPaymentID, DeclineCode: "card_declined",
						RawDeclineCode: "generic_decline", DeclineMessage: "Your card was declined."}}
			}},
			{"authorised", "payment_intent.amount_capturable_updated", authorise(&authorised, &authorisation)},
			{"captured", "payment_intent.succeeded", func(t *testing.T) provider.Notification {
				if _, err := c.Capture(ctx, provider.CaptureRequest{PaymentID: authorised.PaymentID, ProviderPaymentID: authorisation.ProviderPaymentID,
					Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Captured, PaymentID: authorised.PaymentID, ProviderPaymentID: authorisation.ProviderPaymentID,
					Amount: 3000, Currency: "EUR"}
			}},
			{"authorised, to cancel", "payment_intent.amount_capturable_updated", authorise(&voided, &voidedAuthorisation)},
			{"canceled", "payment_intent.canceled", func(t *testing.T) provider.Notification {
				if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: voided.PaymentID, ProviderPaymentID: voidedAuthorisation.ProviderPaymentID,
					Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}); err != nil {
					t.Fatal(err)
				}
				return provider.Notification{Kind: provider.Canceled, PaymentID: voided.PaymentID, ProviderPaymentID: voidedAuthorisation.ProviderPaymentID}
			}},
			{"awaiting authentication", "payment_intent.requires_action", awaitShopper(provider.AuthenticateThenApprove, false)},
			{"authenticated", "payment_intent.succeeded", authenticate("complete", provider.ChargeResult{})},
			{"awaiting authentication, to capture manually", "payment_intent.requires_action", awaitShopper(provider.AuthenticateThenApprove, true)},
			{"authenticated, authorised", "payment_intent.amount_capturable_updated", authenticate("complete", provider.ChargeResult{})},
			{"awaiting authentication, to fail it", "payment_intent.requires_action", awaitShopper(provider.AuthenticateThenApprove, false)},
			{"authentication failed", "payment_intent.payment_failed", authenticate("fail", provider.ChargeResult{DeclineCode: "card_declined",
				RawDeclineCode: "payment_intent_authentication_failure", DeclineMessage: "The provided PaymentMethod has failed authentication. " +
					"You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again."})},
			{"awaiting authentication, to decline after it", "payment_intent.requires_action", awaitShopper(provider.AuthenticateThenDecline, false)},
			{"declined after authentication", "payment_intent.payment_failed", authenticate("complete", provider.ChargeResult{DeclineCode: "card_declined",
				RawDeclineCode: "generic_decline", DeclineMessage: "Your card was declined."})},
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

// dashboardRefund is the id of the one refund of the PaymentIntent that Paygate did not make.
func dashboardRefund(t *testing.T, c *Client, intentID string) string {
	t.Helper()
	answer, err := c.get(context.Background(), "/v1/refunds", url.Values{"payment_intent": {intentID}, "limit": {"100"}})
	if err != nil {
		t.Fatal(err)
	}
	var list stripego.RefundList
	if err := json.Unmarshal(answer.Body, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range list.Data {
		if r.Metadata[paygateIDKey] == "" {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("refunds made at Stripe: %v, want one", ids)
	}
	return ids[0]
}

// eventJSON is a Stripe event of type kind about object, in the shape Stripe sends at the API
// version stripe-go pins.
func eventJSON(kind, object string) string {
	return `{"id":"evt_1PqRsT","object":"event","api_version":"` + stripego.APIVersion + `","created":1735689600,` +
		`"data":{"object":` + object + `},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},"type":"` + kind + `"}`
}

// refundObject is a refund in the shape Stripe sends, with its status, amount and currency.
func refundObject(status string, amount int64, currency string) string {
	return `{"id":"re_3QxYz","object":"refund","amount":` + strconv.FormatInt(amount, 10) + `,"balance_transaction":null,"charge":"ch_3QxYz",` +
		`"created":1735689600,"currency":"` + currency + `","destination_details":{"card":{"reference_status":"pending","type":"refund"},"type":"card"},` +
		`"metadata":{"paygate_id":"re_01jgz0000000000000000000aa"},"payment_intent":"pi_3QxYz","reason":null,"receipt_number":null,` +
		`"source_transfer_reversal":null,"status":"` + status + `","transfer_reversal":null}`
}

const (
	paygatePayment = "pay_01jgz0000000000000000000aa"
	paygateRefund  = "re_01jgz0000000000000000000aa"
)

// intentObject is a PaymentIntent of Paygate's payment in the shape Stripe sends, with its status
// and last_payment_error (JSON, or null).
func intentObject(status, lastPaymentError string) string {
	return `{"id":"pi_3QxYz","object":"payment_intent","amount":2000,"amount_received":2000,"capture_method":"automatic",` +
		`"client_secret":"pi_3QxYz_secret_abc","confirmation_method":"automatic","created":1735689600,"currency":"eur",` +
		`"last_payment_error":` + lastPaymentError + `,"latest_charge":"ch_3QxYz","livemode":false,` +
		`"metadata":{"paygate_id":"` + paygatePayment + `"},"payment_method":"pm_1QxYz","payment_method_types":["card"],"status":"` + status + `"}`
}

// manualIntentObject is a PaymentIntent of Paygate's payment made to capture manually, in the shape
// Stripe sends, with its status, amounts (in Stripe's units) and currency.
func manualIntentObject(status string, capturable, received int64, currency string) string {
	return `{"id":"pi_3QxYz","object":"payment_intent","amount":500000,"amount_capturable":` + strconv.FormatInt(capturable, 10) +
		`,"amount_received":` + strconv.FormatInt(received, 10) + `,"canceled_at":null,"cancellation_reason":null,"capture_method":"manual",` +
		`"client_secret":"pi_3QxYz_secret_abc","confirmation_method":"automatic","created":1735689600,"currency":"` + currency + `",` +
		`"last_payment_error":null,"latest_charge":"ch_3QxYz","livemode":false,"metadata":{"paygate_id":"` + paygatePayment + `"},` +
		`"payment_method":"pm_1QxYz","payment_method_types":["card"],"status":"` + status + `"}`
}

// chargeObject is a charge of Paygate's payment in the shape Stripe sends; refunds is its
// embedded list of refunds (JSON), or "" for none, as Stripe sends it at current API versions.
func chargeObject(currency, refunds string) string {
	object := `{"id":"ch_3QxYz","object":"charge","amount":50000,"amount_captured":50000,"amount_refunded":50000,"captured":true,` +
		`"created":1735689600,"currency":"` + currency + `","disputed":false,"livemode":false,"metadata":{"paygate_id":"` + paygatePayment + `"},` +
		`"paid":true,"payment_intent":"pi_3QxYz","refunded":true,"status":"succeeded"`
	if refunds != "" {
		object += `,"refunds":{"object":"list","data":[` + refunds + `],"has_more":false,"total_count":1,"url":"/v1/charges/ch_3QxYz/refunds"}`
	}
	return object + "}"
}

func disputeObject(paymentIntent string) string {
	return `{"id":"dp_1QxYz","object":"dispute","amount":2000,"charge":"ch_3QxYz","created":1735689600,"currency":"eur",` +
		`"is_charge_refundable":false,"livemode":false,"metadata":{},"payment_intent":` + paymentIntent + `,"reason":"product_not_received",` +
		`"status":"needs_response"}`
}

// readCases are payloads written by hand, in Stripe's shape, for what the sandbox never sends,
// and malformed ones.
var readCases = []struct {
	name, eventType, payload string
	want                     provider.Notification
	unreadable               bool
}{
	{name: "refund failed", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("failed", 2000, "eur")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "refund canceled", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("canceled", 2000, "eur")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "refund requires action", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("requires_action", 2000, "eur")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundPending}}}},
	{name: "refund succeeded", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", 2000, "eur")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundSucceeded}}}},
	{name: "refund made in the dashboard, as refund.created reports it", eventType: "refund.created",
		payload: eventJSON("refund.created", strings.Replace(refundObject("succeeded", 2000, "eur"), paygateRefund, "", 1)),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundSucceeded}}}},
	{name: "refund failed, as refund.failed reports it", eventType: "refund.failed", payload: eventJSON("refund.failed", refundObject("failed", 2000, "eur")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 2000, Currency: "EUR", Status: provider.RefundFailed}}}},
	{name: "króna, in Stripe's hundredths", eventType: "charge.refunded",
		payload: eventJSON("charge.refunded", chargeObject("isk", refundObject("succeeded", 50000, "isk"))),
		want: provider.Notification{Kind: provider.RefundsChanged, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 500, Currency: "ISK", Status: provider.RefundSucceeded}},
			RefundedTotal: minor(500)}},
	{name: "yen, whole", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", 500, "jpy")),
		want: provider.Notification{Kind: provider.RefundsChanged, ProviderPaymentID: "pi_3QxYz", Refunds: []provider.RefundNotice{
			{RefundID: paygateRefund, ProviderRefundID: "re_3QxYz", Amount: 500, Currency: "JPY", Status: provider.RefundSucceeded}}}},
	{name: "charge refunded, its refunds not embedded", eventType: "charge.refunded", payload: eventJSON("charge.refunded", chargeObject("eur", "")),
		want: provider.Notification{Kind: provider.RefundsChanged, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz", RefundedTotal: minor(50000)}},
	{name: "succeeded", eventType: "payment_intent.succeeded", payload: eventJSON("payment_intent.succeeded", intentObject("succeeded", "null")),
		want: provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz"}},
	{name: "succeeded, made outside Paygate", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", `{"id":"pi_9","object":"payment_intent","metadata":{},"status":"succeeded"}`),
		want:    provider.Notification{Kind: provider.ChargeSucceeded, ProviderPaymentID: "pi_9"}},
	{name: "authorised", eventType: "payment_intent.amount_capturable_updated",
		payload: eventJSON("payment_intent.amount_capturable_updated", manualIntentObject("requires_capture", 500000, 0, "eur")),
		want:    provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz"}},
	{name: "captured in part", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", manualIntentObject("succeeded", 0, 300000, "eur")),
		want: provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz",
			Amount: 300000, Currency: "EUR"}},
	{name: "captured, króna in Stripe's hundredths", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", manualIntentObject("succeeded", 0, 300000, "isk")),
		want: provider.Notification{Kind: provider.Captured, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz",
			Amount: 3000, Currency: "ISK"}},
	{name: "canceled", eventType: "payment_intent.canceled",
		payload: eventJSON("payment_intent.canceled", strings.Replace(manualIntentObject("canceled", 0, 0, "eur"),
			`"cancellation_reason":null`, `"cancellation_reason":"requested_by_customer"`, 1)),
		want: provider.Notification{Kind: provider.Canceled, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz"}},
	{name: "authorisation lapsed", eventType: "payment_intent.canceled",
		payload: eventJSON("payment_intent.canceled", strings.Replace(manualIntentObject("canceled", 0, 0, "eur"),
			`"cancellation_reason":null`, `"cancellation_reason":"automatic"`, 1)),
		want: provider.Notification{Kind: provider.Canceled, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz"}},
	{name: "expired card, no decline code", eventType: "payment_intent.payment_failed",
		payload: eventJSON("payment_intent.payment_failed", intentObject("requires_payment_method",
			`{"type":"card_error","code":"expired_card","message":"Your card has expired.","param":"exp_month"}`)),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz",
			Decline: provider.ChargeResult{ProviderPaymentID: "pi_3QxYz", DeclineCode: "expired_card", RawDeclineCode: "expired_card",
				DeclineMessage: "Your card has expired."}}},
	{name: "lost card", eventType: "payment_intent.payment_failed",
		payload: eventJSON("payment_intent.payment_failed", intentObject("requires_payment_method",
			`{"type":"card_error","code":"card_declined","decline_code":"lost_card","message":"Your card was declined."}`)),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz",
			Decline: provider.ChargeResult{ProviderPaymentID: "pi_3QxYz", DeclineCode: "card_declined", RawDeclineCode: "lost_card",
				DeclineMessage: "Your card was declined."}}},
	{name: "authentication failed", eventType: "payment_intent.payment_failed",
		payload: eventJSON("payment_intent.payment_failed", strings.Replace(intentObject("requires_payment_method",
			`{"type":"invalid_request_error","code":"payment_intent_authentication_failure",`+
				`"doc_url":"https://stripe.com/docs/error-codes/payment-intent-authentication-failure",`+
				`"message":"The provided PaymentMethod has failed authentication."}`), `"latest_charge":"ch_3QxYz"`, `"latest_charge":null`, 1)),
		want: provider.Notification{Kind: provider.ChargeFailed, PaymentID: paygatePayment, ProviderPaymentID: "pi_3QxYz",
			Decline: provider.ChargeResult{ProviderPaymentID: "pi_3QxYz", DeclineCode: "card_declined", RawDeclineCode: "payment_intent_authentication_failure",
				DeclineMessage: "The provided PaymentMethod has failed authentication."}}},
	{name: "awaiting authentication", eventType: "payment_intent.requires_action",
		payload: eventJSON("payment_intent.requires_action", strings.Replace(intentObject("requires_action", "null"), `"latest_charge":"ch_3QxYz"`,
			`"latest_charge":null,"next_action":{"type":"redirect_to_url","redirect_to_url":{"url":"https://hooks.stripe.com/3d_secure_2/hosted",`+
				`"return_url":"https://shop.example/paid"}}`, 1)),
		want: provider.Notification{Kind: provider.Unhandled, Reason: "stripe event type payment_intent.requires_action is not acted on"}},
	{name: "dispute", eventType: "charge.dispute.created", payload: eventJSON("charge.dispute.created", disputeObject(`"pi_3QxYz"`)),
		want: provider.Notification{Kind: provider.Disputed, ProviderPaymentID: "pi_3QxYz", Reason: "product_not_received"}},

	{name: "unknown type", eventType: "customer.created", payload: eventJSON("customer.created", `{"id":"cus_1","object":"customer"}`),
		want: provider.Notification{Kind: provider.Unhandled, Reason: "stripe event type customer.created is not acted on"}},
	{name: "a type not acted on, however malformed", eventType: "payment_intent.created", payload: `{`,
		want: provider.Notification{Kind: provider.Unhandled, Reason: "stripe event type payment_intent.created is not acted on"}},

	{name: "bad JSON", eventType: "payment_intent.succeeded", payload: `{"id":"evt_1","data":`, unreadable: true},
	{name: "no data", eventType: "payment_intent.succeeded", payload: `{"id":"evt_1","object":"event","type":"payment_intent.succeeded"}`, unreadable: true},
	{name: "object a bare id", eventType: "payment_intent.succeeded", payload: eventJSON("payment_intent.succeeded", `"pi_3QxYz"`), unreadable: true},
	{name: "object of another kind", eventType: "payment_intent.succeeded", payload: eventJSON("payment_intent.succeeded", chargeObject("eur", "")),
		unreadable: true},
	{name: "object null", eventType: "charge.refunded", payload: eventJSON("charge.refunded", `null`), unreadable: true},
	{name: "intent without id or metadata", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", `{"object":"payment_intent","status":"succeeded"}`), unreadable: true},
	{name: "captured in no currency", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", manualIntentObject("succeeded", 0, 300000, "")), unreadable: true},
	{name: "captured, króna not in whole hundredths", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", manualIntentObject("succeeded", 0, 150, "isk")), unreadable: true},
	{name: "captured a negative amount", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", manualIntentObject("succeeded", 0, -100, "eur")), unreadable: true},
	{name: "canceled, object of another kind", eventType: "payment_intent.canceled", payload: eventJSON("payment_intent.canceled", chargeObject("eur", "")),
		unreadable: true},
	{name: "authorised, intent without id or metadata", eventType: "payment_intent.amount_capturable_updated",
		payload: eventJSON("payment_intent.amount_capturable_updated", `{"object":"payment_intent","status":"requires_capture"}`), unreadable: true},
	{name: "failed without last_payment_error", eventType: "payment_intent.payment_failed",
		payload: eventJSON("payment_intent.payment_failed", intentObject("requires_payment_method", "null")), unreadable: true},
	{name: "negative refund", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", -1, "eur")),
		unreadable: true},
	{name: "refund without currency", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", 100, "")),
		unreadable: true},
	{name: "refund in no currency", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", 100, "xyz")),
		unreadable: true},
	{name: "króna not in whole hundredths", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("succeeded", 150, "isk")),
		unreadable: true},
	{name: "refund without status", eventType: "charge.refund.updated", payload: eventJSON("charge.refund.updated", refundObject("", 100, "eur")),
		unreadable: true},
	{name: "refund without id", eventType: "charge.refund.updated",
		payload: eventJSON("charge.refund.updated", `{"object":"refund","amount":100,"currency":"eur","payment_intent":"pi_1","status":"succeeded"}`), unreadable: true},
	{name: "refund without payment intent", eventType: "charge.refund.updated",
		payload:    eventJSON("charge.refund.updated", `{"id":"re_1","object":"refund","amount":100,"currency":"eur","payment_intent":null,"status":"succeeded"}`),
		unreadable: true},
	{name: "a listed refund unreadable", eventType: "charge.refunded",
		payload: eventJSON("charge.refunded", chargeObject("eur", refundObject("succeeded", -5, "eur"))), unreadable: true},
	{name: "dispute without payment intent", eventType: "charge.dispute.created", payload: eventJSON("charge.dispute.created", disputeObject("null")),
		unreadable: true},
	{name: "more than 1 MiB", eventType: "payment_intent.succeeded",
		payload: eventJSON("payment_intent.succeeded", intentObject("succeeded", `{"message":"`+strings.Repeat("x", maxEventBytes)+`"}`)), unreadable: true},
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

// minor is a RefundedTotal.
func minor(units int64) *int64 { return &units }

// refundedOf is the total of refunds, as a charge's amount_refunded says it.
func refundedOf(refunds []provider.RefundNotice) *int64 {
	var total int64
	for _, r := range refunds {
		total += r.Amount
	}
	return &total
}
