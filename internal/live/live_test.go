package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// TestSlowSubscriberIsEnded: a subscriber that reads nothing is ended once MaxBehind changes wait
// for it, and says so; publishing never waits for it, and the others get every change, a burst
// of many at once included.
func TestSlowSubscriberIsEnded(t *testing.T) {
	clk := &clock.Adjustable{}
	hub := NewHub(clk.Now)
	slow := hub.Subscribe(Payment, "", nil)
	fast := hub.Subscribe(Payment, "", nil)
	other := hub.Subscribe(Refund, "", nil)
	id := func(i int) string { return fmt.Sprint("pay_", i) }
	for i := range MaxBehind * 2 {
		hub.Publish(Change{Kind: Payment, ID: id(i), At: clk.Now()}) // never waits for slow
		if i%(MaxBehind/2) == MaxBehind/2-1 {                        // a burst of half the bound at a time
			<-fast.Ready()
			got, err := fast.Take()
			if err != nil || len(got) != MaxBehind/2 || got[0].ID != id(i+1-MaxBehind/2) || got[len(got)-1].ID != id(i) {
				t.Fatalf("the subscriber that keeps up took %d changes and %v after change %d", len(got), err, i)
			}
		}
	}
	<-slow.Ready()
	if got, err := slow.Take(); len(got) != 0 || !errors.Is(err, ErrFellBehind) {
		t.Errorf("the slow subscriber took %d changes and %v, want it ended for falling behind", len(got), err)
	}
	if hub.Subscribers(Payment) != 1 || !hub.Listening(Refund) {
		t.Errorf("%d payment subscribers left, refunds listened to: %v", hub.Subscribers(Payment), hub.Listening(Refund))
	}
	hub.Unsubscribe(fast)
	hub.Unsubscribe(fast) // twice is harmless
	hub.Unsubscribe(slow) // already ended
	hub.Publish(Change{Kind: Payment, ID: "pay_after", At: clk.Now()})
	if got := drain(fast); len(got) != 0 {
		t.Errorf("an unsubscribed subscriber was sent %v", got)
	}
	if got := drain(other); len(got) != 0 {
		t.Errorf("a refund subscriber was sent %v", got)
	}
	filtered := hub.Subscribe(Payment, "", func(c Change) bool { return c.ID == "pay_2" })
	hub.Publish(Change{Kind: Payment, ID: "pay_1", At: clk.Now()})
	hub.Publish(Change{Kind: Payment, ID: "pay_2", At: clk.Now()})
	if got := drain(filtered); !slices.Equal(got, []string{"pay_2"}) {
		t.Errorf("a subscriber of pay_2 was sent %v", got)
	}
}

// TestSubscriberIsSentWhatChangesAfter: a subscriber is sent what changed after it subscribed,
// and LookBack before at most, never what changed earlier.
func TestSubscriberIsSentWhatChangesAfter(t *testing.T) {
	clk := &clock.Adjustable{}
	hub := NewHub(clk.Now)
	subscribed := clk.Now()
	s := hub.Subscribe(Payment, "", nil)
	for _, c := range []struct {
		id string
		at time.Time
	}{
		{"pay_hour", subscribed.Add(-time.Hour)},
		{"pay_lookback", subscribed.Add(-LookBack)},
		{"pay_within", subscribed.Add(-LookBack / 2)},
		{"pay_after", subscribed.Add(time.Millisecond)},
	} {
		hub.Publish(Change{Kind: Payment, ID: c.id, At: c.at})
	}
	if got := drain(s); !slices.Equal(got, []string{"pay_within", "pay_after"}) {
		t.Errorf("sent %v, want what changed within the look-back and after", got)
	}
	if hub.Wants(Change{Kind: Payment, ID: "pay_old", At: subscribed.Add(-2 * LookBack)}) {
		t.Error("a change from before the look-back is wanted")
	}
}

