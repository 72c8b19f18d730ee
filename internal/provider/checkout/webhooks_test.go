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
	return webhookSandboxOn(t, db, time.Now)
}

// webhookSandboxOn is webhookSandbox on the clock now.
func webhookSandboxOn(t *testing.T, db *database.DB, now func() time.Time) (*ckosandbox.Sandbox, *Client, *providertest.WebhookReceiver) {
	t.Helper()
	receiver := providertest.NewWebhookReceiver(t, verify)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sandbox, c := serveSandbox(t, db.Ent, now, func(sandbox *ckosandbox.Sandbox) {
		if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
			t.Fatal(err)
		}
	})
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

// newSandbox is the sandbox as Paygate builds it, signing with testSecret, its pages at pages.
func newSandbox(db *ent.Client, now func() time.Time, pages string) *ckosandbox.Sandbox {
	return Registration.NewSandbox(db, provider.Settings{webhookSecret: testSecret}, now, pages).(*ckosandbox.Sandbox)
}

// serveSandbox serves a sandbox over db on the clock now, its pages at the address it is served
// at, set up by setUp (when given) before it serves, and returns it with a client of its API.
func serveSandbox(t *testing.T, db *ent.Client, now func() time.Time, setUp func(*ckosandbox.Sandbox)) (*ckosandbox.Sandbox, *Client) {
	t.Helper()
	var sandbox *ckosandbox.Sandbox
	url, caller := providertest.ServeSandbox(t, func(pages string) http.Handler {
		sandbox = newSandbox(db, now, pages)
		if setUp != nil {
			setUp(sandbox)
		}
		return sandbox
	})
	return sandbox, &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
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

// TestAuthenticationWebhooks: a payment waiting for the shopper is told as payment_pending, which
// Paygate does not act on; the challenge's decision as Checkout.com tells it (payment_approved,
// with payment_captured for a payment captured at once; payment_authentication_failed;
// payment_declined), each read into what settles the payment if the browser never comes back.
// Its void is not allowed and tells nothing; a payment left waiting past 15 minutes is declined.
func TestAuthenticationWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		clock := providertest.NewClock()
		sandbox, c, receiver := webhookSandboxOn(t, db, clock.Now)
		next := deliveredSince(t, sandbox, receiver)
		ctx := context.Background()
		// start charges the card, 25.00 EUR, which waits for the shopper.
		start := func(number string, manual bool) (provider.ChargeRequest, provider.ChargeResult) {
			t.Helper()
			req := providertest.Charge(t, number, 2500)
			req.CaptureManually = manual
			req.ReturnURL = "https://paygate.example/api/v1/payments/" + req.PaymentID + "/return"
			waiting, err := c.Charge(ctx, req)
			if err != nil || !waiting.AwaitsShopper() {
				t.Fatalf("charge of %s = %+v, %v; want it waiting for the shopper", number, waiting, err)
			}
			if told := next(); len(told) != 1 || told[0].Type != "payment_pending" {
				t.Fatalf("told %v, want payment_pending", told)
			} else if n, err := ReadNotification(told[0].Type, told[0].Payload); err != nil || n.Kind != provider.Unhandled {
				t.Errorf("payment_pending read as %+v, %v; want unhandled", n, err)
			}
			return req, waiting
		}
		declined := func(id, code, summary string) provider.ChargeResult {
			return provider.ChargeResult{ProviderPaymentID: id, DeclineCode: "card_declined", RawDeclineCode: code, DeclineMessage: summary}
		}
		for _, tc := range []struct {
			name, number, outcome string
			manual                bool
			// want is what each event told, by type, reads as.
			want func(req provider.ChargeRequest, id string) map[string]provider.Notification
		}{
			{"completed", provider.AuthenticateThenApprove, "complete", false, func(req provider.ChargeRequest, id string) map[string]provider.Notification {
				return map[string]provider.Notification{
					"payment_approved": {Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: id},
					"payment_captured": {Kind: provider.Captured, PaymentID: req.PaymentID, ProviderPaymentID: id, Amount: 2500, Currency: "EUR"},
				}
			}},
			{"completed, captured later", provider.AuthenticateThenApprove, "complete", true, func(req provider.ChargeRequest, id string) map[string]provider.Notification {
				return map[string]provider.Notification{"payment_approved": {Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: id}}
			}},
			{"failed", provider.AuthenticateThenApprove, "fail", false, func(req provider.ChargeRequest, id string) map[string]provider.Notification {
				return map[string]provider.Notification{"payment_authentication_failed": {Kind: provider.ChargeFailed, PaymentID: req.PaymentID,
					ProviderPaymentID: id, Decline: declined(id, "20151", "Cardholder failed 3D-Secure authentication")}}
			}},
			{"declined once completed", provider.AuthenticateThenDecline, "complete", false, func(req provider.ChargeRequest, id string) map[string]provider.Notification {
				return map[string]provider.Notification{"payment_declined": {Kind: provider.ChargeFailed, PaymentID: req.PaymentID,
					ProviderPaymentID: id, Decline: declined(id, "20005", "Declined - Do Not Honour")}}
			}},
		} {
			req, waiting := start(tc.number, tc.manual)
			back := providertest.Shopper(t, waiting.RedirectURL, tc.outcome)
			if prefixid.Prefix(back.Query().Get("cko-session-id")) != "sid" || back.Path != "/api/v1/payments/"+req.PaymentID+"/return" {
				t.Errorf("%s: the browser was sent back to %s", tc.name, back)
			}
			told := map[string]provider.Notification{}
			for _, e := range next() {
				n, err := ReadNotification(e.Type, e.Payload)
				if err != nil {
					t.Errorf("%s: %s: %v", tc.name, e.Type, err)
				}
				told[e.Type] = n
			}
			if want := tc.want(req, waiting.ProviderPaymentID); !reflect.DeepEqual(told, want) {
				t.Errorf("%s: told\n%+v; want\n%+v", tc.name, told, want)
			}
		}

		// A payment waiting for the shopper holds no authorisation to void.
		req, waiting := start(provider.AuthenticateThenApprove, true)
		if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID,
			Reason: "abandoned", IdempotencyKey: prefixid.New("can")}); !errors.Is(err, provider.ErrNothingToCancel) || errors.Is(err, provider.ErrOutage) {
			t.Errorf("void of a payment waiting for the shopper = %v, want nothing to cancel", err)
		}
		ask := provider.AuthenticationRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID}
		if still, err := c.Authenticated(ctx, ask); err != nil || still != waiting {
			t.Errorf("after its void was refused = %+v, %v; want %+v", still, err, waiting)
		}
		// Checkout.com declines it once the shopper has let 15 minutes pass: its page is gone. It
		// was never sent for authorisation, so its actions list none, and only its event carries
		// the response code.
		clock.Advance(15*time.Minute + time.Second)
		lapsed := declined(waiting.ProviderPaymentID, "20152", "Initial 3DS transaction not completed within 15 minutes")
		if result, err := c.Authenticated(ctx, ask); err != nil || result != declined(waiting.ProviderPaymentID, "", "Declined") {
			t.Errorf("after 15 minutes = %+v, %v; want declined without a code", result, err)
		}
		if resp, err := http.Get(waiting.RedirectURL); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("the challenge page after 15 minutes = %v, %v; want 404", resp, err)
		} else {
			resp.Body.Close()
		}
		told := next()
		if len(told) != 1 || told[0].Type != "payment_authentication_failed" {
			t.Fatalf("told %v, want one payment_authentication_failed", told)
		}
		want := provider.Notification{Kind: provider.ChargeFailed, PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID, Decline: lapsed}
		if n, err := ReadNotification(told[0].Type, told[0].Payload); err != nil || !reflect.DeepEqual(n, want) {
			t.Errorf("read %+v, %v; want %+v", n, err, want)
		}
	})
}

