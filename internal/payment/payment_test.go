package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/ent"
	entpayment "github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/card"
	systemclock "github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/logtest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
)

var fingerprintKey = []byte("fingerprint-key-fingerprint-key-")

func validInput() payment.CreateInput {
	return payment.CreateInput{
		Amount:        "25.00",
		Currency:      "usd",
		PaymentMethod: card.MethodCreditCard,
		CustomerEmail: "ann@example.com",
		CustomerName:  " Ann ",
		// An expiry ahead of the clock the services run on, in any year the tests run.
		Card: &card.Input{Number: "4242424242424242", ExpMonth: 12, ExpYear: time.Now().Year() + 4, CVC: "123"},
	}
}

// newService is the payment service over db, charging through p, with amounts bounded by
// maxAmountHundredths.
func newService(db *database.DB, p provider.Provider, maxAmountHundredths int64) *payment.Service {
	keys := idempotency.NewStore(db.Ent, fingerprintKey, time.Now)
	svc := payment.NewService(db, keys, only(p, time.Now), fingerprintKey, maxAmountHundredths, time.Now)
	svc.Logger = slog.New(slog.DiscardHandler)
	return svc
}

// only is a router that sends every payment to p.
func only(p provider.Provider, now func() time.Time) *routing.Router {
	document := settings.Default([]string{p.Name()}, nil)
	document.Routing = settings.Routing{Fallback: []string{p.Name()}}
	return routing.NewRouter([]provider.Provider{p}, func() settings.Document { return document }, now)
}

// allowed is the context of a request whose principal may ask every payment operation.
func allowed() context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_test", UserID: "usr_test", Role: "admin", Scopes: auth.ScopesOf("admin"), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant})
}

func hasCode(err error, code apierror.Code) bool {
	got, _ := codeAndParam(err)
	return got == code
}

func codeAndParam(err error) (apierror.Code, string) {
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok {
		return apiErr.Code, apiErr.Param
	}
	return "", ""
}

// brokenProvider fails in a way that is not a provider outage: a bug, not a decline.
type brokenProvider struct{ providertest.Memory }

func (brokenProvider) Charge(context.Context, provider.ChargeRequest) (provider.ChargeResult, error) {
	return provider.ChargeResult{}, errors.New("unexpected answer")
}

// refundOutage charges like the sandbox and cannot refund.
type refundOutage struct{ providertest.Memory }

func (refundOutage) Refund(context.Context, provider.RefundRequest) (provider.RefundResult, error) {
	return provider.RefundResult{}, provider.ErrUnavailable
}

func TestCreate(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc := newService(db, providertest.Memory{}, 99999999)
		p, err := svc.Create(ctx, validInput())
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != state.PaymentSucceeded || p.Amount != 2500 || p.Currency != "USD" || p.CustomerName != "Ann" ||
			p.CardLast4 != "4242" || p.ProviderPaymentID == nil || p.FailureCode != nil {
			t.Errorf("payment = %+v", p)
		}
		if got, err := svc.Get(ctx, p.ID); err != nil || got.ID != p.ID {
			t.Errorf("Get = %v, %v", got, err)
		}
		if _, err := svc.Get(ctx, "pay_missing"); !hasCode(err, apierror.NotFound) {
			t.Errorf("Get(missing) = %v", err)
		}

		// A provider failure that is not an outage leaves the outcome unknown: the payment is
		// answered processing, for the provider's webhook or reconciliation to settle, rather than
		// guessed failed or succeeded.
		broken := newService(db, brokenProvider{}, 99999999)
		if inDoubt, err := broken.Create(ctx, validInput()); err != nil || inDoubt.Status != state.PaymentProcessing {
			t.Errorf("a broken provider's answer = %+v, %v; want the payment, processing", inDoubt, err)
		}
		processing, err := db.Ent.Payment.Query().Where(entpayment.StatusEQ(state.PaymentProcessing)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(processing) != 1 || processing[0].Provider != "memory" || processing[0].Routing == nil {
			t.Errorf("payments left processing: %+v; want 1, with the provider asked and how it was routed", processing)
		}
	})
}

// declinedUnnamed declines every charge without an id of its own, in text a column cannot hold.
type declinedUnnamed struct{ providertest.Memory }

func (declinedUnnamed) Charge(context.Context, provider.ChargeRequest) (provider.ChargeResult, error) {
	return provider.ChargeResult{DeclineCode: "card_declined", RawDeclineCode: "do_not_honor\x00", DeclineMessage: "Declined\x00"}, nil
}

