package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	stripego "github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
	"github.com/paygate/paygate/internal/provider/stripe/sandbox"
)

const testSecret = "whsec_test_paygate"

// verify checks a webhook as a Stripe integration does, with stripe-go's own verifier: the
// signature, its timestamp's age and the event's API version.
func verify(header http.Header, body []byte) error {
	_, err := webhook.ConstructEventWithOptions(body, header.Get("Stripe-Signature"), testSecret, webhook.ConstructEventOptions{})
	return err
}

// webhookSandbox is a sandbox that sends its webhooks to a receiver, and a client for it.
func webhookSandbox(t *testing.T, db *database.DB) (*sandbox.Sandbox, *Client, *providertest.WebhookReceiver) {
	t.Helper()
	receiver := providertest.NewWebhookReceiver(t, verify)
	sandbox, c := served(t, db.Ent, receiver)
	return sandbox, c, receiver
}

// served serves a sandbox over db as Paygate does, its challenge pages at its own address, sending
// its webhooks to receiver (nowhere when nil), and returns it and a client for it.
func served(t *testing.T, db *ent.Client, receiver *providertest.WebhookReceiver) (*sandbox.Sandbox, *Client) {
	t.Helper()
	var s *sandbox.Sandbox
	url, caller := providertest.ServeSandbox(t, func(pages string) http.Handler {
		s = newSandbox(db, time.Now, pages)
		if receiver != nil {
			if err := s.SendWebhooks(t.Context(), outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	})
	return s, &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
}

// testEvent is what the tests read of an event.
type testEvent struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Type       string `json:"type"`
	Livemode   bool   `json:"livemode"`
	APIVersion string `json:"api_version"`
	Request    struct {
		IdempotencyKey *string `json:"idempotency_key"`
	} `json:"request"`
	Data struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

func events(t *testing.T, bodies [][]byte) map[string][]testEvent {
	t.Helper()
	byType := map[string][]testEvent{}
	for _, body := range bodies {
		var e testEvent
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if e.Object != "event" || e.Livemode || e.APIVersion != stripego.APIVersion {
			t.Errorf("event %s: object %q, livemode %v, api_version %q", e.ID, e.Object, e.Livemode, e.APIVersion)
		}
		byType[e.Type] = append(byType[e.Type], e)
	}
	return byType
}

func counts(byType map[string][]testEvent) map[string]int {
	n := map[string]int{}
	for kind, events := range byType {
		n[kind] = len(events)
	}
	return n
}

func TestWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		approved := providertest.Charge(t, providertest.Approved, 1000)
		charge, err := c.Charge(ctx, approved)
		if err != nil {
			t.Fatal(err)
		}
		c.Charge(ctx, approved) // replayed: no new event
		declined := providertest.Charge(t, providertest.InsufficientFunds, 500)
		if _, err := c.Charge(ctx, declined); err != nil {
			t.Fatal(err)
		}
		refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charge.ProviderPaymentID, Amount: money.Amount{Minor: 300, Currency: "EUR"}}
		if _, err := c.Refund(ctx, refund); err != nil {
			t.Fatal(err)
		}
		c.Refund(ctx, refund) // replayed
		over := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charge.ProviderPaymentID, Amount: money.Amount{Minor: 800, Currency: "EUR"}}
		c.Refund(ctx, over) // refused: nothing happened, nothing told
		sandbox.WaitForWebhooks()

		bodies := receiver.Verified(t)
		byType := events(t, bodies)
		if len(bodies) != 3 || len(byType["payment_intent.succeeded"]) != 1 || len(byType["payment_intent.payment_failed"]) != 1 || len(byType["charge.refunded"]) != 1 {
			t.Fatalf("%d webhooks: %v; want one succeeded, one payment_failed, one charge.refunded", len(bodies), counts(byType))
		}
		ids := map[string]bool{}
		for _, e := range byType {
			ids[e[0].ID] = true
		}
		if len(ids) != 3 {
			t.Errorf("event ids %v, want one each", ids)
		}

		var intent stripego.PaymentIntent
		succeeded := byType["payment_intent.succeeded"][0]
		json.Unmarshal(succeeded.Data.Object, &intent)
		if intent.ID != charge.ProviderPaymentID || intent.Amount != 1000 || intent.Status != stripego.PaymentIntentStatusSucceeded ||
			intent.Metadata["paygate_id"] != approved.PaymentID {
			t.Errorf("payment_intent.succeeded about %+v", intent)
		}
		if key := succeeded.Request.IdempotencyKey; key == nil || *key != approved.PaymentID {
			t.Errorf("payment_intent.succeeded caused by key %v, want %s", key, approved.PaymentID)
		}
		intent = stripego.PaymentIntent{}
		json.Unmarshal(byType["payment_intent.payment_failed"][0].Data.Object, &intent)
		if intent.Metadata["paygate_id"] != declined.PaymentID || intent.Status != stripego.PaymentIntentStatusRequiresPaymentMethod ||
			intent.LastPaymentError == nil || intent.LastPaymentError.DeclineCode != "insufficient_funds" {
			t.Errorf("payment_intent.payment_failed about %+v, error %+v", intent, intent.LastPaymentError)
		}
		var refunded stripego.Charge
		json.Unmarshal(byType["charge.refunded"][0].Data.Object, &refunded)
		if refunded.Object != "charge" || refunded.PaymentIntent == nil || refunded.PaymentIntent.ID != charge.ProviderPaymentID ||
			refunded.AmountRefunded != 300 || refunded.Refunded || refunded.Refunds == nil || len(refunded.Refunds.Data) != 1 ||
			refunded.Refunds.Data[0].Metadata["paygate_id"] != refund.RefundID || refunded.Refunds.Data[0].Amount != 300 {
			t.Errorf("charge.refunded about %s", byType["charge.refunded"][0].Data.Object)
		}

		tampered := bytes.Replace(bodies[0], []byte(`"amount":1000`), []byte(`"amount":1`), 1)
		if bytes.Equal(tampered, bodies[0]) {
			tampered = bytes.Replace(bodies[0], []byte(`"livemode":false`), []byte(`"livemode":true`), 1)
		}
		if err := verify(receiver.Deliveries()[0].Header, tampered); err == nil {
			t.Error("a tampered body passed the signature check")
		}
	})
}

