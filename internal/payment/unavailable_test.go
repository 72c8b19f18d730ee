package payment_test

import (
	"context"
	"testing"
	"time"

	entpayment "github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// keyedInput is validInput for the customer at email, sent with the idempotency key.
func keyedInput(email, key string) payment.CreateInput {
	in := validInput()
	in.CustomerEmail = email
	in.IdempotencyKey = &key
	return in
}

// paymentsOf counts the payments of the customer email.
func paymentsOf(t *testing.T, db *database.DB, email string) int {
	t.Helper()
	n, err := db.Ent.Payment.Query().Where(entpayment.CustomerEmail(email)).Count(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A create whose rows reached PostgreSQL and were committed, but whose commit's answer was lost
// with its connection (a primary dying as it answers), learns that they were, by sending them
// again for the unique indexes to refuse, and goes on: the charge is made once, the call answers
// it, and its key replays it.
func TestCreateGoesOnWhenItsCommitsAnswerIsLost(t *testing.T) {
	db, proxy := databasetest.PostgresThroughProxy(t)
	svc := newService(db, providertest.Memory{}, 99999999)
	in := keyedInput("lost-answer@example.com", "key-of-a-lost-answer")
	proxy.LoseAnswerTo(*in.IdempotencyKey)
	p, err := svc.Create(allowed(), in)
	if err != nil || p.Status != state.PaymentSucceeded {
		t.Fatalf("Create = %+v, %v; want the payment, succeeded", p, err)
	}
	if proxy.Lost() != 1 {
		t.Fatalf("the commit's answer was not lost (%d lost)", proxy.Lost())
	}
	again, err := svc.Create(allowed(), in)
	if err != nil || again.ID != p.ID {
		t.Errorf("the key sent again = %+v, %v; want payment %s", again, err, p.ID)
	}
	if n := paymentsOf(t, db, in.CustomerEmail); n != 1 {
		t.Errorf("%d payments; want 1", n)
	}
}

// A create whose rows were lost on their way, their connection broken, sends them again and goes
// on: one payment, charged once.
func TestCreateGoesOnWhenItsRowsAreLost(t *testing.T) {
	db, proxy := databasetest.PostgresThroughProxy(t)
	svc := newService(db, providertest.Memory{}, 99999999)
	in := keyedInput("lost-request@example.com", "key-of-a-lost-request")
	proxy.LoseRequest(*in.IdempotencyKey)
	p, err := svc.Create(allowed(), in)
	if err != nil || p.Status != state.PaymentSucceeded {
		t.Fatalf("Create = %+v, %v; want the payment, succeeded", p, err)
	}
	if proxy.Lost() != 1 {
		t.Fatalf("the rows were not lost (%d lost)", proxy.Lost())
	}
	if n := paymentsOf(t, db, in.CustomerEmail); n != 1 {
		t.Errorf("%d payments; want 1", n)
	}
}

// A create while no database can be reached fails as the database's absence, writing nothing,
// and its key, sent again once the database is back, makes the payment.
func TestCreateRefusedWhileTheDatabaseIsAway(t *testing.T) {
	db, proxy := databasetest.PostgresThroughProxy(t)
	svc := newService(db, providertest.Memory{}, 99999999)
	in := keyedInput("database-away@example.com", "key-of-a-create-without-a-database")
	proxy.Down()
	p, err := svc.Create(allowed(), in)
	if err == nil || !database.Unavailable(err) {
		t.Fatalf("Create = %+v, %v; want the database's absence", p, err)
	}
	if _, isAPIError := err.(*apierror.Error); isAPIError {
		t.Errorf("Create = %v; want the database's own error, for the edge to answer 503", err)
	}
	proxy.Up()
	if n := paymentsOf(t, db, in.CustomerEmail); n != 0 {
		t.Errorf("%d payments after the refusal; want 0", n)
	}
	again, err := svc.Create(allowed(), in)
	if err != nil || again.Status != state.PaymentSucceeded {
		t.Fatalf("the key sent again = %+v, %v; want the payment, succeeded", again, err)
	}
	if n := paymentsOf(t, db, in.CustomerEmail); n != 1 {
		t.Errorf("%d payments; want 1", n)
	}
}

// outageDuringCharge charges as Memory does, and takes the database away while it does: it comes
// back after back, or not at all when back is 0.
type outageDuringCharge struct {
	providertest.Memory
	proxy *databasetest.Proxy
	back  time.Duration
}

func (o outageDuringCharge) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	o.proxy.Down()
	if o.back > 0 {
		time.AfterFunc(o.back, o.proxy.Up)
	}
	return o.Memory.Charge(ctx, req)
}

// A charge answered while the database is away is recorded once it is back, within the service's
// patience: the call answers the outcome, as if nothing had happened.
func TestChargeRecordedWhenTheDatabaseComesBack(t *testing.T) {
	db, proxy := databasetest.PostgresThroughProxy(t)
	// Back after the usual tries to record (about 4 s), within the patience.
	svc := newService(db, outageDuringCharge{proxy: proxy, back: 7 * time.Second}, 99999999)
	svc.DatabasePatience = time.Minute
	in := keyedInput("ann@example.com", "key-of-a-charge-over-an-outage")
	p, err := svc.Create(allowed(), in)
	if err != nil || p.Status != state.PaymentSucceeded {
		t.Fatalf("Create = %+v, %v; want the payment, succeeded", p, err)
	}
	recorded, err := db.Ent.Payment.Get(databasetest.AsMerchant(), p.ID)
	if err != nil || recorded.Status != state.PaymentSucceeded {
		t.Errorf("recorded %+v, %v; want it succeeded", recorded, err)
	}
}

// A charge answered while the database stays away past the service's patience is answered in
// doubt: the payment, processing, as recorded before the charge, never an error that hides it.
// Its key, held, tells retries to wait, never to pay again.
func TestChargeAnsweredInDoubtWhenTheDatabaseStaysAway(t *testing.T) {
	db, proxy := databasetest.PostgresThroughProxy(t)
	svc := newService(db, outageDuringCharge{proxy: proxy}, 99999999)
	svc.DatabasePatience = time.Second
	in := keyedInput("ann@example.com", "key-of-a-charge-past-patience")
	p, err := svc.Create(allowed(), in)
	if err != nil || p.Status != state.PaymentProcessing || p.Provider != "memory" {
		t.Fatalf("Create = %+v, %v; want the payment, processing at memory", p, err)
	}
	proxy.Up()
	recorded, err := db.Ent.Payment.Get(databasetest.AsMerchant(), p.ID)
	if err != nil || recorded.Status != state.PaymentProcessing {
		t.Errorf("recorded %+v, %v; want it processing, for reconciliation", recorded, err)
	}
	if _, err := svc.Create(allowed(), in); !hasCode(err, apierror.IdempotencyKeyInUse) {
		t.Errorf("the key sent again = %v; want idempotency_key_in_use", err)
	}
}
