package inbound_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/state"
)

func checkoutDelivery(body, secret string) http.Header {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return http.Header{"Cko-Signature": {hex.EncodeToString(mac.Sum(nil))}}
}

// TestInboxStoresOnceAndForgetsAfterRetention: a delivery is stored once however often it comes,
// the worker is told of new events only, a provider without a secret refuses everything, and
// events are forgotten once past their retention and done with, not before, and dead ones never.
func TestInboxStoresOnceAndForgetsAfterRetention(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		told, refused := 0, 0
		verifier, err := checkout.Registration.NewVerifier(provider.Settings{"WEBHOOK_SECRET": "secret"}, c.Now)
		if err != nil {
			t.Fatal(err)
		}
		inbox := &inbound.Inbox{Client: db.Ent, Sources: map[string]inbound.Source{"checkout": {Verifier: verifier}, "stripe": {}}, Now: c.Now, Logger: quietLog,
			Stored: func() { told++ }, SignatureRefused: func(string) { refused++ }}
		body := `{"id":"evt_1","type":"payment_approved","data":{}}`
		for range 3 {
			if _, err := inbox.Receive(ctx, "checkout", checkoutDelivery(body, "secret"), []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		receipt, err := inbox.Receive(ctx, "checkout", checkoutDelivery(body, "secret"), []byte(body))
		if err != nil || receipt.Stored != 0 || receipt.Duplicates != 1 || told != 1 {
			t.Fatalf("fourth delivery: %+v, %v; worker told %d times, want once", receipt, err, told)
		}
		_, err = inbox.Receive(ctx, "stripe", http.Header{"Stripe-Signature": {"t=1,v1=00"}}, []byte(`{}`))
		if apiErr, ok := errors.AsType[*apierror.Error](err); !ok || apiErr.Code != apierror.InvalidSignature || refused != 1 {
			t.Fatalf("a provider without a secret: %v (refusals counted: %d)", err, refused)
		}

		for _, id := range []string{"evt_2", "evt_3"} {
			body := `{"id":"` + id + `","type":"payment_approved","data":{}}`
			if _, err := inbox.Receive(ctx, "checkout", checkoutDelivery(body, "secret"), []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		// evt_1 is done with; evt_2 still waits for the worker; evt_3 waits for a person.
		statuses := map[string]state.WebhookStatus{"evt_1": state.WebhookProcessed, "evt_2": state.WebhookFailed, "evt_3": state.WebhookDead}
		for _, e := range db.Ent.WebhookEvent.Query().AllX(ctx) {
			db.Ent.WebhookEvent.UpdateOneID(e.ID).SetStatus(statuses[e.EventID]).ExecX(ctx)
		}
		c.Advance(inbound.Retention - time.Minute)
		if n, err := inbox.Forget(ctx); err != nil || n != 0 {
			t.Fatalf("forgot %d (%v) before the retention ran out", n, err)
		}
		c.Advance(2 * time.Minute)
		if n, err := inbox.Forget(ctx); err != nil || n != 1 {
			t.Fatalf("forgot %d (%v), want the one done with", n, err)
		}
		if left := db.Ent.WebhookEvent.Query().AllX(ctx); len(left) != 2 || left[0].Status == state.WebhookProcessed || left[1].Status == state.WebhookProcessed {
			t.Fatalf("left %+v, want the event still being retried and the dead one", left)
		}
	})
}
