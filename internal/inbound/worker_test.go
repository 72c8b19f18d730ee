package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/webhookattempt"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/logtest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// readAny reads every event as a charge that succeeded.
func readAny(string, []byte) (provider.Notification, error) {
	return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_x"}, nil
}

func newWorker(db *database.DB, c *clock, apply inbound.Applier, policy settings.WebhookRetry) *inbound.Worker {
	return inbound.NewWorker(inbound.Worker{
		Client:  db.Ent,
		Readers: map[string]inbound.Reader{"stripe": readAny, "adyen": readAny, "checkout": readAny},
		Apply:   apply,
		Retry:   func() settings.WebhookRetry { return policy },
		Now:     c.Now,
		Jitter:  func() float64 { return 0.5 }, // no spread: the waits are exact
		Logger:  quietLog,
	})
}

// storeEvents stores n received events, due now, as the inbox does.
func storeEvents(t *testing.T, db *database.DB, c *clock, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		event, err := db.Ent.WebhookEvent.Create().SetProvider("stripe").SetEventID(fmt.Sprintf("evt_%d", i)).
			SetType("payment_intent.succeeded").SetStatus(state.WebhookReceived).SetPayload([]byte(`{}`)).
			SetNextAttemptAt(c.Now()).SetReceivedAt(c.Now()).Save(databasetest.AsMerchant())
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = event.ID
	}
	return ids
}

var defaultPolicy = settings.WebhookRetry{BaseS: 30, Factor: 2, MaxAttempts: 8}

// TestFailingEventRetriesOnScheduleThenDies: each failure waits base × factor^(n-1) before the
// next attempt, nothing is tried before its time, and the last allowed failure makes it dead,
// with every attempt and its error kept; a retry by hand then brings it back.
func TestFailingEventRetriesOnScheduleThenDies(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		calls := 0
		w := newWorker(db, c, func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
			calls++
			return payment.Applied{}, fmt.Errorf("database busy %d", calls)
		}, settings.WebhookRetry{BaseS: 30, Factor: 2, MaxAttempts: 4})
		id := storeEvents(t, db, c, 1)[0]

		for attempt, wait := range []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second} {
			if _, err := w.ProcessDue(ctx); err != nil {
				t.Fatal(err)
			}
			event := db.Ent.WebhookEvent.GetX(ctx, id)
			if event.Status != state.WebhookFailed || event.Attempts != attempt+1 || event.NextAttemptAt == nil ||
				!event.NextAttemptAt.Equal(c.Now().Add(wait)) || event.LastError == nil || *event.LastError != fmt.Sprintf("database busy %d", attempt+1) {
				t.Fatalf("after attempt %d: %+v, want failed, next in %s", attempt+1, event, wait)
			}
			c.Advance(wait - time.Second)
			if w.ProcessDue(ctx); calls != attempt+1 {
				t.Fatalf("tried again %s early", time.Second)
			}
			c.Advance(time.Second)
		}
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		event := db.Ent.WebhookEvent.GetX(ctx, id)
		if event.Status != state.WebhookDead || event.Attempts != 4 || event.NextAttemptAt != nil {
			t.Fatalf("after the last attempt: %+v, want dead", event)
		}
		c.Advance(365 * 24 * time.Hour)
		if w.ProcessDue(ctx); calls != 4 {
			t.Fatalf("a dead event was tried again: %d calls", calls)
		}
		attempts := db.Ent.WebhookAttempt.Query().Where(webhookattempt.EventID(id)).Order(ent.Asc(webhookattempt.FieldAt)).AllX(ctx)
		if len(attempts) != 4 || attempts[3].Status != state.WebhookDead || attempts[0].Status != state.WebhookFailed ||
			attempts[0].Error == nil || *attempts[0].Error != "database busy 1" {
			t.Fatalf("attempts: %+v", attempts)
		}

		// A person retries it once the cause is gone: it is processed, its history kept.
		w.Apply = func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
			return payment.Applied{PaymentID: "pay_x"}, nil
		}
		if _, err := (&inbound.Logs{Client: db.Ent, Now: c.Now}).Retry(asRole("operator"), id); err != nil {
			t.Fatal(err)
		}
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		event = db.Ent.WebhookEvent.GetX(ctx, id)
		if event.Status != state.WebhookProcessed || event.Attempts != 1 || db.Ent.WebhookAttempt.Query().Where(webhookattempt.EventID(id)).CountX(ctx) != 5 {
			t.Fatalf("after the retry: %+v, want processed with its five attempts kept", event)
		}
	})
}