// TestWebhookRetried: a webhook the receiver failed is sent again, the same event re-signed.
func TestWebhookRetried(t *testing.T) {
	sandbox, c, receiver := webhookSandbox(t, databasetest.SQLite(t))
	providertest.CheckRetried(t, c, sandbox.WaitForWebhooks, receiver, 2)
}

// TestOneWebhookPerKeptAnswer: one payment sent through two servers at once is charged once, and
// told of once.
func TestOneWebhookPerKeptAnswer(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		first, c, receiver := webhookSandbox(t, pools[0])
		second, twin := served(t, pools[1].Ent, receiver)
		ctx := context.Background()
		req := providertest.Charge(t, providertest.Approved, 1000)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { []*Client{c, twin}[i%2].Charge(ctx, req) })
		}
		wg.Wait()
		first.WaitForWebhooks()
		second.WaitForWebhooks()
		if bodies := receiver.Verified(t); len(bodies) != 1 {
			t.Errorf("%d webhooks for one payment charged once, want 1", len(bodies))
		}
	})
}

func TestSimulate(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		ctx := context.Background()
		req := providertest.Charge(t, providertest.Approved, 1000)
		charge, err := c.Charge(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: charge.ProviderPaymentID,
			Amount: money.Amount{Minor: 400, Currency: "EUR"}}); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateDispute, req.PaymentID); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, req.PaymentID); err != nil {
			t.Fatal(err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, req.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a refund of a refunded payment = %v", err)
		}
		failing := providertest.Charge(t, providertest.Approved, 700)
		failed, err := c.Charge(ctx, failing)
		if err != nil {
			t.Fatal(err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, failing.PaymentID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: failed.ProviderPaymentID,
			Amount: money.Amount{Minor: 100, Currency: "EUR"}}); !errors.Is(err, provider.ErrUnavailable) {
			t.Errorf("a refund of a payment that failed late = %v, want refused", err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateLateFailure, failing.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("a second late failure = %v", err)
		}
		if err := sandbox.Simulate(ctx, provider.SimulateDispute, "pay_unknown"); !errors.Is(err, sandboxstore.ErrNotFound) {
			t.Errorf("an unknown payment = %v", err)
		}
		if err := sandbox.Simulate(ctx, "refund_twice", req.PaymentID); !errors.Is(err, provider.ErrCannotSimulate) {
			t.Errorf("an unknown simulation = %v", err)
		}
		sandbox.WaitForWebhooks()

		byType := events(t, receiver.Verified(t))
		var dispute struct {
			Object, Charge, PaymentIntent, Status string
			Amount                                int64
		}
		if len(byType["charge.dispute.created"]) != 1 {
			t.Fatalf("events %v, want one charge.dispute.created", counts(byType))
		}
		disputeEvent := byType["charge.dispute.created"][0]
		json.Unmarshal(disputeEvent.Data.Object, &dispute)
		if dispute.Object != "dispute" || dispute.Charge != "ch_"+strings.TrimPrefix(charge.ProviderPaymentID, "pi_") || dispute.Amount != 1000 || dispute.Status != "needs_response" {
			t.Errorf("charge.dispute.created about %s", disputeEvent.Data.Object)
		}
		if disputeEvent.Request.IdempotencyKey != nil {
			t.Error("a dispute says a request caused it")
		}
		var refunded stripego.Charge
		if len(byType["charge.refunded"]) != 2 {
			t.Fatalf("%d charge.refunded, want Paygate's refund and the one at Stripe", len(byType["charge.refunded"]))
		}
		for _, e := range byType["charge.refunded"] { // the one after the refund at Stripe
			if json.Unmarshal(e.Data.Object, &refunded); refunded.Refunded {
				break
			}
		}
		if !refunded.Refunded || refunded.AmountRefunded != 1000 || len(refunded.Refunds.Data) != 2 || refunded.Refunds.Data[0].Amount != 600 ||
			len(refunded.Refunds.Data[0].Metadata) != 0 {
			t.Errorf("charge.refunded after a refund at Stripe: %+v, refunds %+v", refunded, refunded.Refunds)
		}
		var intent stripego.PaymentIntent
		if len(byType["payment_intent.payment_failed"]) != 1 {
			t.Fatalf("events %v, want one payment_intent.payment_failed", counts(byType))
		}
		json.Unmarshal(byType["payment_intent.payment_failed"][0].Data.Object, &intent)
		if intent.ID != failed.ProviderPaymentID || intent.Status != stripego.PaymentIntentStatusRequiresPaymentMethod || intent.LastPaymentError == nil {
			t.Errorf("payment_intent.payment_failed about %s", byType["payment_intent.payment_failed"][0].Data.Object)
		}
	})
}

