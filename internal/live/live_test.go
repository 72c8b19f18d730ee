package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/state"
)

// TestSlowSubscriberIsDropped: a subscriber that reads nothing is dropped once its buffer is
// full, its stream closed; publishing never waits for it, and the others get every change.
func TestSlowSubscriberIsDropped(t *testing.T) {
	hub := NewHub()
	slow := hub.Subscribe(Payment, "", nil)
	fast := hub.Subscribe(Payment, "", nil)
	other := hub.Subscribe(Refund, "", nil)
	for i := range subscriberBuffer * 3 {
		hub.Publish(Change{Kind: Payment, ID: string(rune('a' + i%26))}) // never waits for slow
		if c, open := <-fast.Changes(); !open || c.ID != string(rune('a'+i%26)) {
			t.Fatalf("the subscriber that keeps up got change %d as %+v, open %v", i+1, c, open)
		}
	}
	n := 0
	for range slow.Changes() {
		n++
	}
	if n != subscriberBuffer {
		t.Errorf("the slow subscriber got %d before it was dropped, want its buffer of %d", n, subscriberBuffer)
	}
	if hub.Subscribers(Payment) != 1 || !hub.Listening(Refund) {
		t.Errorf("%d payment subscribers left, refunds listened to: %v", hub.Subscribers(Payment), hub.Listening(Refund))
	}
	hub.Unsubscribe(fast)
	hub.Unsubscribe(fast) // twice is harmless
	hub.Unsubscribe(slow) // already dropped
	if _, open := <-fast.Changes(); open {
		t.Error("an unsubscribed stream is still open")
	}
	select {
	case c := <-other.Changes():
		t.Errorf("a refund subscriber got %+v", c)
	default:
	}
	filtered := hub.Subscribe(Payment, "", func(c Change) bool { return c.ID == "pay_2" })
	hub.Publish(Change{Kind: Payment, ID: "pay_1"})
	hub.Publish(Change{Kind: Payment, ID: "pay_2"})
	if c := <-filtered.Changes(); c.ID != "pay_2" {
		t.Errorf("a subscriber of pay_2 got %+v", c)
	}
}

// TestFeedPublishesEachChangeOnce: the feed publishes each payment and refund an event tells
// of, once, in the order written, with the object as it now is; an event committed late, timed
// before the last round, is still published; alerts raised and acknowledged are published too;
// what was written before the feed began is not, and what was written after, before its first
// round, is.
func TestFeedPublishesEachChangeOnce(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		clk := &clock.Adjustable{}
		hub := NewHub()
		feed := NewFeed(Feed{Client: db.Ent, Hub: hub, Now: clk.Now})
		payments, refunds, alerts := hub.Subscribe(Payment, tenant.DefaultMerchant, nil), hub.Subscribe(Refund, tenant.DefaultMerchant, nil), hub.Subscribe(Alert, "", nil)
		told := newPayment(t, db, "pay_before")
		record(t, db, event.PaymentSucceeded, told, clk.Now().Add(-time.Second))
		early := newPayment(t, db, "pay_early") // after the feed began, before its first round
		record(t, db, event.PaymentSucceeded, early, clk.Now().Add(time.Millisecond))
		if err := feed.Round(ctx); err != nil { // what was there before the feed began is not told again
			t.Fatal(err)
		}
		if c := take(t, payments); c.ID != early {
			t.Errorf("the first round published %+v, want %s", c, early)
		}

		p1 := newPayment(t, db, "pay_feed1")
		p2 := newPayment(t, db, "pay_feed2")
		r := db.Ent.Refund.Create().SetID("re_feed1").SetPaymentID(p1).SetAmount(100).SetCurrency("USD").SetStatus(state.RefundSucceeded).SaveX(ctx)
		record(t, db, event.PaymentSucceeded, p1, clk.Now())
		late := clk.Now() // timed now, committed after the next round
		record(t, db, event.PaymentSucceeded, p2, clk.Now().Add(time.Millisecond))
		record(t, db, event.RefundSucceeded, r.ID, clk.Now().Add(2*time.Millisecond))
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		record(t, db, event.PaymentRefunded, p1, late)
		clk.Advance(time.Second)
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		if err := feed.Round(ctx); err != nil { // nothing new
			t.Fatal(err)
		}
		for i, want := range []string{p1, p2, p1} {
			select {
			case c := <-payments.Changes():
				if c.ID != want || c.Object == nil {
					t.Errorf("payment change %d = %+v, want %s", i+1, c, want)
				}
			default:
				t.Fatalf("payment change %d missing", i+1)
			}
		}
		if c := take(t, refunds); c.ID != r.ID || c.PaymentID != p1 {
			t.Errorf("refund change = %+v", c)
		}

		a := db.Ent.Alert.Create().SetRule("test").SetSubject("x").SetSeverity(state.AlertInfo).SetMessage("m").SetOpenedAt(clk.Now()).SaveX(ctx)
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		db.Ent.AlertChange.Create().SetAlertID(a.ID).SetAction(state.AlertWasAcknowledged).SetBy("usr_1").SetAt(clk.Now()).ExecX(ctx)
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if c := take(t, alerts); c.ID != a.ID {
				t.Errorf("alert change %d = %+v", i+1, c)
			}
		}
		// A round that fails loses nothing: the next one publishes what it could not.
		p3 := newPayment(t, db, "pay_feed3")
		record(t, db, event.PaymentFailed, p3, clk.Now())
		failing, fail := context.WithCancel(ctx)
		fail()
		if err := feed.Round(failing); err == nil {
			t.Fatal("a round without its database succeeded")
		}
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		if c := take(t, payments); c.ID != p3 {
			t.Errorf("after a failed round: %+v, want %s", c, p3)
		}
		for name, s := range map[string]*Subscription{"payment": payments, "refund": refunds, "alert": alerts} {
			select {
			case c := <-s.Changes():
				t.Errorf("a %s change published twice or more: %+v", name, c)
			default:
			}
		}
	})
}