// TestRetryWaitIsSpreadAndCapped: the jitter spreads a wait by ±20%, and no wait exceeds a day
// whatever the policy's factor makes of it.
func TestRetryWaitIsSpreadAndCapped(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		for _, tc := range []struct {
			jitter float64
			policy settings.WebhookRetry
			want   time.Duration
		}{
			{0, defaultPolicy, 24 * time.Second},
			{0.999999, defaultPolicy, 36 * time.Second},
			{0.5, settings.WebhookRetry{BaseS: 86400, Factor: 10, MaxAttempts: 50}, 24 * time.Hour},
		} {
			c := newClock()
			w := newWorker(db, c, func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
				return payment.Applied{}, errors.New("no")
			}, tc.policy)
			w.Jitter = func() float64 { return tc.jitter }
			id := storeEvents(t, db, c, 1)[0]
			if _, err := w.ProcessDue(ctx); err != nil {
				t.Fatal(err)
			}
			next := *db.Ent.WebhookEvent.GetX(ctx, id).NextAttemptAt
			if got := next.Sub(c.Now()); got.Round(time.Second) != tc.want {
				t.Errorf("jitter %v, policy %+v: waits %s, want %s", tc.jitter, tc.policy, got, tc.want)
			}
			db.Ent.WebhookEvent.DeleteOneID(id).ExecX(ctx)
		}
	})
}

// TestProcessedEventsAndIgnoredOnes: an applied event is processed with its payment; one the
// applier ignores keeps the reason; an event the reader cannot read is ignored, not retried; each
// has one attempt.
func TestProcessedEventsAndIgnoredOnes(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		w := newWorker(db, c, func(_ context.Context, _ *ent.Tx, _ string, n provider.Notification) (payment.Applied, error) {
			if n.PaymentID == "pay_unknown" {
				return payment.Applied{Ignored: "no payment of Paygate's is pay_unknown"}, nil
			}
			return payment.Applied{PaymentID: n.PaymentID}, nil
		}, defaultPolicy)
		w.Readers["stripe"] = func(eventType string, payload []byte) (provider.Notification, error) {
			switch string(payload) {
			case `{"unknown":true}`:
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_unknown"}, nil
			case `{"bad":true}`:
				return provider.Notification{}, fmt.Errorf("%w: no id", provider.ErrUnreadable)
			}
			return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_1"}, nil
		}
		store := func(eventID, payload string) string {
			return db.Ent.WebhookEvent.Create().SetProvider("stripe").SetEventID(eventID).SetType("payment_intent.succeeded").
				SetStatus(state.WebhookReceived).SetPayload([]byte(payload)).SetNextAttemptAt(c.Now()).SetReceivedAt(c.Now()).SaveX(ctx).ID
		}
		applied, unknown, unreadable := store("evt_a", `{}`), store("evt_b", `{"unknown":true}`), store("evt_c", `{"bad":true}`)
		c.Advance(1500 * time.Millisecond)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id, paymentID, reason string
			status                state.WebhookStatus
		}{
			{applied, "pay_1", "", state.WebhookProcessed},
			{unknown, "", "no payment of Paygate's is pay_unknown", state.WebhookIgnored},
			{unreadable, "", "unreadable payment_intent.succeeded event: the event lacks what its type must carry: no id", state.WebhookIgnored},
		} {
			event := db.Ent.WebhookEvent.GetX(ctx, tc.id)
			if event.Status != tc.status || deref(event.PaymentID) != tc.paymentID || deref(event.IgnoredReason) != tc.reason ||
				event.Attempts != 1 || event.NextAttemptAt != nil || event.ProcessedAt == nil || !event.ProcessedAt.Equal(c.Now()) {
				t.Errorf("%s: %+v, want %s, payment %q, reason %q", tc.id, event, tc.status, tc.paymentID, tc.reason)
			}
			if n := db.Ent.WebhookAttempt.Query().Where(webhookattempt.EventID(tc.id), webhookattempt.StatusEQ(tc.status)).CountX(ctx); n != 1 {
				t.Errorf("%s: %d attempts, want 1", tc.id, n)
			}
		}
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if n := db.Ent.WebhookAttempt.Query().CountX(ctx); n != 3 {
			t.Errorf("%d attempts after a second pass, want 3: done events are not taken again", n)
		}
	})
}