// TestDeclineIsRecordedAsTheWebhookRecordsIt: a decline answered to the request is recorded as the
// same decline reported by an event would be: no provider id when the provider gave none, and the
// provider's text made to fit its column (PostgreSQL refuses a NUL).
func TestDeclineIsRecordedAsTheWebhookRecordsIt(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		p, err := newService(db, declinedUnnamed{}, 99999999).Create(allowed(), validInput())
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != state.PaymentFailed || p.ProviderPaymentID != nil || *p.ProviderDeclineCode != "do_not_honor" ||
			*p.FailureCode != "card_declined" || *p.FailureMessage != "Declined" {
			t.Errorf("payment = %+v", p)
		}
	})
}

func TestCreateRefusesBadInput(t *testing.T) {
	db := databasetest.SQLite(t)
	svc := newService(db, providertest.Memory{}, 100000) // 1000.00
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name   string
		change func(*payment.CreateInput)
		code   apierror.Code
		param  string
	}{
		{"over configured maximum", func(in *payment.CreateInput) { in.Amount = "1000.01" }, apierror.InvalidAmount, "amount"},
		{"float syntax", func(in *payment.CreateInput) { in.Amount = "1e2" }, apierror.InvalidAmount, "amount"},
		{"name too long", func(in *payment.CreateInput) { in.CustomerName = long(201) }, apierror.InvalidRequest, "customer.name"},
		{"description too long", func(in *payment.CreateInput) { d := long(1001); in.Description = &d }, apierror.InvalidRequest, "description"},
		{"too many metadata keys", func(in *payment.CreateInput) {
			in.Metadata = map[string]string{}
			for i := range 51 {
				in.Metadata[fmt.Sprintf("key%d", i)] = "v"
			}
		}, apierror.InvalidRequest, "metadata"},
		{"metadata key too long", func(in *payment.CreateInput) { in.Metadata = map[string]string{long(41): "v"} }, apierror.InvalidRequest, "metadata"},
		{"metadata value too long", func(in *payment.CreateInput) { in.Metadata = map[string]string{"k": long(501)} }, apierror.InvalidRequest, "metadata.k"},
		{"display-name email", func(in *payment.CreateInput) { in.CustomerEmail = "Ann <ann@example.com>" }, apierror.InvalidRequest, "customer.email"},
		{"no method", func(in *payment.CreateInput) { in.PaymentMethod = "" }, apierror.MissingField, "payment_method"},
	}
	for _, tt := range tests {
		in := validInput()
		tt.change(&in)
		_, err := svc.Create(allowed(), in)
		if code, param := codeAndParam(err); code != tt.code || param != tt.param {
			t.Errorf("%s: %v, want %s on %s", tt.name, err, tt.code, tt.param)
		}
	}
	if n, _ := db.Ent.Payment.Query().Count(databasetest.AsMerchant()); n != 0 {
		t.Errorf("refused input wrote %d payments", n)
	}
	in := validInput()
	in.Amount = money.Decimal("1000.00")
	if _, err := svc.Create(allowed(), in); err != nil {
		t.Errorf("the configured maximum itself was refused: %v", err)
	}
}

