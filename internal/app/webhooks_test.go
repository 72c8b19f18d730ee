package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	adyenhmac "github.com/adyen/adyen-go-api-library/v14/src/hmacvalidator"
	adyenwebhook "github.com/adyen/adyen-go-api-library/v14/src/webhook"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// The webhook secrets the test servers are configured with, so the tests can sign as the
// providers do.
const (
	testStripeSecret   = "whsec_test_0123456789abcdef0123456789abcdef"
	testAdyenKey       = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
	testCheckoutSecret = "cko_webhook_secret_0123456789abcdef"
)

var webhookSecretsEnv = []string{
	"PAYGATE_STRIPE_WEBHOOK_SECRET=" + testStripeSecret,
	"PAYGATE_ADYEN_WEBHOOK_SECRET=" + testAdyenKey,
	"PAYGATE_CHECKOUT_WEBHOOK_SECRET=" + testCheckoutSecret,
}

// stripeDelivery signs body with Stripe's own test signer, at the time given.
func stripeDelivery(body string, secret string, at time.Time) []string {
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(body), Secret: secret, Timestamp: at})
	return []string{"Stripe-Signature", signed.Header}
}

// checkoutSignature is Checkout.com's Cko-Signature of body.
func checkoutSignature(body, secret string) []string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return []string{"Cko-Signature", hex.EncodeToString(mac.Sum(nil))}
}

// adyenNotification is an Adyen notification of one item, signed with Adyen's own library.
func adyenNotification(t testing.TB, item adyenwebhook.NotificationRequestItem, key string) string {
	t.Helper()
	signature, err := adyenhmac.CalculateHmac(item, key)
	if err != nil {
		t.Fatal(err)
	}
	additional := map[string]any{"hmacSignature": signature}
	item.AdditionalData = &additional
	return mustJSON(t, map[string]any{"live": "false", "notificationItems": []any{map[string]any{"NotificationRequestItem": item}}})
}

func stripeEventBody(id, eventType string, object map[string]any) string {
	encoded, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": eventType, "created": time.Now().Unix(),
		"data": map[string]any{"object": object}})
	return string(encoded)
}