// newSandbox is the sandbox as Paygate builds it, signing with testSecret, its challenge pages at
// pages.
func newSandbox(db *ent.Client, now func() time.Time, pages string) *sandbox.Sandbox {
	return Registration.NewSandbox(db, provider.Settings{webhookSecret: testSecret}, now, pages).(*sandbox.Sandbox)
}

// TestCaptureWebhooks: an authorisation, its capture and its cancellation are each told of once,
// signed, by the event Stripe sends, about the intent as it then stands, and read as what they
// are; a replayed or refused request tells nothing; and of captures and a cancellation of one
// authorisation sent through two servers at once, the one taken is told of once.
func TestCaptureWebhooks(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		first, c, receiver := webhookSandbox(t, pools[0])
		second, twin := served(t, pools[1].Ent, receiver)
		ctx := context.Background()
		next := deliveredSince(t, first, receiver)
		told := func() []deliveredEvent {
			t.Helper()
			second.WaitForWebhooks()
			return next()
		}
		// toldOnce checks that one event of kind was told, caused by key and read as want, and
		// returns its PaymentIntent.
		toldOnce := func(what, kind, key string, want provider.NotificationKind) stripego.PaymentIntent {
			t.Helper()
			fresh := told()
			if len(fresh) != 1 || fresh[0].Type != kind {
				t.Fatalf("%s: events %v, want one %s", what, fresh, kind)
			}
			if n, err := ReadNotification(fresh[0].Type, fresh[0].Payload); err != nil || n.Kind != want {
				t.Errorf("%s: read %+v, %v; want %s", what, n, err, want)
			}
			e := events(t, [][]byte{fresh[0].Payload})[kind][0]
			if e.Request.IdempotencyKey == nil || *e.Request.IdempotencyKey != key {
				t.Errorf("%s: caused by key %v, want %s", what, e.Request.IdempotencyKey, key)
			}
			var intent stripego.PaymentIntent
			if err := json.Unmarshal(e.Data.Object, &intent); err != nil {
				t.Fatal(err)
			}
			return intent
		}
		eur := func(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "EUR"} }

		req, held := providertest.Authorize(t, c, providertest.Approved, 5000)
		intent := toldOnce("authorisation", "payment_intent.amount_capturable_updated", req.PaymentID, provider.ChargeSucceeded)
		if intent.ID != held.ProviderPaymentID || intent.Status != stripego.PaymentIntentStatusRequiresCapture || intent.AmountCapturable != 5000 ||
			intent.AmountReceived != 0 || intent.CaptureMethod != stripego.PaymentIntentCaptureMethodManual || intent.Metadata["paygate_id"] != req.PaymentID {
			t.Errorf("payment_intent.amount_capturable_updated about %+v", intent)
		}
		capture := provider.CaptureRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID, Amount: eur(3000), IdempotencyKey: prefixid.New("cap")}
		if _, err := c.Capture(ctx, capture); err != nil {
			t.Fatal(err)
		}
		intent = toldOnce("capture", "payment_intent.succeeded", capture.IdempotencyKey, provider.Captured)
		if intent.Status != stripego.PaymentIntentStatusSucceeded || intent.AmountReceived != 3000 || intent.AmountCapturable != 0 {
			t.Errorf("payment_intent.succeeded after a capture about %+v", intent)
		}
		c.Capture(ctx, capture) // replayed
		// Refused: nothing happened, nothing told.
		c.Capture(ctx, provider.CaptureRequest{ProviderPaymentID: held.ProviderPaymentID, Amount: eur(1000), IdempotencyKey: prefixid.New("cap")})
		c.Cancel(ctx, provider.CancelRequest{ProviderPaymentID: held.ProviderPaymentID, Reason: "duplicate", IdempotencyKey: prefixid.New("can")})
		if fresh := told(); len(fresh) != 0 {
			t.Errorf("a replayed capture and refused requests told %v", fresh)
		}
		refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: held.ProviderPaymentID, Amount: eur(3000)}
		if _, err := c.Refund(ctx, refund); err != nil {
			t.Fatal(err)
		}
		fresh := told()
		if len(fresh) != 1 || fresh[0].Type != "charge.refunded" {
			t.Fatalf("a refund of all that was captured told %v", fresh)
		}
		var refunded stripego.Charge
		json.Unmarshal(events(t, [][]byte{fresh[0].Payload})["charge.refunded"][0].Data.Object, &refunded)
		if refunded.Amount != 5000 || refunded.AmountCaptured != 3000 || refunded.AmountRefunded != 3000 || !refunded.Refunded {
			t.Errorf("charge.refunded after a refund of all that was captured about %+v", refunded)
		}

		req, held = providertest.Authorize(t, c, providertest.Approved, 4000)
		toldOnce("authorisation", "payment_intent.amount_capturable_updated", req.PaymentID, provider.ChargeSucceeded)
		void := provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: held.ProviderPaymentID, Reason: "fraudulent", IdempotencyKey: prefixid.New("can")}
		if _, err := c.Cancel(ctx, void); err != nil {
			t.Fatal(err)
		}
		intent = toldOnce("cancellation", "payment_intent.canceled", void.IdempotencyKey, provider.Canceled)
		if intent.Status != stripego.PaymentIntentStatusCanceled || intent.CancellationReason != stripego.PaymentIntentCancellationReasonFraudulent ||
			intent.CanceledAt == 0 || intent.AmountCapturable != 0 {
			t.Errorf("payment_intent.canceled about %+v", intent)
		}
		c.Cancel(ctx, void) // replayed
		if fresh := told(); len(fresh) != 0 {
			t.Errorf("a replayed cancellation told %v", fresh)
		}

		req, held = providertest.Authorize(t, c, providertest.Approved, 3000)
		told()
		var wg sync.WaitGroup
		for i := range 8 {
			server := []*Client{c, twin}[i%2]
			wg.Go(func() {
				if i == 0 {
					server.Cancel(ctx, provider.CancelRequest{ProviderPaymentID: held.ProviderPaymentID, Reason: "duplicate", IdempotencyKey: prefixid.New("can")})
				} else {
					server.Capture(ctx, provider.CaptureRequest{ProviderPaymentID: held.ProviderPaymentID, Amount: eur(1000), IdempotencyKey: prefixid.New("cap")})
				}
			})
		}
		wg.Wait()
		if fresh := told(); len(fresh) != 1 || fresh[0].Type != "payment_intent.succeeded" && fresh[0].Type != "payment_intent.canceled" {
			t.Errorf("captures and a cancellation of one authorisation at once told %v, want one capture or cancellation", fresh)
		}
	})
}