func TestRefundOutageRefundsNothing(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		outage := newService(db, refundOutage{}, 99999999)
		p, err := outage.Create(ctx, validInput())
		if err != nil {
			t.Fatal(err)
		}
		r, err := outage.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("10.00"))})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != state.RefundFailed || r.FailureCode == nil || *r.FailureCode != "provider_unavailable" {
			t.Errorf("refund during an outage = %+v", r)
		}
		after, _ := db.Ent.Payment.Get(ctx, p.ID)
		if after.AmountRefunded != 0 || after.Status != state.PaymentSucceeded {
			t.Errorf("payment after a failed refund: %d refunded, %s", after.AmountRefunded, after.Status)
		}
		// The failed refund holds nothing back: the whole amount can still be refunded.
		sandbox := newService(db, providertest.Memory{}, 99999999)
		full, err := sandbox.Refund(ctx, payment.RefundInput{PaymentID: p.ID})
		if err != nil || full.Amount != p.Amount || full.Status != state.RefundSucceeded {
			t.Errorf("full refund after the outage = %+v, %v", full, err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// refundLost refunds with an answer that cannot be read: the outcome is unknown.
type refundLost struct{ providertest.Memory }

func (refundLost) Refund(context.Context, provider.RefundRequest) (provider.RefundResult, error) {
	return provider.RefundResult{}, context.DeadlineExceeded
}

func TestRefundWithUnknownOutcomeHoldsItsAmount(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc := newService(db, refundLost{}, 99999999)
		p, err := svc.Create(ctx, validInput())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("10.00"))}); err == nil || hasCode(err, apierror.ProviderUnavailable) {
			t.Fatalf("a refund with an unknown outcome = %v, want a server error", err)
		}
		pending, _ := db.Ent.Payment.QueryRefunds(p).All(ctx)
		if len(pending) != 1 || pending[0].Status != state.RefundPending {
			t.Fatalf("refunds = %+v, want one pending", pending)
		}
		// The pending 10.00 may have gone back: only 15.00 of the 25.00 is left to refund.
		sandbox := newService(db, providertest.Memory{}, 99999999)
		if _, err := sandbox.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("15.01"))}); !hasCode(err, apierror.RefundExceedsPayment) {
			t.Errorf("refund over what is left = %v", err)
		}
		if r, err := sandbox.Refund(ctx, payment.RefundInput{PaymentID: p.ID}); err != nil || r.Amount != 1500 {
			t.Errorf("refund of the rest = %+v, %v", r, err)
		}
	})
}

// countingSandbox is the sandbox, counting the calls it answers.
type countingSandbox struct {
	providertest.Memory
	charges, refunds *atomic.Int32
}

func (c countingSandbox) Charge(ctx context.Context, r provider.ChargeRequest) (provider.ChargeResult, error) {
	c.charges.Add(1)
	return c.Memory.Charge(ctx, r)
}

func (c countingSandbox) Refund(ctx context.Context, r provider.RefundRequest) (provider.RefundResult, error) {
	c.refunds.Add(1)
	return c.Memory.Refund(ctx, r)
}

// TestProviderOutcomeSurvivesFailedWrites makes the database refuse the first two writes of a
// provider's answer, after the provider has acted: the answer is still recorded, once, and the
// provider is not asked again. PostgreSQL only: its sequences outlive the rolled-back attempts,
// which lets a trigger fail exactly the first two.
func TestProviderOutcomeSurvivesFailedWrites(t *testing.T) {
	db := databasetest.Postgres(t)
	ctx := allowed()
	for _, statement := range []string{
		`CREATE SEQUENCE charge_write_failures`,
		`CREATE SEQUENCE refund_write_failures`,
		`CREATE FUNCTION fail_twice() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval(TG_ARGV[0]::regclass) <= 2 THEN RAISE EXCEPTION 'injected write failure'; END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER fail_charge_outcome BEFORE INSERT ON payment_status_changes
			FOR EACH ROW WHEN (NEW.reason = 'approved') EXECUTE FUNCTION fail_twice('charge_write_failures')`,
		`CREATE TRIGGER fail_refund_outcome BEFORE UPDATE ON refunds
			FOR EACH ROW WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION fail_twice('refund_write_failures')`,
	} {
		if _, err := db.SQL.ExecContext(ctx, statement); err != nil {
			t.Fatal(err)
		}
	}
	sandbox := countingSandbox{charges: new(atomic.Int32), refunds: new(atomic.Int32)}
	svc := newService(db, sandbox, 99999999)

	p, err := svc.Create(ctx, validInput())
	if err != nil || p.Status != state.PaymentSucceeded {
		t.Fatalf("payment = %+v, %v; want succeeded after the failed writes", p, err)
	}
	history, _ := db.Ent.Payment.QueryStatusHistory(p).All(ctx)
	if len(history) != 3 || sandbox.charges.Load() != 1 {
		t.Errorf("%d history entries, %d charges; want 3 and 1", len(history), sandbox.charges.Load())
	}

	r, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("10.00"))})
	if err != nil || r.Status != state.RefundSucceeded {
		t.Fatalf("refund = %+v, %v; want succeeded after the failed writes", r, err)
	}
	after, _ := db.Ent.Payment.Get(ctx, p.ID)
	if after.AmountRefunded != 1000 || after.Status != state.PaymentPartiallyRefunded || sandbox.refunds.Load() != 1 {
		t.Errorf("payment after the refund: %d refunded, %s, %d provider refunds", after.AmountRefunded, after.Status, sandbox.refunds.Load())
	}
}

// asyncRefunds charges like the sandbox and takes refunds to settle later, as Adyen and
// Checkout.com do.
type asyncRefunds struct{ providertest.Memory }