// TestWebhooksAreRefusedUnlessSigned: for each provider, a delivery without a signature, with a
// garbage one, signed with another secret, tampered with after signing, or (Stripe) signed too
// long ago is 401 invalid_signature, counted in the log without its body, and stores nothing; an
// unknown provider is 404; a signed body that is not the provider's shape is 400.
func TestWebhooksAreRefusedUnlessSigned(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		now := time.Now()
		stripeBody := stripeEventBody("evt_refused", "payment_intent.succeeded", map[string]any{"id": "pi_1", "metadata": map[string]any{}})
		checkoutBody := `{"id":"evt_cko_refused","type":"payment_approved","data":{"id":"pay_cko","reference":"pay_x"}}`
		adyenItem := adyenwebhook.NotificationRequestItem{Amount: adyenwebhook.Amount{Currency: "EUR", Value: 1000}, EventCode: "AUTHORISATION",
			MerchantAccountCode: "PaygateSandbox", MerchantReference: "pay_x", PspReference: "PSP0000000000001", Success: "true"}
		adyenSigned := adyenNotification(t, adyenItem, testAdyenKey)
		adyenOtherKey := adyenNotification(t, adyenItem, strings.Repeat("AB", 32))

		for _, tc := range []struct {
			name, provider, body string
			headers              []string
			status               int
			code                 string
		}{
			{"stripe unsigned", "stripe", stripeBody, nil, 401, "invalid_signature"},
			{"stripe garbage", "stripe", stripeBody, []string{"Stripe-Signature", "t=abc,v1=zz"}, 401, "invalid_signature"},
			{"stripe other secret", "stripe", stripeBody, stripeDelivery(stripeBody, "whsec_other", now), 401, "invalid_signature"},
			{"stripe tampered", "stripe", strings.Replace(stripeBody, "pi_1", "pi_2", 1), stripeDelivery(stripeBody, testStripeSecret, now), 401, "invalid_signature"},
			{"stripe stale", "stripe", stripeBody, stripeDelivery(stripeBody, testStripeSecret, now.Add(-6*time.Minute)), 401, "invalid_signature"},
			{"stripe not an event", "stripe", `{"id":"x"}`, stripeDelivery(`{"id":"x"}`, testStripeSecret, now), 400, "invalid_request"},
			{"checkout unsigned", "checkout", checkoutBody, nil, 401, "invalid_signature"},
			{"checkout garbage", "checkout", checkoutBody, []string{"Cko-Signature", "not hex"}, 401, "invalid_signature"},
			{"checkout other secret", "checkout", checkoutBody, checkoutSignature(checkoutBody, "other"), 401, "invalid_signature"},
			{"checkout tampered", "checkout", checkoutBody + " ", checkoutSignature(checkoutBody, testCheckoutSecret), 401, "invalid_signature"},
			{"checkout not an event", "checkout", `[1]`, checkoutSignature(`[1]`, testCheckoutSecret), 400, "invalid_request"},
			{"adyen unsigned", "adyen", strings.Replace(adyenSigned, "hmacSignature", "other", 1), nil, 401, "invalid_signature"},
			{"adyen other key", "adyen", adyenOtherKey, nil, 401, "invalid_signature"},
			{"adyen tampered", "adyen", strings.Replace(adyenSigned, `"value":1000`, `"value":1`, 1), nil, 401, "invalid_signature"},
			{"adyen not a notification", "adyen", `{"notificationItems":[]}`, nil, 400, "invalid_request"},
			{"unknown provider", "paypal", stripeBody, stripeDelivery(stripeBody, testStripeSecret, now), 404, "not_found"},
		} {
			r := env.request(http.MethodPost, "/webhooks/"+tc.provider, "", tc.body, tc.headers...)
			if code, _ := r.errorCode(); r.status != tc.status || code != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.raw, tc.status, tc.code)
			}
		}
		if n := db.Ent.WebhookEvent.Query().CountX(databasetest.AsMerchant()); n != 0 {
			t.Errorf("%d events stored from refused deliveries", n)
		}
		logs := env.logs.String()
		if strings.Count(logs, "webhook refused: signature") != 12 || strings.Contains(logs, "pi_1") || strings.Contains(logs, "pay_cko") {
			t.Errorf("signature refusals are each logged, without the body:\n%s", logs)
		}
		if r := env.request(http.MethodGet, "/webhooks/stripe", "", nil); r.status != http.StatusMethodNotAllowed {
			t.Errorf("GET /webhooks/stripe: %d", r.status)
		}
	})
}

// TestWebhookDeliveredTwiceIsStoredOnce: a provider's delivery sent again (the same event id) is
// acknowledged and not stored again; Adyen is answered [accepted].
func TestWebhookDeliveredTwiceIsStoredOnce(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		stripeBody := stripeEventBody("evt_twice", "customer.created", map[string]any{"id": "cus_1"})
		checkoutBody := `{"id":"evt_cko_twice","type":"card_verified","data":{"id":"pay_cko"}}`
		adyenBody := adyenNotification(t, adyenwebhook.NotificationRequestItem{Amount: adyenwebhook.Amount{Currency: "EUR", Value: 1000},
			EventCode: "REPORT_AVAILABLE", MerchantAccountCode: "PaygateSandbox", PspReference: "PSP0000000000002", Success: "true"}, testAdyenKey)
		for range 2 {
			for _, delivery := range []struct {
				provider, body string
				headers        []string
				answer         string
			}{
				{"stripe", stripeBody, stripeDelivery(stripeBody, testStripeSecret, time.Now()), `"received":true`},
				{"checkout", checkoutBody, checkoutSignature(checkoutBody, testCheckoutSecret), `"received":true`},
				{"adyen", adyenBody, nil, "[accepted]"},
			} {
				r := env.request(http.MethodPost, "/webhooks/"+delivery.provider, "", delivery.body, delivery.headers...)
				if r.status != http.StatusOK || !strings.Contains(r.raw, delivery.answer) {
					t.Errorf("%s: %d %s", delivery.provider, r.status, r.raw)
				}
			}
		}
		for _, provider := range []string{"stripe", "checkout", "adyen"} {
			if events := env.storedEvents(provider); len(events) != 1 || events[0].Status != state.WebhookReceived {
				t.Errorf("%s: %d events stored from two deliveries of one", provider, len(events))
			}
		}
	})
}

