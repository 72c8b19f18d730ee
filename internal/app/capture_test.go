package app

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/state"
)

// manualBody is a payment of amount in currency with capture_method manual.
func manualBody(amount, currency string) map[string]any {
	body := paymentBody(amount, currency, "4242424242424242")
	body["capture_method"] = "manual"
	return body
}

// TestManualCaptureAtEveryProvider: over REST, at each provider's sandbox, a manual payment is
// authorised; refunded only once captured; captured once, in part (Stripe at once, Adyen and
// Checkout.com confirmed by their webhooks); refunded up to what was captured; another is voided;
// and both show in the list filtered by status.
func TestManualCaptureAtEveryProvider(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		for _, tc := range []struct {
			provider, currency string
			confirmedLater     bool
		}{{"stripe", "USD", false}, {"adyen", "EUR", true}, {"checkout", "GBP", true}} {
			made := env.request(http.MethodPost, "/api/v1/payments", admin, manualBody("50.00", tc.currency))
			id := str(get(made.data(), "id"))
			if made.status != http.StatusCreated || str(get(made.data(), "status")) != "requires_capture" || str(get(made.data(), "provider")) != tc.provider ||
				str(get(made.data(), "amount_capturable")) != "50.00" || str(get(made.data(), "amount_captured")) != "0.00" ||
				get(made.data(), "capture_before") == nil || str(get(made.data(), "capture_method")) != "manual" {
				t.Fatalf("%s: manual payment: %d %s", tc.provider, made.status, made.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, nil); r.status != http.StatusConflict {
				t.Errorf("%s: refund before capture: %d %s, want 409", tc.provider, r.status, r.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/capture", admin, map[string]any{"amount": 50.01}); r.status != http.StatusUnprocessableEntity {
				t.Errorf("%s: capture above the authorisation: %d %s, want 422", tc.provider, r.status, r.raw)
			} else if code, _ := r.errorCode(); code != "capture_exceeds_authorization" {
				t.Errorf("%s: capture above the authorisation: %s", tc.provider, code)
			}
			captured := env.request(http.MethodPost, "/api/v1/payments/"+id+"/capture", admin, map[string]any{"amount": 30}, "Idempotency-Key", "cap-"+id)
			// A provider that confirms later may have confirmed before the request is answered.
			settled := captured.status == http.StatusOK && str(get(captured.data(), "status")) == "succeeded"
			taken := captured.status == http.StatusAccepted && str(get(captured.data(), "status")) == "processing"
			if !settled && !(taken && tc.confirmedLater) {
				t.Fatalf("%s: capture of 30.00: %d %s", tc.provider, captured.status, captured.raw)
			}
			waitFor(t, tc.provider+" capture confirmed", func() bool { return env.payment(id).Status == state.PaymentSucceeded })
			if p := env.payment(id); p.AmountCaptured != 3000 || p.AmountCapturable != 0 || p.PendingAction != nil {
				t.Errorf("%s: captured %d, capturable %d, pending %v; want 30.00, 0, none", tc.provider, p.AmountCaptured, p.AmountCapturable, p.PendingAction)
			}
			if again := env.request(http.MethodPost, "/api/v1/payments/"+id+"/capture", admin, map[string]any{"amount": 30}, "Idempotency-Key", "cap-"+id); again.header.Get("Idempotent-Replayed") != "true" ||
				str(get(again.data(), "status")) != "succeeded" {
				t.Errorf("%s: the capture's retry: %d %s", tc.provider, again.status, again.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/capture", admin, nil); r.status != http.StatusConflict {
				t.Errorf("%s: a second capture: %d %s, want 409", tc.provider, r.status, r.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": 30.01}); r.status != http.StatusUnprocessableEntity {
				t.Errorf("%s: refund above what was captured: %d %s, want 422", tc.provider, r.status, r.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": 10}); r.status != http.StatusCreated {
				t.Errorf("%s: refund of 10.00 of 30.00 captured: %d %s", tc.provider, r.status, r.raw)
			}

			held := env.request(http.MethodPost, "/api/v1/payments", admin, manualBody("20.00", tc.currency))
			heldID := str(get(held.data(), "id"))
			canceled := env.request(http.MethodPost, "/api/v1/payments/"+heldID+"/cancel", admin, map[string]any{"reason": "duplicate"})
			if canceled.status != http.StatusOK || str(get(canceled.data(), "status")) != "canceled" || str(get(canceled.data(), "cancellation_reason")) != "duplicate" ||
				get(canceled.data(), "canceled_at") == nil {
				t.Errorf("%s: cancel: %d %s", tc.provider, canceled.status, canceled.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+heldID+"/capture", admin, nil); r.status != http.StatusConflict {
				t.Errorf("%s: capture after cancel: %d %s, want 409", tc.provider, r.status, r.raw)
			}
			if r := env.request(http.MethodPost, "/api/v1/payments/"+heldID+"/cancel", admin, map[string]any{"reason": "expired"}); r.status != http.StatusBadRequest {
				t.Errorf("%s: cancel for Paygate's own reason: %d %s, want 400", tc.provider, r.status, r.raw)
			}
			if ids, _ := env.listIDs(admin, "/api/v1/payments?status=canceled&limit=100"); !slices.Contains(ids, heldID) {
				t.Errorf("%s: the canceled payment is not listed by status=canceled: %v", tc.provider, ids)
			}
		}
		// The providers' confirmations, processed, leave every payment as the requests did. Events
		// that came while their payment's request was still recording its answer wait it out.
		env.clock.Advance(payment.InFlightGrace)
		waitFor(t, "the providers' webhooks processed", func() bool {
			for _, p := range []string{"stripe", "adyen", "checkout"} {
				for _, e := range env.storedEvents(p) {
					if e.Status == state.WebhookReceived || e.Status == state.WebhookFailed {
						return false
					}
				}
			}
			return true
		})
		for _, p := range []string{"stripe", "adyen", "checkout"} {
			for _, e := range env.storedEvents(p) {
				if e.LastError != nil && *e.LastError != "" && e.Status != state.WebhookProcessed && e.Status != state.WebhookIgnored {
					t.Errorf("%s event %s %s: %s", p, e.Type, e.Status, *e.LastError)
				}
			}
		}
	})
}

// TestCaptureOverGraphQLAndExpiry: GraphQL authorises (captureMethod MANUAL), lists by status,
// captures and cancels; an authorisation left past capture_before is canceled as expired by the
// background loop's pass.
func TestCaptureOverGraphQLAndExpiry(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		const create = `mutation($key: String) { createPayment(input: {amount: "40.00", currency: "USD", paymentMethod: CREDIT_CARD,
			customer: {email: "ann@example.com"}, card: {number: "4242424242424242", expMonth: 12, expYear: 2040, cvc: "123"},
			captureMethod: MANUAL, idempotencyKey: $key}) { id status captureMethod amountCapturable amountCaptured captureBefore } }`
		made := get(env.mustGraphQL(admin, create, map[string]any{"key": "gql-manual-1"}), "createPayment")
		id := str(get(made, "id"))
		if str(get(made, "status")) != "REQUIRES_CAPTURE" || str(get(made, "captureMethod")) != "MANUAL" || str(get(made, "amountCapturable")) != "40.00" || get(made, "captureBefore") == nil {
			t.Fatalf("createPayment MANUAL = %v", made)
		}
		listed := env.mustGraphQL(admin, `{ payments(where: {status: REQUIRES_CAPTURE}) { edges { node { id } } } }`, nil)
		if edges, _ := get(listed, "payments", "edges").([]any); len(edges) != 1 || str(get(edges[0], "node", "id")) != id {
			t.Errorf("payments where REQUIRES_CAPTURE = %v", listed)
		}
		captured := get(env.mustGraphQL(admin, `mutation($id: ID!) { capturePayment(input: {paymentId: $id, amount: "25.50"}) { status amountCaptured amountCapturable } }`,
			map[string]any{"id": id}), "capturePayment")
		if str(get(captured, "status")) != "SUCCEEDED" || str(get(captured, "amountCaptured")) != "25.50" || str(get(captured, "amountCapturable")) != "0.00" {
			t.Errorf("capturePayment = %v", captured)
		}
		if _, errs := env.graphql(admin, `mutation($id: ID!) { cancelPayment(input: {paymentId: $id}) { status } }`, map[string]any{"id": id}); len(errs) != 1 || errs[0].code() != "invalid_state" {
			t.Errorf("cancelPayment of a captured payment: %v, want invalid_state", errs)
		}
		viewer := env.tokenFor("viewer")
		if _, errs := env.graphql(viewer, `mutation($id: ID!) { capturePayment(input: {paymentId: $id}) { status } }`, map[string]any{"id": id}); len(errs) != 1 || errs[0].code() != "forbidden" {
			t.Errorf("capturePayment by a viewer: %v, want forbidden", errs)
		}

		other := str(get(env.mustGraphQL(admin, create, map[string]any{"key": "gql-manual-2"}), "createPayment", "id"))
		voided := get(env.mustGraphQL(admin, `mutation($id: ID!) { cancelPayment(input: {paymentId: $id, reason: FRAUDULENT}) { status cancellationReason canceledAt } }`,
			map[string]any{"id": other}), "cancelPayment")
		if str(get(voided, "status")) != "CANCELED" || str(get(voided, "cancellationReason")) != "FRAUDULENT" || get(voided, "canceledAt") == nil {
			t.Errorf("cancelPayment = %v", voided)
		}

		lapsing := str(get(env.mustGraphQL(admin, create, map[string]any{"key": "gql-manual-3"}), "createPayment", "id"))
		env.clock.Advance(payment.DefaultCaptureWindow + time.Minute)
		if err := env.app.expire(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p := env.payment(lapsing); p.Status != state.PaymentCanceled || p.CancellationReason == nil || *p.CancellationReason != state.CanceledExpired {
			t.Errorf("an authorisation past capture_before: %s %v, want canceled as expired", p.Status, p.CancellationReason)
		}
		r := env.request(http.MethodGet, "/api/v1/payments/"+lapsing, env.tokenFor("admin"), nil) // the first token lapsed with the days
		history, _ := get(r.data(), "status_history").([]any)
		if len(history) != 4 || str(get(history[3], "to")) != "canceled" || str(get(history[3], "actor")) != "system" {
			t.Errorf("history of the expired authorisation: %v", history)
		}
	})
}