func (asyncRefunds) Refund(context.Context, provider.RefundRequest) (provider.RefundResult, error) {
	return provider.RefundResult{ProviderRefundID: "act_later", Pending: true}, nil
}

// TestRefundTakenForLaterStaysPending: a refund the provider settles later stays pending with the
// provider's id, holding its amount; the payment is not refunded until it settles.
func TestRefundTakenForLaterStaysPending(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc := newService(db, asyncRefunds{}, 99999999)
		p, err := svc.Create(ctx, validInput())
		if err != nil {
			t.Fatal(err)
		}
		r, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("20.00"))})
		if err != nil || r.Status != state.RefundPending || r.ProviderRefundID == nil || *r.ProviderRefundID != "act_later" {
			t.Fatalf("refund = %+v, %v", r, err)
		}
		stored, _ := db.Ent.Refund.Get(databasetest.AsMerchant(), r.ID)
		if stored.Status != state.RefundPending || stored.ProviderRefundID == nil {
			t.Errorf("stored refund = %+v", stored)
		}
		if got, _ := svc.Get(ctx, p.ID); got.Status != state.PaymentSucceeded || got.AmountRefunded != 0 {
			t.Errorf("payment = %s, refunded %d; want succeeded, 0 until the refund settles", got.Status, got.AmountRefunded)
		}
		// The pending 20.00 is held: only 5.00 of 25.00 is left to refund.
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: ptr(money.Decimal("5.01"))}); !hasCode(err, apierror.RefundExceedsPayment) {
			t.Errorf("refund over what is left = %v", err)
		}
	})
}

// holderRecorder records the card holder's name of each charge it is asked for.
type holderRecorder struct {
	providertest.Memory
	names chan string
}

func (h holderRecorder) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	h.names <- req.HolderName
	return h.Memory.Charge(ctx, req)
}

// TestCustomerNameIsTheCardHolder: the provider is sent the customer's name, trimmed, as the
// card's holder, as Adyen and Checkout.com expect it.
func TestCustomerNameIsTheCardHolder(t *testing.T) {
	db := databasetest.SQLite(t)
	recorder := holderRecorder{names: make(chan string, 1)}
	if _, err := newService(db, recorder, 99999999).Create(allowed(), validInput()); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-recorder.names:
		if name != "Ann" {
			t.Errorf("holder name sent %q, want Ann", name)
		}
	default:
		t.Error("the provider was not asked to charge")
	}
}

// failedMeanwhile approves every charge after recording its payment failed, as reconciliation
// would if it had found no charge while the provider's answer was slow.
type failedMeanwhile struct {
	providertest.Memory
	client *ent.Client
}

func (f failedMeanwhile) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	if err := f.client.Payment.UpdateOneID(req.PaymentID).SetStatus(state.PaymentFailed).Exec(ctx); err != nil {
		return provider.ChargeResult{}, err
	}
	return f.Memory.Charge(ctx, req)
}

// TestApprovalOfAFailedPaymentNeedsAPerson: a request whose charge was approved after its
// payment was recorded failed keeps the record, and logs at error level that a person must
// refund the charge at the provider.
func TestApprovalOfAFailedPaymentNeedsAPerson(t *testing.T) {
	db := databasetest.SQLite(t)
	svc := newService(db, failedMeanwhile{client: db.Ent}, 99999999)
	logs := &logtest.Buffer{}
	svc.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	p, err := svc.Create(allowed(), validInput())
	if err != nil || p.Status != state.PaymentFailed {
		t.Fatalf("payment = %+v, %v; want the failed record kept", p, err)
	}
	if log := logs.String(); !strings.Contains(log, `"msg":"payment needs a person"`) || !strings.Contains(log, p.ID) ||
		!strings.Contains(log, `"level":"ERROR"`) {
		t.Errorf("log = %s", log)
	}
}