// TestEventWaitsForItsPaymentsRequest: an applier that says the payment's own request may still
// be recording puts the event off until then, without counting an attempt or keeping anything
// the applier wrote.
func TestEventWaitsForItsPaymentsRequest(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		id := storeEvents(t, db, c, 1)[0]
		later := c.Now().Add(time.Minute)
		w := newWorker(db, c, func(ctx context.Context, tx *ent.Tx, _ string, _ provider.Notification) (payment.Applied, error) {
			// A write the worker must roll back.
			if err := tx.WebhookEvent.UpdateOneID(id).SetLastError("written while waiting").Exec(ctx); err != nil {
				return payment.Applied{}, err
			}
			return payment.Applied{PaymentID: "pay_1", NotBefore: later}, nil
		}, defaultPolicy)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		event := db.Ent.WebhookEvent.GetX(ctx, id)
		if event.Status != state.WebhookReceived || event.Attempts != 0 || !event.NextAttemptAt.Equal(later) || event.LastError != nil {
			t.Fatalf("%+v, want received, no attempt, due at %s, nothing written", event, later)
		}
	})
}

// TestServerDyingMidProcessingLeavesEventDue: a worker whose server dies while it applies an
// event (its transaction never commits) leaves the event due; another server's worker then
// processes it, once.
func TestServerDyingMidProcessingLeavesEventDue(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		c := newClock()
		id := storeEvents(t, pools[0], c, 1)[0]
		applying := make(chan struct{})
		dying, die := context.WithCancel(context.Background())
		first := newWorker(pools[0], c, func(ctx context.Context, tx *ent.Tx, _ string, _ provider.Notification) (payment.Applied, error) {
			if err := tx.WebhookEvent.UpdateOneID(id).SetPaymentID("pay_half_written").Exec(ctx); err != nil {
				return payment.Applied{}, err
			}
			close(applying)
			<-ctx.Done() // the server dies here
			return payment.Applied{}, ctx.Err()
		}, defaultPolicy)
		done := make(chan error, 1)
		go func() {
			_, err := first.ProcessDue(dying)
			done <- err
		}()
		<-applying
		die()
		<-done

		applied := 0
		second := newWorker(pools[1], c, func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
			applied++
			return payment.Applied{PaymentID: "pay_1"}, nil
		}, defaultPolicy)
		ctx := databasetest.AsMerchant()
		if _, err := second.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		second.ProcessDue(ctx)
		event := pools[1].Ent.WebhookEvent.GetX(ctx, id)
		if applied != 1 || event.Status != state.WebhookProcessed || deref(event.PaymentID) != "pay_1" || event.Attempts != 1 {
			t.Fatalf("applied %d times; event %+v, want processed once by the second server", applied, event)
		}
	})
}

