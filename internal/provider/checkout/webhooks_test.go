package checkout

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	ckosandbox "github.com/paygate/paygate/internal/provider/checkout/sandbox"
	"github.com/paygate/paygate/internal/provider/providertest"
)

const testSecret = "cko_webhook_secret_test"

// verify checks the Cko-Signature header as Checkout.com's integrations do: the hex HMAC-SHA256
// of the raw body under the webhook's secret key.
func verify(header http.Header, body []byte) error {
	given, err := hex.DecodeString(header.Get("Cko-Signature"))
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write(body)
	if err != nil || !hmac.Equal(given, mac.Sum(nil)) {
		return errors.New("bad Cko-Signature")
	}
	return nil
}

type testEvent struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedOn string `json:"created_on"`
	Data      struct {
		ID           string `json:"id"`
		ActionID     string `json:"action_id"`
		Amount       int64  `json:"amount"`
		Currency     string `json:"currency"`
		Reference    string `json:"reference"`
		ResponseCode string `json:"response_code"`
		PaymentID    string `json:"payment_id"`
	} `json:"data"`
}

func events(t *testing.T, bodies [][]byte) []testEvent {
	t.Helper()
	var all []testEvent
	ids := map[string]bool{}
	for _, body := range bodies {
		var e testEvent
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if _, err := time.Parse(time.RFC3339, e.CreatedOn); err != nil || ids[e.ID] {
			t.Errorf("event %s: created_on %q (%v), seen before %v", e.ID, e.CreatedOn, err, ids[e.ID])
		}
		ids[e.ID] = true
		all = append(all, e)
	}
	return all
}

func webhookSandbox(t *testing.T, db *database.DB) (*ckosandbox.Sandbox, *Client, *providertest.WebhookReceiver) {
	t.Helper()
	receiver := providertest.NewWebhookReceiver(t, verify)
	sandbox := newSandbox(db.Ent, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
		t.Fatal(err)
	}
	url, caller := providertest.Serve(t, sandbox)
	return sandbox, &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}, receiver
}

func TestWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		approved := providertest.Charge(t, providertest.Approved, 1000)
		payment, err := c.Charge(ctx, approved)
		if err != nil {
			t.Fatal(err)
		}
		c.Charge(ctx, approved) // replayed: nothing new
		declinedReq := providertest.Charge(t, providertest.InsufficientFunds, 500)
		declined, err := c.Charge(ctx, declinedReq)
		if err != nil {
			t.Fatal(err)
		}
		c.Charge(ctx, providertest.Charge(t, providertest.ProviderError, 500)) // 503: nothing done, nothing told
		refundID := prefixid.New("re")
		refund, err := c.Refund(ctx, provider.RefundRequest{RefundID: refundID, ProviderPaymentID: payment.ProviderPaymentID, Amount: money.Amount{Minor: 300, Currency: "EUR"}})
		if err != nil {
			t.Fatal(err)
		}
		sandbox.WaitForWebhooks()
		got := events(t, receiver.Verified(t))
		if len(got) != 2 {
			t.Fatalf("%d events for a payment, a decline and a refund taken: %+v; want the approval and the decline", len(got), got)
		}
		for _, e := range got {
			switch e.Data.ID {
			case payment.ProviderPaymentID:
				if e.Type != "payment_approved" || e.Data.ResponseCode != "10000" || e.Data.Amount != 1000 || e.Data.Currency != "EUR" ||
					e.Data.Reference != approved.PaymentID || e.Data.ActionID == "" {
					t.Errorf("approval event %+v", e)
				}
			case declined.ProviderPaymentID:
				if e.Type != "payment_declined" || e.Data.ResponseCode != "20051" || e.Data.Reference != declinedReq.PaymentID {
					t.Errorf("decline event %+v", e)
				}
			default:
				t.Errorf("event %+v about no payment made", e)
			}
		}

		settled := ckosandbox.SettledRefund{PaymentID: payment.ProviderPaymentID, ActionID: refund.ProviderRefundID, Reference: refundID,
			Amount: 300, Currency: "EUR", Succeeded: true}
		if err := sandbox.SendRefundSettled(settled); err != nil {
			t.Fatal(err)
		}
		settled.Succeeded = false
		if err := sandbox.SendRefundSettled(settled); err != nil {
			t.Fatal(err)
		}
		sandbox.WaitForWebhooks()
		bodies := receiver.Verified(t)
		got = events(t, bodies)[2:]
		types := map[string]string{}
		for _, e := range got {
			types[e.Type] = e.Data.ResponseCode
			if e.Data.ID != payment.ProviderPaymentID || e.Data.ActionID != refund.ProviderRefundID || e.Data.Reference != refundID || e.Data.Amount != 300 {
				t.Errorf("refund event %+v", e)
			}
		}
		if len(got) != 2 || types["payment_refunded"] != "10000" || types["payment_refund_declined"] == "" || types["payment_refund_declined"] == "10000" {
			t.Errorf("refund events %v, want payment_refunded and payment_refund_declined", types)
		}

		tampered := bytes.Replace(bodies[0], []byte(`"amount":`), []byte(`"amount":9`), 1)
		if err := verify(receiver.Deliveries()[0].Header, tampered); err == nil {
			t.Error("a tampered body passed the signature check")
		}
	})
}

// TestWebhookRetried: a webhook the receiver failed is sent again, the same event re-signed.
func TestWebhookRetried(t *testing.T) {
	sandbox, c, receiver := webhookSandbox(t, databasetest.SQLite(t))
	providertest.CheckRetried(t, c, sandbox.WaitForWebhooks, receiver, 1)
}