// TestFeedPublishesEachChangeOnce: the feed publishes each payment and refund an event tells
// of, once, in the order written, with the object as it now is; an event committed late, timed
// before the last round, is still published; alerts raised and acknowledged are published too;
// what changed before the subscribers subscribed is not.
func TestFeedPublishesEachChangeOnce(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		clk := &clock.Adjustable{}
		hub := NewHub(clk.Now)
		feed := NewFeed(Feed{Client: db.Ent, Hub: hub, Now: clk.Now})
		told := newPayment(t, db, "pay_before")
		record(t, db, event.PaymentSucceeded, told, clk.Now().Add(-2*LookBack))
		payments, refunds, alerts := hub.Subscribe(Payment, tenant.DefaultMerchant, nil), hub.Subscribe(Refund, tenant.DefaultMerchant, nil), hub.Subscribe(Alert, "", nil)
		early := newPayment(t, db, "pay_early") // after they subscribed, before the first round
		record(t, db, event.PaymentSucceeded, early, clk.Now().Add(time.Millisecond))
		if err := feed.Round(ctx); err != nil { // what changed before they subscribed is not told
			t.Fatal(err)
		}
		if got := drain(payments); !slices.Equal(got, []string{early}) {
			t.Errorf("the first round published %v, want %s", got, early)
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
		changes, _ := payments.Take()
		if len(changes) != 3 {
			t.Fatalf("%d payment changes, want 3", len(changes))
		}
		for i, want := range []string{p1, p2, p1} {
			if c := changes[i]; c.ID != want || c.Object == nil {
				t.Errorf("payment change %d = %+v, want %s", i+1, c, want)
			}
		}
		if changes, _ := refunds.Take(); len(changes) != 1 || changes[0].ID != r.ID || changes[0].PaymentID != p1 {
			t.Errorf("refund changes = %v", changes)
		}

		a := db.Ent.Alert.Create().SetRule("test").SetSubject("x").SetSeverity(state.AlertInfo).SetMessage("m").SetOpenedAt(clk.Now()).SaveX(ctx)
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		db.Ent.AlertChange.Create().SetAlertID(a.ID).SetAction(state.AlertWasAcknowledged).SetBy("usr_1").SetAt(clk.Now().Add(time.Millisecond)).ExecX(ctx)
		if err := feed.Round(ctx); err != nil {
			t.Fatal(err)
		}
		if got := drain(alerts); !slices.Equal(got, []string{a.ID, a.ID}) {
			t.Errorf("alert changes %v, want %s raised and acknowledged", got, a.ID)
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
		if got := drain(payments); !slices.Equal(got, []string{p3}) {
			t.Errorf("after a failed round: %v, want %s", got, p3)
		}
		for name, s := range map[string]*Subscription{"payment": payments, "refund": refunds, "alert": alerts} {
			if got := drain(s); len(got) != 0 {
				t.Errorf("a %s change published twice or more: %v", name, got)
			}
		}
	})
}

// TestFeedAfterAQuietSpell: the changes made while no one subscribed are not sent to the
// subscriber who comes after, however many and however long ago (the feed's position moves on
// meanwhile), and the next change is; the subscriber is not ended for changes it was never sent.
func TestFeedAfterAQuietSpell(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		clk := &clock.Adjustable{}
		hub := NewHub(clk.Now)
		feed := NewFeed(Feed{Client: db.Ent, Hub: hub, Now: clk.Now})
		for _, quiet := range []time.Duration{2 * LookBack, time.Hour} {
			// More than MaxBehind changes, more than one page: one subscriber sent them all would
			// be ended.
			// Made in bulks of 200: one statement of them all would pass SQLite's bound on a
			// statement's parameters.
			var made []*ent.Payment
			for first := 0; first < MaxBehind+feedBatch; first += 200 {
				made = append(made, db.Ent.Payment.MapCreateBulk(make([]int, min(200, MaxBehind+feedBatch-first)), func(c *ent.PaymentCreate, i int) {
					c.SetID(fmt.Sprint("pay_quiet_", quiet, "_", first+i)).SetAmount(1000).SetCurrency("USD").SetStatus(state.PaymentSucceeded).
						SetPaymentMethod("credit_card").SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
						SetCardExpMonth(12).SetCardExpYear(2040).SetCardFingerprint("f").SetProvider("stripe")
				}).SaveX(ctx)...)
			}
			tx, err := db.Ent.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range made {
				if err := (*event.Recorder)(nil).Record(ctx, tx, tenant.DefaultMerchant, event.PaymentSucceeded, p.ID, map[string]string{"id": p.ID}, clk.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := feed.Round(ctx); err != nil { // no one listens
				t.Fatal(err)
			}
			clk.Advance(quiet)
			payments := hub.Subscribe(Payment, tenant.DefaultMerchant, nil)
			if err := feed.Round(ctx); err != nil {
				t.Fatal(err)
			}
			if got, err := payments.Take(); len(got) != 0 || err != nil {
				t.Fatalf("after %s without subscribers, the first round sent %d changes and %v", quiet, len(got), err)
			}
			next := newPayment(t, db, fmt.Sprint("pay_next_", quiet))
			record(t, db, event.PaymentSucceeded, next, clk.Now())
			if err := feed.Round(ctx); err != nil {
				t.Fatal(err)
			}
			if got, err := payments.Take(); len(got) != 1 || got[0].ID != next || err != nil {
				t.Errorf("after %s without subscribers, the next change came as %d changes and %v", quiet, len(got), err)
			}
			hub.Unsubscribe(payments)
		}
	})
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
	clk := &clock.Adjustable{}
	hub := NewHub(clk.Now)
	a, b := hub.Subscribe(Payment, "mer_a", nil), hub.Subscribe(Payment, "mer_b", nil)
	platform, merchants := hub.Subscribe(Alert, "", nil), hub.Subscribe(Alert, "mer_a", nil)
	if hub.Wants(Change{Kind: Payment, ID: "pay_1", Merchant: "mer_c", At: clk.Now()}) {
		t.Error("a change of a merchant no one here subscribes for is wanted")
	}
	hub.Publish(Change{Kind: Payment, ID: "pay_1", Merchant: "mer_a", At: clk.Now()})
	hub.Publish(Change{Kind: Payment, ID: "pay_2", Merchant: "mer_c", At: clk.Now()})
	hub.Publish(Change{Kind: Alert, ID: "alr_1", At: clk.Now()})
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
	changes, _ := s.Take()
	var ids []string
	for _, c := range changes {
		ids = append(ids, c.ID)
	}
	return ids
}