// TestCreateAnswersThePaymentAsStored: the payment a create answers, recorded onto the payment as
// the request wrote it rather than read back, is the payment as stored, column for column, and
// its idempotency key is settled with it: a retry replays it.
func TestCreateAnswersThePaymentAsStored(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		// The system's clock, which keeps the microseconds the databases keep.
		svc := payment.NewService(db, idempotency.NewStore(db.Ent, fingerprintKey, systemclock.System),
			only(providertest.Memory{}, systemclock.System), fingerprintKey, 99999999, systemclock.System)
		for _, capture := range []state.CaptureMethod{state.CaptureAutomatic, state.CaptureManual} {
			in := validInput()
			in.CaptureMethod = capture
			in.Metadata = map[string]string{"order": "1"}
			in.IdempotencyKey = ptr("as-stored-" + string(capture))
			answered, err := svc.Create(allowed(), in)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := svc.Get(allowed(), answered.ID)
			if err != nil {
				t.Fatal(err)
			}
			if a, s := columnsOf(t, answered), columnsOf(t, stored); a != s {
				t.Errorf("%s capture: answered %s\nstored %s", capture, a, s)
			}
			replayed, err := svc.Create(allowed(), in)
			if err != nil || replayed.ID != answered.ID {
				t.Errorf("%s capture: the retry answered %v, %v; want payment %s again", capture, replayed, err, answered.ID)
			}
		}
	})
}

// columnsOf is every column of p, as JSON.
func columnsOf(t *testing.T, p *ent.Payment) string {
	t.Helper()
	columns := *p
	columns.Edges = ent.PaymentEdges{}
	body, err := json.Marshal(columns)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// disputedMeanwhile approves every charge after a dispute was recorded on its payment, still
// processing, as a provider's late event would record it while the answer was slow.
type disputedMeanwhile struct {
	providertest.Memory
	client *ent.Client
}

func (d disputedMeanwhile) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	p, err := d.client.Payment.Get(ctx, req.PaymentID)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	later := p.UpdatedAt.Add(time.Second)
	if err := d.client.Payment.UpdateOneID(req.PaymentID).SetDisputedAt(later).SetDisputeReason("fraudulent").SetUpdatedAt(later).Exec(ctx); err != nil {
		return provider.ChargeResult{}, err
	}
	return d.Memory.Charge(ctx, req)
}

// TestAnswerToAPaymentWrittenMeanwhileIsReadAfresh: a payment written to while its charge was
// under way, its status unchanged, has the answer recorded onto it as stored, not as the request
// recorded it: the dispute stays, in the answer too.
func TestAnswerToAPaymentWrittenMeanwhileIsReadAfresh(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		svc := payment.NewService(db, idempotency.NewStore(db.Ent, fingerprintKey, systemclock.System),
			only(disputedMeanwhile{client: db.Ent}, systemclock.System), fingerprintKey, 99999999, systemclock.System)
		answered, err := svc.Create(allowed(), validInput())
		if err != nil {
			t.Fatal(err)
		}
		stored, err := svc.Get(allowed(), answered.ID)
		if err != nil {
			t.Fatal(err)
		}
		if answered.Status != state.PaymentSucceeded || answered.DisputedAt == nil || columnsOf(t, answered) != columnsOf(t, stored) {
			t.Errorf("answered %s\nstored %s", columnsOf(t, answered), columnsOf(t, stored))
		}
	})
}

// TestCreateExchangesWithPostgreSQL: on PostgreSQL a keyed create takes three exchanges with the
// database: one for the payment (the key's claim, the payment and its two history rows in one
// pgx.Batch), and two for its outcome (BEGIN, the move, its history row, its event and the
// resolving of its key in one pgx.Batch; then COMMIT, once each UPDATE found the payment as
// recorded), where an ent transaction, a statement at a time, took seven.
func TestCreateExchangesWithPostgreSQL(t *testing.T) {
	db := databasetest.CountingPostgres(t)
	svc := newClockedService(db, providertest.Memory{}, &clock{now: time.Now().UTC()})
	in := validInput()
	in.IdempotencyKey = key("three exchanges")
	before := db.RoundTrips()
	created, err := svc.Create(allowed(), in)
	if err != nil {
		t.Fatal(err)
	}
	if trips := db.RoundTrips() - before; created.Status != state.PaymentSucceeded || trips != 3 {
		t.Errorf("a keyed create ended %s after %d exchanges with the database; want succeeded after 3", created.Status, trips)
	}
	if replay, err := svc.Create(allowed(), in); err != nil || replay.ID != created.ID {
		t.Errorf("the create's retry = %v, %v; want payment %s", replay, err, created.ID)
	}
}

// movedMeanwhile approves every charge after the provider's event approving it was recorded, as a
// webhook delivered while the answer was slow would record it: the payment moved between the
// create's two transactions.
type movedMeanwhile struct {
	providertest.Memory
	db    *database.DB
	svc   *payment.Service
	clock *clock
}

