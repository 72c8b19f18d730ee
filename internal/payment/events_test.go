package payment_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	entevent "github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// eventsOf are the types of the events written about objectID, oldest first, each checked to
// show the object with that id.
func eventsOf(t *testing.T, db *database.DB, objectID string) []string {
	t.Helper()
	found, err := db.Ent.Event.Query().Where(entevent.ObjectID(objectID)).Order(ent.Asc(entevent.FieldCreatedAt), ent.Asc(entevent.FieldID)).All(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range found {
		var body struct {
			ID, Object, Type string
			Data             struct{ Object map[string]any }
		}
		if err := json.Unmarshal(e.Body, &body); err != nil || body.ID != e.ID || body.Object != "event" || body.Type != e.Type || body.Data.Object["id"] != objectID {
			t.Errorf("event %s: %s", e.ID, e.Body)
		}
		types = append(types, e.Type)
	}
	return types
}

// TestEveryChangeTellsMerchants: each move of a payment or a refund writes one event with it,
// showing the object as it then is; a change refused writes none.
func TestEveryChangeTellsMerchants(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		svc := newService(db, providertest.Memory{}, 99999999)
		ctx := allowed()
		check := func(objectID string, want ...string) {
			t.Helper()
			if got := eventsOf(t, db, objectID); !equal(got, want) {
				t.Errorf("events of %s = %v, want %v", objectID, got, want)
			}
		}

		paid, err := svc.Create(ctx, validInput())
		if err != nil {
			t.Fatal(err)
		}
		check(paid.ID, event.PaymentSucceeded)
		last, _ := db.Ent.Event.Query().Where(entevent.ObjectID(paid.ID)).Only(databasetest.AsMerchant())
		var shown struct {
			Data struct{ Object payment.Object }
		}
		json.Unmarshal(last.Body, &shown)
		if want := payment.ObjectOf(paid); shown.Data.Object.Status != state.PaymentSucceeded || shown.Data.Object.UpdatedAt != want.UpdatedAt ||
			shown.Data.Object.AmountCaptured != want.AmountCaptured || shown.Data.Object.Card != want.Card {
			t.Errorf("payment.succeeded shows %+v, the payment is %+v", shown.Data.Object, want)
		}

		part, err := svc.Refund(ctx, payment.RefundInput{PaymentID: paid.ID, Amount: decimal("10.00")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: paid.ID, Amount: decimal("99.00")}); err == nil {
			t.Fatal("a refund of more than is left was taken")
		}
		rest, err := svc.Refund(ctx, payment.RefundInput{PaymentID: paid.ID})
		if err != nil {
			t.Fatal(err)
		}
		check(paid.ID, event.PaymentSucceeded, event.PaymentRefunded, event.PaymentRefunded)
		check(part.ID, event.RefundSucceeded)
		check(rest.ID, event.RefundSucceeded)

		declined := validInput()
		declined.Card.Number = "4000000000000002"
		failed, err := svc.Create(ctx, declined)
		if err != nil {
			t.Fatal(err)
		}
		check(failed.ID, event.PaymentFailed)

		held, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID}); err != nil {
			t.Fatal(err)
		}
		check(held.ID, event.PaymentRequiresCapture, event.PaymentProcessing, event.PaymentSucceeded) // processing while the provider is asked
		voided, err := svc.Create(ctx, manualInput())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Cancel(ctx, payment.CancelInput{PaymentID: voided.ID}); err != nil {
			t.Fatal(err)
		}
		check(voided.ID, event.PaymentRequiresCapture, event.PaymentCanceled)
	})
}

// TestCreateWakesTheDeliveries: a create whose answer wrote an event tells the recorder's Written
// once that event is committed.
func TestCreateWakesTheDeliveries(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		svc := newService(db, providertest.Memory{}, 99999999)
		var committed []int
		svc.Events = &event.Recorder{Written: func() {
			committed = append(committed, db.Ent.Event.Query().CountX(databasetest.AsMerchant()))
		}}
		if _, err := svc.Create(allowed(), validInput()); err != nil {
			t.Fatal(err)
		}
		if len(committed) != 1 || committed[0] != 1 {
			t.Errorf("Written was told with %v events committed; want once, with 1", committed)
		}
	})
}

// TestSampleObjects: a test event of each type shows a sample in the shape of the real object,
// in the state the type tells of, with ids that say it is a test.
func TestSampleObjects(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 15, 0, time.UTC)
	for eventType, want := range map[string]string{
		event.PaymentSucceeded: "succeeded", event.PaymentFailed: "failed", event.PaymentProcessing: "processing",
		event.PaymentRequiresAction: "requires_action", event.PaymentRequiresCapture: "requires_capture",
		event.PaymentCanceled: "canceled", event.PaymentRefunded: "refunded", event.DisputeCreated: "succeeded",
		event.RefundSucceeded: "succeeded", event.RefundFailed: "failed",
		event.PaymentReversed: "canceled", event.PaymentReversalFailed: "canceled",
	} {
		body, err := event.NewBody("evt_test_1", eventType, at, payment.SampleObject(eventType, "stripe", at))
		if err != nil {
			t.Fatal(err)
		}
		var shown struct {
			Data struct{ Object map[string]any }
		}
		json.Unmarshal(body, &shown)
		object := shown.Data.Object
		id, _ := object["id"].(string)
		if object["status"] != want || len(id) < 10 || (id[:9] != "pay_test_" && id[:8] != "re_test_") {
			t.Errorf("%s shows %v", eventType, object)
		}
		switch eventType {
		case event.PaymentRequiresAction:
			if object["next_action"] == nil {
				t.Errorf("%s has no next_action", eventType)
			}
		case event.DisputeCreated:
			if object["dispute_reason"] != "fraudulent" {
				t.Errorf("%s has no dispute", eventType)
			}
		case event.RefundFailed:
			if object["failure_code"] != "refund_declined" {
				t.Errorf("%s has no failure code", eventType)
			}
		case event.PaymentReversed:
			if object["reversal_status"] != "refunded" || object["reversal_failure_message"] != nil {
				t.Errorf("%s shows reversal %v (%v)", eventType, object["reversal_status"], object["reversal_failure_message"])
			}
		case event.PaymentReversalFailed:
			if object["reversal_status"] != "failed" || object["reversal_failure_message"] == nil {
				t.Errorf("%s shows reversal %v (%v)", eventType, object["reversal_status"], object["reversal_failure_message"])
			}
		}
	}
	if len(event.Types) != 12 {
		t.Errorf("%d event types, the test knows 12", len(event.Types))
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