// TestServersProcessEachEventOnce: workers on several servers (pools) over one database, all
// looking at the queue at once, apply every event exactly once.
func TestServersProcessEachEventOnce(t *testing.T) {
	databasetest.ForEachPools(t, 4, func(t *testing.T, pools []*database.DB) {
		c := newClock()
		ids := storeEvents(t, pools[0], c, 60)
		var calls atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, len(pools))
		for _, pool := range pools {
			w := newWorker(pool, c, func(ctx context.Context, tx *ent.Tx, _ string, _ provider.Notification) (payment.Applied, error) {
				calls.Add(1)
				return payment.Applied{}, nil
			}, defaultPolicy)
			w.Readers["stripe"] = func(eventType string, payload []byte) (provider.Notification, error) {
				return provider.Notification{Kind: provider.ChargeSucceeded}, nil
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					if _, err := w.ProcessDue(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		ctx := databasetest.AsMerchant()
		for _, id := range ids {
			attempts := pools[0].Ent.WebhookAttempt.Query().Where(webhookattempt.EventID(id)).CountX(ctx)
			if event := pools[0].Ent.WebhookEvent.GetX(ctx, id); event.Status != state.WebhookProcessed || event.Attempts != 1 || attempts != 1 {
				t.Errorf("%s: %+v with %d attempts, want processed once", id, event, attempts)
			}
		}
		if calls.Load() != int64(len(ids)) {
			t.Errorf("applied %d times for %d events", calls.Load(), len(ids))
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestClockStepBackDoesNotFailTheEvent: the wall clock set back during an attempt (its time is
// not monotonic) neither fails the attempt nor keeps the event from being processed.
func TestClockStepBackDoesNotFailTheEvent(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		applied := 0
		w := newWorker(db, c, func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
			applied++
			c.Advance(-2 * time.Second) // the wall clock is stepped back by NTP while the event is applied
			return payment.Applied{}, nil
		}, defaultPolicy)
		id := storeEvents(t, db, c, 1)[0]
		_, err := w.ProcessDue(ctx)
		if event := db.Ent.WebhookEvent.GetX(ctx, id); err != nil || event.Status != state.WebhookProcessed {
			t.Errorf("applied %d times; event %s after %d attempts, error %v", applied, event.Status, event.Attempts, err)
		}
	})
}

// TestDisagreementAboutMoneyIsLogged: an event ignored because the provider and the books
// disagree about money is logged at error level with what to check; other ignored events at info.
func TestDisagreementAboutMoneyIsLogged(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		var logs logtest.Buffer
		w := newWorker(db, c, func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
			return payment.Applied{PaymentID: "pay_x", Ignored: "payment pay_x is recorded failed but stripe reports it approved: refund it at stripe", NeedsAttention: true}, nil
		}, defaultPolicy)
		w.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		storeEvents(t, db, c, 1)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if logged := logs.String(); !strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, "refund it at stripe") {
			t.Errorf("a charge taken at the provider for a payment recorded failed is not logged: %q", logged)
		}
	})
}

// TestPreparedBeforeApplied: Prepare runs before the worker's transaction (it can write the event's
// own row at once, which the claim would hold), what it adds to a notification is what is
// applied, and a provider that cannot be asked, or a panic, fails the attempt, to be retried,
// with nothing applied.
func TestPreparedBeforeApplied(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		var applied []provider.Notification
		w := newWorker(db, c, func(_ context.Context, _ *ent.Tx, _ string, n provider.Notification) (payment.Applied, error) {
			applied = append(applied, n)
			return payment.Applied{PaymentID: n.PaymentID}, nil
		}, defaultPolicy)
		w.Prepare = func(context.Context, string, provider.Notification) (provider.Notification, error) {
			return provider.Notification{}, errors.New("stripe is down")
		}
		id := storeEvents(t, db, c, 1)[0]
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if event := db.Ent.WebhookEvent.GetX(ctx, id); event.Status != state.WebhookFailed || event.LastError == nil ||
			!strings.Contains(*event.LastError, "stripe is down") || len(applied) != 0 {
			t.Fatalf("a failed preparation: %+v, applied %v", event, applied)
		}
		w.Prepare = func(context.Context, string, provider.Notification) (provider.Notification, error) {
			panic("adapter bug")
		}
		c.Advance(time.Hour)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if event := db.Ent.WebhookEvent.GetX(ctx, id); event.Status != state.WebhookFailed || event.Attempts != 2 || len(applied) != 0 {
			t.Fatalf("a panic while preparing: %+v, applied %v", event, applied)
		}
		w.Prepare = func(ctx context.Context, _ string, n provider.Notification) (provider.Notification, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if err := db.Ent.WebhookEvent.UpdateOneID(id).SetLastError("being prepared").Exec(ctx); err != nil {
				return n, fmt.Errorf("the event's row is held while preparing: %w", err)
			}
			n.Reason = "prepared"
			return n, nil
		}
		c.Advance(time.Hour)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if event := db.Ent.WebhookEvent.GetX(ctx, id); event.Status != state.WebhookProcessed || len(applied) != 1 || applied[0].Reason != "prepared" {
			t.Errorf("after the provider is back: %+v, applied %+v", event, applied)
		}
	})
}