// take is the change s has waiting; the feed publishes within its round, so there is one.
func take(t *testing.T, s *Subscription) Change {
	t.Helper()
	select {
	case c := <-s.Changes():
		return c
	default:
		t.Fatal("no change was published")
		return Change{}
	}
}

func newPayment(t *testing.T, db *database.DB, id string) string {
	t.Helper()
	return db.Ent.Payment.Create().SetID(id).SetAmount(1000).SetCurrency("USD").SetStatus(state.PaymentSucceeded).
		SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
		SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("stripe").SaveX(databasetest.AsMerchant()).ID
}

func record(t *testing.T, db *database.DB, eventType, objectID string, at time.Time) {
	t.Helper()
	ctx := databasetest.AsMerchant()
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := (*event.Recorder)(nil).Record(ctx, tx, tenant.DefaultMerchant, eventType, objectID, map[string]string{"id": objectID}, at); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestHubTellsEachMerchantItsOwn: a subscriber sees the changes of its merchant alone, and the
// platform's (providers, alerts) only when it subscribed to the platform's.
func TestHubTellsEachMerchantItsOwn(t *testing.T) {
	hub := NewHub()
	a, b := hub.Subscribe(Payment, "mer_a", nil), hub.Subscribe(Payment, "mer_b", nil)
	platform, merchants := hub.Subscribe(Alert, "", nil), hub.Subscribe(Alert, "mer_a", nil)
	if hub.Wants(Change{Kind: Payment, ID: "pay_1", Merchant: "mer_c"}) {
		t.Error("a change of a merchant no one here subscribes for is wanted")
	}
	hub.Publish(Change{Kind: Payment, ID: "pay_1", Merchant: "mer_a"})
	hub.Publish(Change{Kind: Payment, ID: "pay_2", Merchant: "mer_c"})
	hub.Publish(Change{Kind: Alert, ID: "alr_1"})
	if got := drain(a); !slices.Equal(got, []string{"pay_1"}) {
		t.Errorf("merchant a saw %v", got)
	}
	for name, s := range map[string]*Subscription{"merchant b": b, "a merchant's alert subscription": merchants} {
		if got := drain(s); len(got) != 0 {
			t.Errorf("%s saw %v", name, got)
		}
	}
	if got := drain(platform); !slices.Equal(got, []string{"alr_1"}) {
		t.Errorf("the platform saw %v", got)
	}
}

// drain returns the ids of the changes waiting for s.
func drain(s *Subscription) []string {
	var ids []string
	for {
		select {
		case c := <-s.Changes():
			ids = append(ids, c.ID)
		default:
			return ids
		}
	}
}