// waitFor polls cond until it holds, or fails the test after a while: for what the server does
// in the background (a sandbox's webhook, the worker).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSimulatedEventsReachThePayment: at each provider, a refund made in its dashboard, a dispute
// and a late failure, simulated through its sandbox, come back as signed webhooks through
// /webhooks/{provider} and are processed: the refund becomes a refund of the payment, the
// dispute is recorded, and the late failure is ignored with its reason, never moving a succeeded
// payment back.
func TestSimulatedEventsReachThePayment(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		for _, tc := range []struct {
			provider, currency, refundType, disputeType, lateFailureType string
		}{
			{"stripe", "USD", "charge.refunded", "charge.dispute.created", "payment_intent.payment_failed"},
			{"adyen", "EUR", "REFUND", "CHARGEBACK", "CANCELLATION"},
			{"checkout", "GBP", "payment_refunded", "dispute_received", "payment_declined"},
		} {
			refunded := env.succeededPayment(admin, "25.00", tc.currency, tc.provider)
			r := env.request(http.MethodPost, "/api/v1/payments/"+refunded+"/refunds", admin, map[string]any{"amount": "5.00"})
			if r.status != http.StatusCreated {
				t.Fatalf("%s: refund through Paygate: %d %s", tc.provider, r.status, r.raw)
			}
			env.clock.Advance(provider.DefaultSettleAfter) // a refund the provider settles later settles at its sandbox's next round
			r = env.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"provider": tc.provider, "payment_id": refunded, "type": tc.refundType})
			if r.status != http.StatusAccepted {
				t.Fatalf("%s: simulate %s: %d %s", tc.provider, tc.refundType, r.status, r.raw)
			}
			waitFor(t, tc.provider+" dashboard refund", func() bool { return env.payment(refunded).Status == state.PaymentRefunded })
			p := env.payment(refunded)
			dashboard := db.Ent.Refund.Query().Where(refund.PaymentID(refunded), refund.ReasonEQ("made at "+tc.provider)).AllX(databasetest.AsMerchant())
			if p.AmountRefunded != 2500 || len(dashboard) != 1 || dashboard[0].Amount != 2000 || dashboard[0].Status != state.RefundSucceeded || dashboard[0].ProviderRefundID == nil {
				t.Errorf("%s: payment refunded %d, dashboard refunds %+v; want 25.00 refunded, one refund of 20.00 made at the provider", tc.provider, p.AmountRefunded, dashboard)
			}
			// The same event processed again changes nothing.
			event := db.Ent.WebhookEvent.Query().Where(webhookevent.Provider(tc.provider), webhookevent.Type(tc.refundType),
				webhookevent.PaymentID(refunded), webhookevent.StatusEQ(state.WebhookProcessed)).FirstX(databasetest.AsMerchant())
			db.Ent.WebhookEvent.UpdateOneID(event.ID).SetStatus(state.WebhookReceived).SetNextAttemptAt(time.Now()).ExecX(databasetest.AsMerchant())
			env.app.services.webhookWorker.Wake()
			waitFor(t, tc.provider+" event processed again", func() bool {
				return db.Ent.WebhookEvent.GetX(databasetest.AsMerchant(), event.ID).Status != state.WebhookReceived
			})
			if again := env.payment(refunded); again.AmountRefunded != 2500 || !again.UpdatedAt.Equal(p.UpdatedAt) ||
				db.Ent.Refund.Query().Where(refund.PaymentID(refunded)).CountX(databasetest.AsMerchant()) != 2 {
				t.Errorf("%s: processing the refund's event again changed the payment: %d refunded", tc.provider, again.AmountRefunded)
			}

			disputed := env.succeededPayment(admin, "30.00", tc.currency, tc.provider)
			data := env.mustGraphQL(admin, `mutation($input: SimulateEventInput!) { simulateEvent(input: $input) { provider paymentId type } }`,
				map[string]any{"input": map[string]any{"paymentId": disputed, "type": tc.disputeType}})
			if str(get(data, "simulateEvent", "provider")) != tc.provider {
				t.Fatalf("%s: simulateEvent answered %v", tc.provider, data)
			}
			waitFor(t, tc.provider+" dispute", func() bool { return env.payment(disputed).DisputedAt != nil })
			got := env.request(http.MethodGet, "/api/v1/payments/"+disputed, admin, nil)
			if str(get(got.data(), "disputed_at")) == "" || str(get(got.data(), "dispute_reason")) == "" || str(get(got.data(), "status")) != "succeeded" {
				t.Errorf("%s: disputed payment %s", tc.provider, got.raw)
			}

			late := env.succeededPayment(admin, "40.00", tc.currency, tc.provider)
			if r := env.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": late, "type": tc.lateFailureType}); r.status != http.StatusAccepted {
				t.Fatalf("%s: simulate %s: %d %s", tc.provider, tc.lateFailureType, r.status, r.raw)
			}
			var ignored *ent.WebhookEvent
			waitFor(t, tc.provider+" late failure ignored", func() bool {
				ignored, _ = db.Ent.WebhookEvent.Query().Where(webhookevent.Provider(tc.provider), webhookevent.Type(tc.lateFailureType),
					webhookevent.StatusEQ(state.WebhookIgnored)).First(databasetest.AsMerchant())
				return ignored != nil
			})
			if ignored.IgnoredReason == nil || !strings.Contains(*ignored.IgnoredReason, "does not move it back") || env.payment(late).Status != state.PaymentSucceeded {
				t.Errorf("%s: late failure %+v, payment %s", tc.provider, ignored, env.payment(late).Status)
			}
		}
	})
}