// TestAuthenticationNotAskedFor: a card whose issuer wants 3-D Secure, charged without asking for
// it, is declined (20154), as the adapter charges it without a return address and reads it, at
// once and when looked up; asked for without a page to send the browser back to, refused.
func TestAuthenticationNotAskedFor(t *testing.T) {
	_, c := serveSandbox(t, databasetest.SQLite(t).Ent, time.Now, nil)
	req := providertest.Charge(t, provider.AuthenticateThenApprove, 1000)
	result, err := c.Charge(context.Background(), req)
	if want := (provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: "card_declined", RawDeclineCode: "20154",
		DeclineMessage: "3DS authentication required"}); err != nil || result != want || result.ProviderPaymentID == "" {
		t.Errorf("charge without a return address = %+v, %v; want %+v", result, err, want)
	}
	if found, ok, err := c.LookupCharge(context.Background(), req.PaymentID); err != nil || !ok || found != result {
		t.Errorf("look-up = %+v, %v, %v; want %+v", found, ok, err, result)
	}
	pay := func(body string) (int, map[string]any) {
		t.Helper()
		answer, err := c.post(context.Background(), "/payments", prefixid.New("pay"), json.RawMessage(body))
		if err != nil {
			t.Fatal(err)
		}
		var payment map[string]any
		json.Unmarshal(answer.Body, &payment)
		return answer.Status, payment
	}
	const card = `"source":{"type":"card","number":"` + provider.AuthenticateThenApprove + `","expiry_month":3,"expiry_year":2040,"cvv":"737"},` +
		`"amount":1000,"currency":"EUR","reference":"pay_1"`
	if status, payment := pay(`{` + card + `}`); status != http.StatusCreated || payment["status"] != "Declined" || payment["response_code"] != "20154" {
		t.Errorf("without 3ds = %d %v; want declined 20154", status, payment)
	}
	if status, payment := pay(`{` + card + `,"3ds":{"enabled":true},"success_url":"https://paygate.example/return"}`); status != http.StatusUnprocessableEntity {
		t.Errorf("without a failure_url = %d %v; want 422", status, payment)
	}
}