// TestChallengeDecidedOnce: the shopper's submissions of one challenge page reaching two servers
// at once decide the PaymentIntent once, told of by one event that no API request caused; the
// other submissions find no challenge there.
func TestChallengeDecidedOnce(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		first, c, receiver := webhookSandbox(t, pools[0])
		second, twin := served(t, pools[1].Ent, receiver)
		next := deliveredSince(t, first, receiver)
		req := providertest.Charge(t, provider.AuthenticateThenApprove, 2500)
		req.ReturnURL = "https://shop.example/paid"
		waiting, err := c.Charge(context.Background(), req)
		if err != nil || !waiting.AwaitsShopper() {
			t.Fatalf("charge = %+v, %v; want a page for the shopper", waiting, err)
		}
		if fresh := next(); len(fresh) != 1 || fresh[0].Type != "payment_intent.requires_action" {
			t.Fatalf("events %v, want one payment_intent.requires_action", fresh)
		}
		pages := []string{waiting.RedirectURL, strings.Replace(waiting.RedirectURL, c.BaseURL, twin.BaseURL, 1)}
		browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				resp, err := browser.PostForm(pages[i%2], url.Values{"outcome": {"complete"}})
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		decided := 0
		for _, status := range statuses {
			switch status {
			case http.StatusSeeOther:
				decided++
			case http.StatusNotFound:
			default:
				t.Errorf("a submission answered %d, want 303 or 404", status)
			}
		}
		if decided != 1 {
			t.Errorf("%d of %d submissions of one challenge decided it, want 1: %v", decided, n, statuses)
		}
		second.WaitForWebhooks()
		fresh := next()
		if len(fresh) != 1 || fresh[0].Type != "payment_intent.succeeded" {
			t.Fatalf("events %v, want one payment_intent.succeeded", fresh)
		}
		if e := events(t, [][]byte{fresh[0].Payload})["payment_intent.succeeded"][0]; e.Request.IdempotencyKey != nil {
			t.Errorf("the decision says the request under key %q caused it", *e.Request.IdempotencyKey)
		}
	})
}