func (m *movedMeanwhile) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	// Past the wait for the request's own answer, by a minute: the payment's created_at is the
	// wall clock's, which runs on from the test clock's start however loaded the machine.
	m.clock.Advance(payment.InFlightGrace + time.Minute)
	if err := applyNotification(m.db, m.svc, provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: "ch_webhook"}); err != nil {
		return provider.ChargeResult{}, err
	}
	return m.Memory.Charge(ctx, req)
}

// TestCreateAnswerToAPaymentMovedMeanwhileFallsBack: a create whose payment the provider's event
// moved before its answer was recorded writes nothing of its answer's move (its UPDATE finds the
// payment changed, and the rest is rolled back with it), records the answer read under the lock,
// and answers the payment as the event left it: one history row and one event per move, and the
// key settled with the payment.
func TestCreateAnswerToAPaymentMovedMeanwhileFallsBack(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		c := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
		moving := &movedMeanwhile{db: db, clock: c}
		svc := newClockedService(db, moving, c)
		moving.svc = svc
		in := validInput()
		in.IdempotencyKey = key("moved meanwhile")
		answered, err := svc.Create(allowed(), in)
		if err != nil {
			t.Fatal(err)
		}
		stored := db.Ent.Payment.GetX(databasetest.AsMerchant(), answered.ID)
		for _, p := range []*ent.Payment{answered, stored} {
			if p.Status != state.PaymentSucceeded || p.ProviderPaymentID == nil || *p.ProviderPaymentID != "ch_webhook" {
				t.Errorf("answered %s\nstored %s; want succeeded as the event recorded it, ch_webhook", columnsOf(t, answered), columnsOf(t, stored))
			}
		}
		if moves, want := movesOf(t, db, stored), []string{"pending", "processing", "succeeded"}; !equal(moves, want) {
			t.Errorf("history %v; want %v", moves, want)
		}
		if events := eventsOf(t, db, answered.ID); !equal(events, []string{"payment.succeeded"}) {
			t.Errorf("events %v; want one payment.succeeded", events)
		}
		if replay, err := svc.Create(allowed(), in); err != nil || replay.ID != answered.ID {
			t.Errorf("the create's retry = %v, %v; want payment %s", replay, err, answered.ID)
		}
	})
}

// voidedAtOnce answers every charge approved, and its authorisation already voided.
type voidedAtOnce struct{ providertest.Memory }

func (v voidedAtOnce) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	result, err := v.Memory.Charge(ctx, req)
	result.Canceled = true
	return result, err
}

// TestCreateAnswerOfTwoMovesIsRecordedWhole: an answer that moves the payment twice (authorised,
// then voided) records both moves in the create's outcome, each with its history row and its
// event, the second UPDATE finding the payment where the first left it; the payment answered is
// the payment stored.
func TestCreateAnswerOfTwoMovesIsRecordedWhole(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		// The system's clock, which keeps the microseconds the databases keep.
		svc := payment.NewService(db, idempotency.NewStore(db.Ent, fingerprintKey, systemclock.System),
			only(voidedAtOnce{}, systemclock.System), fingerprintKey, 99999999, systemclock.System)
		in := manualInput()
		in.IdempotencyKey = key("two moves")
		answered, err := svc.Create(allowed(), in)
		if err != nil {
			t.Fatal(err)
		}
		stored := db.Ent.Payment.GetX(databasetest.AsMerchant(), answered.ID)
		if answered.Status != state.PaymentCanceled || columnsOf(t, answered) != columnsOf(t, stored) {
			t.Errorf("answered %s\nstored %s; want canceled as stored", columnsOf(t, answered), columnsOf(t, stored))
		}
		if moves, want := movesOf(t, db, stored), []string{"canceled", "pending", "processing", "requires_capture"}; !equal(moves, want) {
			t.Errorf("history %v; want %v", moves, want)
		}
		if events := eventsOf(t, db, answered.ID); !equal(slices.Sorted(slices.Values(events)), []string{"payment.canceled", "payment.requires_capture"}) {
			t.Errorf("events %v; want requires_capture, then canceled", events)
		}
	})
}

// movesOf are the statuses p's history moved it to, in alphabetical order: moves made in one
// instant have no order of their own.
func movesOf(t *testing.T, db *database.DB, p *ent.Payment) []string {
	t.Helper()
	history, err := db.Ent.Payment.QueryStatusHistory(p).All(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	var moves []string
	for _, m := range history {
		moves = append(moves, string(m.To))
	}
	return slices.Sorted(slices.Values(moves))
}
