package payment_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// commitCounter is an ent client over db whose driver counts the transactions committed.
type commitCounter struct {
	mu      sync.Mutex
	commits int
}

func (c *commitCounter) client(db *database.DB) *ent.Client {
	return ent.NewClient(ent.Driver(dialect.DebugWithContext(entsql.OpenDB(db.Dialect, db.SQL), func(_ context.Context, v ...any) {
		if strings.HasSuffix(fmt.Sprint(v...), ": committed") {
			c.mu.Lock()
			c.commits++
			c.mu.Unlock()
		}
	})))
}

func (c *commitCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.commits
	c.commits = 0
	return n
}

func key(k string) *string { return &k }

// TestKeyedCallsCommitTwice: the key is claimed with what the call makes and settled with its
// outcome, so a keyed payment or refund costs no more commits than an unkeyed one. On SQLite,
// where every transaction is ent's and counted here; on PostgreSQL a create's first transaction
// is a batch of pgx's, which TestCreateExchangesWithPostgreSQL counts.
func TestKeyedCallsCommitTwice(t *testing.T) {
	func(t *testing.T, db *database.DB) {
		var counter commitCounter
		client := counter.client(db)
		counted := *db
		counted.Ent = client
		now := func() time.Time { return time.Now().UTC() }
		svc := payment.NewService(&counted, idempotency.NewStore(client, fingerprintKey, now), only(providertest.Memory{}, now), fingerprintKey, 99999999, now)
		ctx := allowed()
		for _, k := range []*string{nil, key("commit-twice")} {
			var refundKey *string
			if k != nil {
				refundKey = key(*k + "-refund")
			}
			in := validInput()
			in.IdempotencyKey = k
			p, err := svc.Create(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.take(); n != 2 {
				t.Errorf("create with key %v committed %d times, want 2", k != nil, n)
			}
			if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("1.00")), IdempotencyKey: refundKey}); err != nil {
				t.Fatal(err)
			}
			if n := counter.take(); n != 2 {
				t.Errorf("refund with key %v committed %d times, want 2", k != nil, n)
			}
		}
		// A replay writes nothing.
		in := validInput()
		in.IdempotencyKey = key("commit-twice")
		if _, err := svc.Create(ctx, in); err != nil {
			t.Fatal(err)
		}
		if n := counter.take(); n != 0 {
			t.Errorf("a replay committed %d times", n)
		}
	}(t, databasetest.SQLite(t))
}

// TestKeyedCreateReplaysByMeaning: the fingerprint is of the input as the service reads it.
func TestKeyedCreateReplaysByMeaning(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		svc := newService(db, providertest.Memory{}, 99999999)
		in := validInput()
		in.IdempotencyKey = key("order-1")
		first, err := svc.Create(allowed(), in)
		if err != nil {
			t.Fatal(err)
		}
		in.Amount, in.Currency, in.CustomerName = "025.0", "USD", "Ann" // 25.00 usd for " Ann ", written otherwise
		in.Card = &card.Input{Number: "4242 4242-4242 4242", ExpMonth: in.Card.ExpMonth, ExpYear: in.Card.ExpYear, CVC: in.Card.CVC}
		ctx, replayed := idempotency.WatchReplays(allowed())
		again, err := svc.Create(ctx, in)
		if err != nil || again.ID != first.ID || !replayed() {
			t.Errorf("replay = %v, %v, replayed %v", again, err, replayed())
		}
		in.Amount = "25.01"
		if _, err := svc.Create(allowed(), in); !hasCode(err, apierror.IdempotencyKeyReused) {
			t.Errorf("other amount = %v", err)
		}
		// A refund is another operation: the same key names another call.
		if _, err := svc.Refund(allowed(), payment.RefundInput{PaymentID: first.ID, IdempotencyKey: key("order-1")}); !hasCode(err, apierror.IdempotencyKeyReused) {
			t.Errorf("the key of a payment on a refund = %v", err)
		}
		if n, _ := db.Ent.Payment.Query().Count(databasetest.AsMerchant()); n != 1 {
			t.Errorf("%d payments, want 1", n)
		}
	})
}

// TestKeyedCreateReplaysOnceTheInputNoLongerPasses: a retry replays even when its input has since
// become invalid (the card expired at the turn of the month); a key used with another input that
// is invalid is still a reused key.
func TestKeyedCreateReplaysOnceTheInputNoLongerPasses(t *testing.T) {
	db := databasetest.SQLite(t)
	clock := time.Date(2027, 5, 31, 23, 59, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	svc := payment.NewService(db, idempotency.NewStore(db.Ent, fingerprintKey, now), only(providertest.Memory{}, now), fingerprintKey, 99999999, now)
	in := validInput()
	in.Card.ExpMonth, in.Card.ExpYear = 5, 2027
	in.IdempotencyKey = key("month-end")
	first, err := svc.Create(allowed(), in)
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * time.Minute)
	in.IdempotencyKey = nil
	if _, err := svc.Create(allowed(), in); err == nil {
		t.Fatal("the card is still valid in June")
	}
	in.IdempotencyKey = key("month-end")
	if again, err := svc.Create(allowed(), in); err != nil || again.ID != first.ID {
		t.Errorf("retry after the card expired = %v, %v", again, err)
	}
	in.Amount = "-1"
	if _, err := svc.Create(allowed(), in); !hasCode(err, apierror.IdempotencyKeyReused) {
		t.Errorf("the key with another, invalid input = %v", err)
	}
}