// TestRefundsSettleByWebhook: Adyen and Checkout.com take a refund and settle it later; their
// settlement webhook moves the pending refund, and a refund the card scheme refuses fails with
// its amount given back to what can be refunded.
func TestRefundsSettleByWebhook(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		for _, tc := range []struct{ provider, currency string }{{"adyen", "EUR"}, {"checkout", "GBP"}} {
			id := env.succeededPayment(admin, "50.00", tc.currency, tc.provider)
			settles := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": "20.00"})
			refused := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": "13.13"})
			if settles.status != http.StatusCreated || str(get(settles.data(), "status")) != "pending" || refused.status != http.StatusCreated {
				t.Fatalf("%s: refunds %d %s / %d %s", tc.provider, settles.status, settles.raw, refused.status, refused.raw)
			}
			settlesID, refusedID := str(get(settles.data(), "id")), str(get(refused.data(), "id"))
			env.clock.Advance(provider.DefaultSettleAfter) // the sandbox settles them at its next round
			waitFor(t, tc.provider+" refund settlements", func() bool {
				a, b := db.Ent.Refund.GetX(databasetest.AsMerchant(), settlesID), db.Ent.Refund.GetX(databasetest.AsMerchant(), refusedID)
				return a.Status != state.RefundPending && b.Status != state.RefundPending
			})
			p := env.payment(id)
			if a, b := db.Ent.Refund.GetX(databasetest.AsMerchant(), settlesID), db.Ent.Refund.GetX(databasetest.AsMerchant(), refusedID); a.Status != state.RefundSucceeded ||
				b.Status != state.RefundFailed || p.AmountRefunded != 2000 || p.Status != state.PaymentPartiallyRefunded {
				t.Errorf("%s: refunds %s and %s, payment %s with %d refunded; want succeeded, failed, partially refunded 20.00", tc.provider, a.Status, b.Status, p.Status, p.AmountRefunded)
			}
			// What the refused refund held is refundable again.
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": "30.00"}); r.status != http.StatusCreated {
				t.Errorf("%s: refund of the rest: %d %s", tc.provider, r.status, r.raw)
			}
		}
	})
}

