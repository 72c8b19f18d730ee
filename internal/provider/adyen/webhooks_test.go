package adyen

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	adyenwebhook "github.com/adyen/adyen-go-api-library/v14/src/webhook"

	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

const hmacKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

// verify checks each item's additionalData.hmacSignature as Adyen's libraries do (the Go
// library's hmacvalidator is not served by the module proxy here), written apart from the
// sandbox's signing: from the item's fields as received, under the hex-decoded key.
func verify(_ http.Header, body []byte) error {
	var n struct {
		Live              string `json:"live"`
		NotificationItems []struct {
			Item struct {
				PSPReference        string `json:"pspReference"`
				OriginalReference   string `json:"originalReference"`
				MerchantAccountCode string `json:"merchantAccountCode"`
				MerchantReference   string `json:"merchantReference"`
				Amount              struct {
					Value    json.Number `json:"value"`
					Currency string      `json:"currency"`
				} `json:"amount"`
				EventCode      string            `json:"eventCode"`
				Success        string            `json:"success"`
				AdditionalData map[string]string `json:"additionalData"`
			} `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return err
	}
	if n.Live != "false" || len(n.NotificationItems) == 0 {
		return fmt.Errorf("live %q, %d items", n.Live, len(n.NotificationItems))
	}
	key, _ := hex.DecodeString(hmacKey)
	for _, wrapped := range n.NotificationItems {
		i := wrapped.Item
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s:%s:%s:%s:%s:%s:%s:%s", i.PSPReference, i.OriginalReference, i.MerchantAccountCode, i.MerchantReference,
			i.Amount.Value, i.Amount.Currency, i.EventCode, i.Success)
		given, err := base64.StdEncoding.DecodeString(i.AdditionalData["hmacSignature"])
		if err != nil || !hmac.Equal(given, mac.Sum(nil)) {
			return fmt.Errorf("bad hmacSignature on %s %s", i.EventCode, i.PSPReference)
		}
	}
	return nil
}

// TestHMACSignatureMatchesAdyens signs the item of the test of Adyen's Go library
// (src/hmacvalidator), and gets the signature Adyen's library gets.
func TestHMACSignatureMatchesAdyens(t *testing.T) {
	item := `{"pspReference":"pspReference","originalReference":"originalReference","merchantAccountCode":"merchantAccount",` +
		`"merchantReference":"reference","amount":{"value":1000,"currency":"EUR"},"eventCode":"EVENT","success":"true"}`
	if got, err := SignItem("DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00", []byte(item)); err != nil || got != "ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc=" {
		t.Errorf("signature %s, %v", got, err)
	}
}

type testItem struct {
	PSPReference, OriginalReference, MerchantAccountCode, MerchantReference, EventCode, Success, Reason, EventDate string
	Amount                                                                                                         testAmount
}

type testAmount struct {
	Value    int64
	Currency string
}

func items(t *testing.T, bodies [][]byte) []testItem {
	t.Helper()
	var all []testItem
	for _, body := range bodies {
		var n struct {
			NotificationItems []struct {
				Item testItem `json:"NotificationRequestItem"`
			} `json:"notificationItems"`
		}
		if err := json.Unmarshal(body, &n); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for _, i := range n.NotificationItems {
			if _, err := time.Parse(time.RFC3339, i.Item.EventDate); err != nil {
				t.Errorf("eventDate %q: %v", i.Item.EventDate, err)
			}
			all = append(all, i.Item)
		}
	}
	return all
}

func webhookSandbox(t *testing.T, db *database.DB) (*adyensandbox.Sandbox, *Client, *providertest.WebhookReceiver) {
	t.Helper()
	receiver := providertest.NewWebhookReceiver(t, verify)
	c, sandbox := newClient(t, db, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
		t.Fatal(err)
	}
	return sandbox, c, receiver
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
		declined := providertest.Charge(t, providertest.ExpiredCard, 500)
		refused, err := c.Charge(ctx, declined)
		if err != nil {
			t.Fatal(err)
		}
		refundID := prefixid.New("re")
		refund, err := c.Refund(ctx, provider.RefundRequest{RefundID: refundID, ProviderPaymentID: payment.ProviderPaymentID, Amount: money.Amount{Minor: 300, Currency: "EUR"}})
		if err != nil {
			t.Fatal(err)
		}
		sandbox.WaitForWebhooks()
		got := items(t, receiver.Verified(t))
		if len(got) != 2 {
			t.Fatalf("%d notifications for a payment, a refusal and a refund taken: %+v; want the two authorisations", len(got), got)
		}
		want := map[string]testItem{
			payment.ProviderPaymentID: {EventCode: "AUTHORISATION", Success: "true", MerchantAccountCode: "PaygateTest", MerchantReference: approved.PaymentID,
				Amount: testAmount{1000, "EUR"}},
			refused.ProviderPaymentID: {EventCode: "AUTHORISATION", Success: "false", MerchantAccountCode: "PaygateTest", MerchantReference: declined.PaymentID,
				Amount: testAmount{500, "EUR"}, Reason: "Expired Card"},
		}
		for _, i := range got {
			w := want[i.PSPReference]
			w.PSPReference, w.EventDate = i.PSPReference, i.EventDate
			if i != w {
				t.Errorf("notification %+v, want %+v", i, w)
			}
		}

		// The refund settles: the hook of the settling step sends this.
		settled := adyensandbox.SettledRefund{PSPReference: refund.ProviderRefundID, PaymentPSPReference: payment.ProviderPaymentID, MerchantAccount: "PaygateTest",
			Reference: refundID, Amount: 300, Currency: "EUR", Succeeded: true}
		if err := sandbox.SendRefundSettled(settled); err != nil {
			t.Fatal(err)
		}
		settled.Succeeded = false
		if err := sandbox.SendRefundSettled(settled); err != nil {
			t.Fatal(err)
		}
		sandbox.WaitForWebhooks()
		bodies := receiver.Verified(t)
		got = items(t, bodies)[2:]
		if len(got) != 2 {
			t.Fatalf("%d notifications of settled refunds, want 2", len(got))
		}
		codes := map[string]bool{}
		for _, i := range got {
			codes[i.EventCode] = true
			if i.PSPReference != refund.ProviderRefundID || i.OriginalReference != payment.ProviderPaymentID || i.MerchantReference != refundID ||
				i.Amount != (testAmount{300, "EUR"}) || i.Success != "true" || i.MerchantAccountCode != "PaygateTest" {
				t.Errorf("refund notification %+v", i)
			}
		}
		if !codes["REFUND"] || !codes["REFUND_FAILED"] {
			t.Errorf("event codes %v, want REFUND and REFUND_FAILED", codes)
		}

		tampered := bytes.Replace(bodies[0], []byte(`"value":`), []byte(`"value":9`), 1)
		if err := verify(nil, tampered); err == nil {
			t.Error("a tampered body passed the signature check")
		}
	})
}

// TestCaptureWebhooks: a capture sends CAPTURE, of the amount captured, and a cancellation
// CANCELLATION, each naming the authorisation by originalReference and itself by its own
// pspReference, signed; Adyen's own library reads them, and so does the inbox, into Captured and
// Canceled. A capture replayed or refused sends nothing. The Customer Area refunds no more than
// was captured, and nothing of an authorisation held.
func TestCaptureWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		captured, capturedHeld := providertest.Authorize(t, c, providertest.Approved, 5000)
		capture := provider.CaptureRequest{PaymentID: captured.PaymentID, ProviderPaymentID: capturedHeld.ProviderPaymentID,
			Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}
		for range 2 { // the second replayed
			if _, err := c.Capture(ctx, capture); err != nil {
				t.Fatal(err)
			}
		}
		second := capture
		second.IdempotencyKey = prefixid.New("cap")
		if _, err := c.Capture(ctx, second); !errors.Is(err, provider.ErrUnavailable) {
			t.Fatalf("a second capture = %v, want refused", err)
		}
		canceled, canceledHeld := providertest.Authorize(t, c, providertest.Approved, 4000)
		if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: canceled.PaymentID, ProviderPaymentID: canceledHeld.ProviderPaymentID,
			Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: capturedHeld.ProviderPaymentID,
			Amount: money.Amount{Minor: 1000, Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, captured.PaymentID); err != nil {
			t.Fatal(err)
		}
		held, _ := providertest.Authorize(t, c, providertest.Approved, 2000)
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, held.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a refund of an authorisation held = %v", err)
		}
		sandbox.WaitForWebhooks()

		bodies := receiver.Verified(t)
		byCode := map[string][]testItem{}
		for _, i := range items(t, bodies) {
			byCode[i.EventCode] = append(byCode[i.EventCode], i)
		}
		if len(bodies) != 6 || len(byCode["AUTHORISATION"]) != 3 || len(byCode["CAPTURE"]) != 1 || len(byCode["CANCELLATION"]) != 1 || len(byCode["REFUND"]) != 1 {
			t.Fatalf("%d notifications: %+v; want three authorisations, a capture, a cancellation and a refund", len(bodies), byCode)
		}
		for code, w := range map[string]testItem{
			"CAPTURE":      {OriginalReference: capturedHeld.ProviderPaymentID, MerchantReference: captured.PaymentID, Amount: testAmount{3000, "EUR"}},
			"CANCELLATION": {OriginalReference: canceledHeld.ProviderPaymentID, MerchantReference: canceled.PaymentID, Amount: testAmount{4000, "EUR"}},
			"REFUND":       {OriginalReference: capturedHeld.ProviderPaymentID, MerchantReference: captured.PaymentID, Amount: testAmount{2000, "EUR"}},
		} {
			i := byCode[code][0]
			w.EventCode, w.Success, w.MerchantAccountCode, w.PSPReference, w.EventDate = code, "true", "PaygateTest", i.PSPReference, i.EventDate
			if i != w || len(i.PSPReference) != 16 || i.PSPReference == i.OriginalReference {
				t.Errorf("notification %+v, want %+v with its own pspReference", i, w)
			}
		}

		want := map[string]provider.Notification{
			"CAPTURE": {Kind: provider.Captured, PaymentID: captured.PaymentID, ProviderPaymentID: capturedHeld.ProviderPaymentID,
				Amount: 3000, Currency: "EUR"},
			"CANCELLATION": {Kind: provider.Canceled, PaymentID: canceled.PaymentID, ProviderPaymentID: canceledHeld.ProviderPaymentID},
		}
		for _, body := range bodies {
			webhook, err := adyenwebhook.HandleRequest(string(body))
			if err != nil || len(webhook.GetNotificationItems()) != 1 || webhook.GetNotificationItems()[0].EventDate == nil {
				t.Errorf("Adyen's library read %s: %+v, %v", body, webhook, err)
			}
			events, err := verifyAsInbox(body, hmacKey)
			if err != nil || len(events) != 1 {
				t.Fatalf("the inbox took %s: %+v, %v", body, events, err)
			}
			w, ok := want[events[0].Type]
			if !ok {
				continue
			}
			if got, err := ReadNotification(events[0].Type, events[0].Payload); err != nil || !reflect.DeepEqual(got, w) {
				t.Errorf("%s read\n%+v, %v; want\n%+v", events[0].Type, got, err, w)
			}
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
		if err := sandbox.Simulate(ctx, provider.SimulateDispute, req.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a dispute of a cancelled payment = %v", err)
		}
		declined := providertest.Charge(t, providertest.Declined, 100)
		c.Charge(ctx, declined)
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, declined.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a refund of a refused payment = %v", err)
		}
		sandbox.WaitForWebhooks()

		byCode := map[string]testItem{}
		for _, i := range items(t, receiver.Verified(t)) {
			byCode[i.EventCode] = i
		}
		for code, value := range map[string]int64{"CHARGEBACK": 1000, "REFUND": 600, "CANCELLATION": 1000} {
			i, ok := byCode[code]
			if !ok || i.OriginalReference != payment.ProviderPaymentID || i.PSPReference == payment.ProviderPaymentID ||
				i.MerchantReference != req.PaymentID || i.Amount.Value != value || i.Success != "true" || i.MerchantAccountCode != "PaygateTest" {
				t.Errorf("%s: %+v", code, i)
			}
		}
	})
}

// TestSettlementIsToldByWebhook: the refunds the sandbox settles are notified as Adyen notifies
// them, REFUND or REFUND_FAILED (the magic 13.13), with the merchant account they were made in.
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
	byAmount := map[int64]testItem{}
	for _, item := range items(t, receiver.Verified(t)) {
		// The charge's own notification is delivered beside the refunds', in any order.
		if item.EventCode != "AUTHORISATION" {
			byAmount[item.Amount.Value] = item
		}
	}
	if i := byAmount[1000]; i.EventCode != "REFUND" || i.OriginalReference != payment.ProviderPaymentID || i.MerchantAccountCode != "PaygateTest" {
		t.Errorf("refund notification %+v", i)
	}
	if i := byAmount[provider.FailingRefundMinor]; i.EventCode != "REFUND_FAILED" {
		t.Errorf("failed refund notification %+v", i)
	}
}