func TestSimulate(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		req := providertest.Charge(t, providertest.Approved, 1000)
		payment, err := c.Charge(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: payment.ProviderPaymentID,
			Amount: money.Amount{Minor: 400, Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []provider.Simulation{provider.SimulateDispute, provider.SimulateRefund, provider.SimulateLateFailure} {
			if err := sandbox.Simulate(ctx, kind, req.PaymentID); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		}
		if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, req.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a second late failure = %v", err)
		}
		sandbox.WaitForWebhooks()

		byType := map[string]testEvent{}
		for _, e := range events(t, receiver.Verified(t)) {
			byType[e.Type] = e
		}
		if e := byType["dispute_received"]; e.Data.PaymentID != payment.ProviderPaymentID || e.Data.Amount != 1000 {
			t.Errorf("dispute event %+v", e)
		}
		if e := byType["payment_refunded"]; e.Data.ID != payment.ProviderPaymentID || e.Data.Amount != 600 || e.Data.ActionID == "" {
			t.Errorf("refund event %+v", e)
		}
		if e := byType["payment_declined"]; e.Data.ID != payment.ProviderPaymentID || e.Data.Reference != req.PaymentID || e.Data.ResponseCode == "10000" {
			t.Errorf("late failure event %+v", e)
		}
	})
}

// TestSettlementIsToldByWebhook: the refunds the sandbox settles are told as Checkout.com tells
// them, the magic 13.13 as declined.
func TestSettlementIsToldByWebhook(t *testing.T) {
	db := databasetest.SQLite(t)
	sandbox, c, receiver := webhookSandbox(t, db)
	sandbox.SettleAfter = time.Nanosecond
	ctx := context.Background()
	payment, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 5000))
	if err != nil {
		t.Fatal(err)
	}
	for _, minor := range []int64{1000, provider.FailingRefundMinor} {
		if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: payment.ProviderPaymentID,
			Amount: money.Amount{Minor: minor, Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := sandbox.Settle(ctx); n != 2 || err != nil {
		t.Fatalf("settled %d, %v", n, err)
	}
	sandbox.WaitForWebhooks()
	byAmount := map[int64]string{}
	for _, e := range events(t, receiver.Verified(t)) {
		// The charge's own events are delivered beside the refunds', in any order.
		if e.Type != "payment_approved" && e.Type != "payment_captured" {
			byAmount[e.Data.Amount] = e.Type
		}
	}
	if byAmount[1000] != "payment_refunded" || byAmount[provider.FailingRefundMinor] != "payment_refund_declined" {
		t.Errorf("settlement events %v", byAmount)
	}
}

// newSandbox is the sandbox as Paygate builds it, signing with testSecret.
func newSandbox(db *ent.Client, now func() time.Time) *ckosandbox.Sandbox {
	return Registration.NewSandbox(db, provider.Settings{webhookSecret: testSecret}, now).(*ckosandbox.Sandbox)
}

// TestCaptureWebhooks: an authorisation is told as an approval, its capture as payment_captured
// of the amount captured and its void as payment_voided, each signed, once, and read into what
// Paygate acts on; a capture or void refused, or replayed, tells nothing.
func TestCaptureWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		next := deliveredSince(t, sandbox, receiver)
		ctx := context.Background()
		// expect checks that what happened since was told by one event of eventType, read as want.
		expect := func(what, eventType string, want provider.Notification) {
			t.Helper()
			events := next()
			if len(events) != 1 || events[0].Type != eventType {
				t.Fatalf("%s: events %v, want one %s", what, events, eventType)
			}
			if got, err := ReadNotification(events[0].Type, events[0].Payload); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read\n%+v, %v; want\n%+v", what, got, err, want)
			}
		}

		req, held := providertest.Authorize(t, c, providertest.Approved, 5000)
		expect("authorisation", "payment_approved", provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID,
			ProviderPaymentID: held.ProviderPaymentID})
		capture := provider.CaptureRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
			Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}
		for range 2 { // the second is replayed
			if _, err := c.Capture(ctx, capture); err != nil {
				t.Fatal(err)
			}
		}
		capture.IdempotencyKey = prefixid.New("cap")
		if _, err := c.Capture(ctx, capture); !errors.Is(err, provider.ErrUnavailable) {
			t.Errorf("a second capture = %v, want refused", err)
		}
		expect("capture", "payment_captured", provider.Notification{Kind: provider.Captured, PaymentID: req.PaymentID,
			ProviderPaymentID: held.ProviderPaymentID, Amount: 3000, Currency: "EUR"})

		req, held = providertest.Authorize(t, c, providertest.Approved, 4000)
		next()
		void := provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID, Reason: "requested_by_customer",
			IdempotencyKey: prefixid.New("can")}
		for range 2 {
			if _, err := c.Cancel(ctx, void); err != nil {
				t.Fatal(err)
			}
		}
		expect("void", "payment_voided", provider.Notification{Kind: provider.Canceled, PaymentID: req.PaymentID,
			ProviderPaymentID: held.ProviderPaymentID})

		charged, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 1000))
		if err != nil {
			t.Fatal(err)
		}
		next()
		if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: charged.ProviderPaymentID,
			IdempotencyKey: prefixid.New("can")}); !errors.Is(err, provider.ErrUnavailable) {
			t.Errorf("a void of a payment captured at once = %v, want refused", err)
		}
		if told := next(); len(told) != 0 {
			t.Errorf("refused void told: %v", told)
		}
	})
}