// TestWebhookStoredBeforeAServerDiesIsProcessedAfter: a server that stored an event and died
// before its worker got to it (here: it never ran) leaves the event to the server that comes
// up after it, which processes it once.
func TestWebhookStoredBeforeAServerDiesIsProcessedAfter(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		ctx := databasetest.AsMerchant()
		dying := newTestEnv(t, pools[0], webhookSecretsEnv...)
		admin := dying.tokenFor("admin")
		id := dying.succeededPayment(admin, "10.00", "USD", "stripe")
		if r := dying.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": id, "type": "refund"}); r.status != http.StatusAccepted {
			t.Fatalf("simulate: %d %s", r.status, r.raw)
		}
		waitFor(t, "the refund's event stored", func() bool {
			return pools[0].Ent.WebhookEvent.Query().Where(webhookevent.Type("charge.refunded")).CountX(ctx) == 1
		})
		if p := dying.payment(id); p.Status != state.PaymentSucceeded {
			t.Fatalf("processed by a server whose worker never ran: %s", p.Status)
		}

		after := newTestEnv(t, pools[1], webhookSecretsEnv...)
		after.app.Start(t.Context())
		waitFor(t, "the refund processed after the restart", func() bool { return after.payment(id).Status == state.PaymentRefunded })
		event := pools[1].Ent.WebhookEvent.Query().Where(webhookevent.Type("charge.refunded")).OnlyX(ctx)
		refunds := pools[1].Ent.Refund.Query().Where(refund.PaymentID(id)).CountX(ctx)
		if event.Status != state.WebhookProcessed || event.Attempts != 1 || refunds != 1 || after.payment(id).AmountRefunded != 1000 {
			t.Errorf("event %s after %d attempts, %d refunds recorded; want processed once", event.Status, event.Attempts, refunds)
		}
	})
}

// TestServersShareTheWebhookQueue: two servers on one database, each taking deliveries and each
// running its worker: one delivery sent to both at once is stored once, and every event is
// processed by one of them, once.
func TestServersShareTheWebhookQueue(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		ctx := databasetest.AsMerchant()
		servers := newTestServers(t, pools, webhookSecretsEnv...)
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		admin := servers[0].tokenFor("admin")
		var ids []string
		for i := range 6 {
			server := servers[i%2]
			id := server.succeededPayment(admin, "12.00", "USD", "stripe")
			if r := server.request(http.MethodPost, "/api/v1/webhooks/simulate", admin, map[string]any{"payment_id": id, "type": "charge.refunded"}); r.status != http.StatusAccepted {
				t.Fatalf("simulate: %d %s", r.status, r.raw)
			}
			ids = append(ids, id)
		}
		body := stripeEventBody("evt_both", "customer.created", map[string]any{"id": "cus_1"})
		answers := make(chan int, 2)
		for _, s := range servers {
			go func() {
				r, err := s.send(http.MethodPost, "/webhooks/stripe", "", body, stripeDelivery(body, testStripeSecret, time.Now())...)
				if err != nil {
					t.Error(err)
				}
				answers <- r.status
			}()
		}
		if a, b := <-answers, <-answers; a != http.StatusOK || b != http.StatusOK {
			t.Errorf("the same delivery to both servers: %d and %d", a, b)
		}
		if n := pools[0].Ent.WebhookEvent.Query().Where(webhookevent.EventID("evt_both")).CountX(ctx); n != 1 {
			t.Errorf("the same delivery to both servers stored %d times", n)
		}
		for _, id := range ids {
			waitFor(t, "refund of "+id, func() bool { return servers[1].payment(id).Status == state.PaymentRefunded })
			if n := pools[1].Ent.Refund.Query().Where(refund.PaymentID(id)).CountX(ctx); n != 1 {
				t.Errorf("%s: %d refunds recorded, want 1", id, n)
			}
		}
		for _, event := range pools[0].Ent.WebhookEvent.Query().Where(webhookevent.Type("charge.refunded")).AllX(ctx) {
			if event.Status != state.WebhookProcessed || event.Attempts != 1 || event.QueryAttemptLog().CountX(ctx) != 1 {
				t.Errorf("%s: %s after %d attempts, want processed once", event.ID, event.Status, event.Attempts)
			}
		}
	})
}