// TestExpiredKeyIsClaimedAfresh: once its replay window has passed, a key makes a new payment or
// refund: the database refuses the old claim, a create's in the batch with its payment, a
// refund's in its ent transaction, and the key found expired is claimed afresh.
func TestExpiredKeyIsClaimedAfresh(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		c := &clock{now: time.Now().UTC()}
		svc := newClockedService(db, providertest.Memory{}, c)
		in := validInput()
		in.IdempotencyKey = key("a day later")
		first, err := svc.Create(allowed(), in)
		if err != nil {
			t.Fatal(err)
		}
		refund := payment.RefundInput{PaymentID: first.ID, Amount: decimal("1.00"), IdempotencyKey: key("refund a day later")}
		firstRefund, err := svc.Refund(allowed(), refund)
		if err != nil {
			t.Fatal(err)
		}
		if replay, err := svc.Create(allowed(), in); err != nil || replay.ID != first.ID {
			t.Fatalf("a retry within the window = %v, %v; want payment %s", replay, err, first.ID)
		}
		if replay, err := svc.Refund(allowed(), refund); err != nil || replay.ID != firstRefund.ID {
			t.Fatalf("a refund's retry within the window = %v, %v; want refund %s", replay, err, firstRefund.ID)
		}
		c.Advance(idempotency.TTL + time.Minute)
		second, err := svc.Create(allowed(), in)
		if err != nil || second.ID == first.ID {
			t.Fatalf("the key after its window = %v, %v; want a new payment", second, err)
		}
		if again, err := svc.Refund(allowed(), refund); err != nil || again.ID == firstRefund.ID {
			t.Fatalf("the refund's key after its window = %v, %v; want a new refund", again, err)
		}
	})
}

// countingProvider counts the charges and refunds it is asked for, then behaves as inner.
type countingProvider struct {
	provider.Provider
	charges, refunds atomic.Int32
}

func (c *countingProvider) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	c.charges.Add(1)
	return c.Provider.Charge(ctx, req)
}

func (c *countingProvider) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	c.refunds.Add(1)
	return c.Provider.Refund(ctx, req)
}

// panickingProvider panics on a charge, after the card may have been charged.
type panickingProvider struct{ providertest.Memory }

func (panickingProvider) Charge(context.Context, provider.ChargeRequest) (provider.ChargeResult, error) {
	panic("provider adapter bug")
}

// TestKeyedCallThatFailedAfterWritingReplaysItsError: once the payment is written the provider may
// be asked, so a call that ends in a panic replays the error to every retry, and one whose outcome
// is unknown answers the payment, processing, to it and to every retry; neither asks the provider
// again.
func TestKeyedCallThatFailedAfterWritingReplaysItsError(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		for name, inner := range map[string]provider.Provider{"unknown outcome": brokenProvider{}, "panic": panickingProvider{}} {
			counting := &countingProvider{Provider: inner}
			svc := newService(db, counting, 99999999)
			in := validInput()
			in.IdempotencyKey = key(name)
			var first *ent.Payment
			func() {
				defer func() { recover() }()
				var err error
				first, err = svc.Create(allowed(), in)
				if name == "unknown outcome" && (err != nil || first == nil || first.Status != state.PaymentProcessing) {
					t.Errorf("%s: the first call = %+v, %v; want the payment, processing", name, first, err)
				}
			}()
			for range 2 {
				ctx, replayed := idempotency.WatchReplays(allowed())
				p, err := svc.Create(ctx, in)
				if name == "panic" && (!hasCode(err, apierror.Internal) || !replayed()) {
					t.Errorf("%s: retry = %v, replayed %v", name, err, replayed())
				}
				if name == "unknown outcome" && (err != nil || p.ID != first.ID || p.Status != state.PaymentProcessing || !replayed()) {
					t.Errorf("%s: retry = %+v, %v, replayed %v", name, p, err, replayed())
				}
			}
			if n := counting.charges.Load(); n != 1 {
				t.Errorf("%s: the provider was asked %d times", name, n)
			}
		}
		processing, _ := db.Ent.Payment.Query().Count(databasetest.AsMerchant())
		if processing != 2 {
			t.Errorf("%d payments, want 2", processing)
		}
	})
}

// TestKeyedRefundReplaysWhenNothingIsLeft: the key is read before the payment, so the retry of a
// refund of everything replays it instead of answering that nothing is left to refund.
func TestKeyedRefundReplaysWhenNothingIsLeft(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		counting := &countingProvider{Provider: providertest.Memory{}}
		svc := newService(db, counting, 99999999)
		p, err := svc.Create(allowed(), validInput())
		if err != nil {
			t.Fatal(err)
		}
		in := payment.RefundInput{PaymentID: p.ID, IdempotencyKey: key("all-of-it")}
		first, err := svc.Refund(allowed(), in)
		if err != nil || first.Amount != 2500 {
			t.Fatalf("refund = %v, %v", first, err)
		}
		ctx, replayed := idempotency.WatchReplays(allowed())
		again, err := svc.Refund(ctx, in)
		if err != nil || again.ID != first.ID || again.Status != state.RefundSucceeded || !replayed() {
			t.Errorf("retry = %v, %v, replayed %v", again, err, replayed())
		}
		if _, err := svc.Refund(allowed(), payment.RefundInput{PaymentID: p.ID, IdempotencyKey: key("another")}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("a new refund = %v", err)
		}
		if n := counting.refunds.Load(); n != 1 {
			t.Errorf("the provider was asked for %d refunds", n)
		}
		// The refused refund held no key: the same key refunds once there is something to refund.
		if n, _ := db.Ent.IdempotencyKey.Query().Count(databasetest.AsMerchant()); n != 1 {
			t.Errorf("%d keys held, want 1", n)
		}
	})
}