// TestWebhookWithNULInItsIDIsRefused: a signed delivery whose event id or type holds a NUL
// (which PostgreSQL's text refuses) is 400, not the provider's shape, never an internal error
// the provider would retry for days.
func TestWebhookWithNULInItsIDIsRefused(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		stripeID := `{"id":"evt_\u0000nul","object":"event","type":"customer.created","data":{"object":{"id":"cus_1"}}}`
		stripeType := `{"id":"evt_nul_type","object":"event","type":"customer.\u0000created","data":{"object":{"id":"cus_1"}}}`
		checkout := `{"id":"evt_\u0000cko","type":"card_verified","data":{"id":"pay_cko"}}`
		adyen := adyenNotification(t, adyenwebhook.NotificationRequestItem{Amount: adyenwebhook.Amount{Currency: "EUR", Value: 1000},
			EventCode: "REPORT_AVAILABLE", MerchantAccountCode: "PaygateSandbox", PspReference: "PSP\x00NUL", Success: "true"}, testAdyenKey)
		for _, tc := range []struct {
			name, provider, body string
			headers              []string
		}{
			{"stripe id", "stripe", stripeID, stripeDelivery(stripeID, testStripeSecret, time.Now())},
			{"stripe type", "stripe", stripeType, stripeDelivery(stripeType, testStripeSecret, time.Now())},
			{"checkout id", "checkout", checkout, checkoutSignature(checkout, testCheckoutSecret)},
			{"adyen pspReference", "adyen", adyen, nil},
		} {
			if !strings.Contains(tc.body, `\u0000`) {
				t.Fatalf("%s: no NUL in %s", tc.name, tc.body)
			}
			r := env.request(http.MethodPost, "/webhooks/"+tc.provider, "", tc.body, tc.headers...)
			if r.status >= 500 {
				t.Errorf("%s with a NUL: %d %s", tc.name, r.status, r.raw)
			}
		}
	})
}

// TestUnnamedRefundsAreAskedOfStripe: a charge.refunded that says more was refunded than Paygate
// knows, without naming the refunds (Stripe's API since 2022-11-15), has the charge's refunds
// asked of Stripe and recorded; one that says no more than Paygate knows is ignored.
func TestUnnamedRefundsAreAskedOfStripe(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		ctx := databasetest.AsMerchant()
		token := env.tokenFor("operator")
		paymentID := env.succeededPayment(token, "20.00", "USD", "stripe")
		intentID := *env.payment(paymentID).ProviderPaymentID

		// A refund in Stripe's dashboard; the sandbox's own event, which names it, is lost.
		sandbox := env.app.services.providers.sandboxes["stripe"]
		if err := sandbox.Simulate(ctx, provider.SimulateRefund, paymentID); err != nil {
			t.Fatal(err)
		}
		sandbox.(interface{ WaitForWebhooks() }).WaitForWebhooks()
		db.Ent.WebhookEvent.Delete().ExecX(ctx)

		chargeRefunded := func(eventID string, refunded int64) string {
			return `{"id":"` + eventID + `","object":"event","api_version":"2024-06-20","type":"charge.refunded","data":{"object":` +
				`{"id":"ch_x","object":"charge","amount":2000,"amount_refunded":` + strconv.FormatInt(refunded, 10) + `,"currency":"usd",` +
				`"metadata":{"paygate_id":"` + paymentID + `"},"payment_intent":"` + intentID + `","refunded":true,"status":"succeeded"}}}`
		}
		for _, body := range []string{chargeRefunded("evt_unnamed_1", 2000), chargeRefunded("evt_unnamed_2", 2000)} {
			if r := env.request(http.MethodPost, "/webhooks/stripe", "", body, stripeDelivery(body, testStripeSecret, env.clock.Now())...); r.status != http.StatusOK {
				t.Fatalf("delivery = %d %s", r.status, r.raw)
			}
			if err := env.app.services.webhookWorker.ProcessDueAll(ctx); err != nil {
				t.Fatal(err)
			}
		}
		refunds := db.Ent.Refund.Query().AllX(ctx)
		if p := env.payment(paymentID); p.Status != state.PaymentRefunded || p.AmountRefunded != 2000 || len(refunds) != 1 ||
			refunds[0].Amount != 2000 || refunds[0].Status != state.RefundSucceeded || refunds[0].ProviderRefundID == nil {
			t.Fatalf("payment %s refunded %d, refunds %+v", p.Status, p.AmountRefunded, refunds)
		}
		events := env.storedEvents("stripe")
		statuses := map[string]state.WebhookStatus{}
		for _, e := range events {
			statuses[e.EventID] = e.Status
		}
		if statuses["evt_unnamed_1"] != state.WebhookProcessed || statuses["evt_unnamed_2"] != state.WebhookIgnored {
			t.Errorf("events %v: want the first processed, the second (nothing new) ignored", statuses)
		}
	})
}
