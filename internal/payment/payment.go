// Package payment takes card payments: it validates the request, records the payment, charges it
// through a provider and records the outcome.
package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"entgo.io/contrib/entgql"
	"golang.org/x/sync/singleflight"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/tracing"
)

// Limits on free-form fields, as the big providers set them.
const (
	MaxMetadataKeys   = 50
	MaxMetadataKey    = 40
	MaxMetadataValue  = 500
	MaxDescription    = 1000
	MaxCustomerName   = 200
	providerCallLimit = 20 * time.Second
)

// DefaultDatabasePatience is Service.DatabasePatience's default: a failover on Patroni takes a
// lock's lifetime (10 s in deploy/ha) and a promotion.
const DefaultDatabasePatience = 15 * time.Second

// CreateInput is a payment request as a client sends it, on either surface.
type CreateInput struct {
	Amount        money.Decimal
	Currency      string
	PaymentMethod card.PaymentMethod
	CustomerEmail string
	CustomerName  string
	Card          *card.Input
	Description   *string
	Metadata      map[string]string
	// CaptureMethod is automatic ("" too) or manual: authorise now, capture or cancel later.
	CaptureMethod state.CaptureMethod
	// ReturnURL is the merchant's page the shopper's browser goes back to after authenticating
	// (3-D Secure), an absolute http or https URL; nil when the merchant gave none.
	ReturnURL *string
	// IdempotencyKey, when not nil, makes a retry with the same key and input answer with this
	// call's outcome instead of charging again.
	IdempotencyKey *string
}

// captureMethod is the capture method asked for: automatic unless manual was.
func (in CreateInput) captureMethod() state.CaptureMethod {
	if in.CaptureMethod == "" {
		return state.CaptureAutomatic
	}
	return in.CaptureMethod
}

// meaning is what an idempotency key's fingerprint is taken of: the request as the service reads
// it, so the same payment sent over REST or GraphQL, with its amount written "12" or "12.00" or
// its card number with spaces, is one request.
func (in CreateInput) meaning() any {
	var c *card.Input
	if in.Card != nil {
		c = ptr(in.Card.Normalized())
	}
	return struct {
		Amount, Currency, PaymentMethod, CustomerEmail, CustomerName string
		Card                                                         *card.Input
		Description                                                  *string
		Metadata                                                     map[string]string
		CaptureMethod                                                state.CaptureMethod `json:",omitempty"`
		ReturnURL                                                    *string             `json:",omitempty"`
	}{in.Amount.Normalized(), strings.ToUpper(in.Currency), string(in.PaymentMethod), in.CustomerEmail,
		strings.TrimSpace(in.CustomerName), c, in.Description, in.Metadata, manualOnly(in.captureMethod()), in.ReturnURL}
}

// manualOnly keeps an idempotency key's fingerprint of a payment captured at once as it was
// before payments could be captured later, so keys taken then still match their retries.
func manualOnly(m state.CaptureMethod) state.CaptureMethod {
	if m == state.CaptureManual {
		return m
	}
	return ""
}

// Service takes and reads payments.
type Service struct {
	client *ent.Client
	// db writes a new payment's rows together (ExecTogether).
	db             *database.DB
	keys           *idempotency.Store
	router         *routing.Router
	fingerprintKey []byte
	// maxAmount bounds an amount, in hundredths of the major unit of any currency.
	maxAmount int64
	now       func() time.Time

	// Answered, when set, is told of each payment this server made, with the status its creation
	// answered.
	Answered func(status, provider, currency string)
	// Logger hears of payments whose outcome is unknown (default: slog's default logger).
	Logger *slog.Logger
	// ReturnAddress is Paygate's own address the shopper's browser comes back to after
	// authenticating the payment id at its provider, GET /api/v1/payments/{id}/return, with the
	// payment's return secret in its query (ReturnQuery).
	ReturnAddress func(paymentID, secret string) string
	// CaptureWindow is how long an authorisation waits for its capture before it is canceled
	// (default DefaultCaptureWindow): the runtime configuration's.
	CaptureWindow func() time.Duration
	// Events records what happens to payments and refunds for merchants, in the transaction of
	// each change.
	Events *event.Recorder
	// DatabasePatience is how long a payment's writes wait, beyond their usual few retries, for a
	// database that cannot be reached or cannot take writes (a failover) before the call answers
	// without them (default DefaultDatabasePatience).
	DatabasePatience time.Duration

	// byID and byIDWithHistory are Get's and GetWithHistory's reads.
	byID, byIDWithHistory byIDRead

	// returns shares one question to the provider among the browsers coming back at once for
	// one payment.
	returns singleflight.Group

	// reversalWake receives when a transaction recorded a reversal owed (ReversalsWoken).
	reversalWake chan struct{}

	// reconciling serialises this server's reconciliation passes; reconcileFrom is where the last
	// pass that stopped at its bound left off.
	reconciling   sync.Mutex
	reconcileFrom struct {
		payment *ent.Payment
		refund  *ent.Refund
	}
}

// NewService returns the payment service.
func NewService(db *database.DB, keys *idempotency.Store, router *routing.Router, fingerprintKey []byte, maxAmountHundredths int64, now func() time.Time) *Service {
	return &Service{client: db.Ent, db: db, keys: keys, router: router, fingerprintKey: fingerprintKey, maxAmount: maxAmountHundredths, now: now,
		byID: newByIDRead(db.Dialect, nil), byIDWithHistory: newByIDRead(db.Dialect, selectHistory), reversalWake: make(chan struct{}, 1)}
}

// validated is a request that passed every check, reduced to what may be stored.
type validated struct {
	amount money.Amount
	card   card.Card
}

func (s *Service) validate(in CreateInput) (validated, error) {
	if in.Amount == "" {
		return validated{}, apierror.ForParam(apierror.MissingField, "amount", "amount is required")
	}
	if in.Currency == "" {
		return validated{}, apierror.ForParam(apierror.MissingField, "currency", "currency is required")
	}
	currency, err := money.ParseCurrency(in.Currency)
	if err != nil {
		return validated{}, apierror.ForParam(apierror.InvalidCurrency, "currency", err.Error())
	}
	amount, err := money.Parse(string(in.Amount), currency)
	if err != nil {
		return validated{}, apierror.ForParam(apierror.InvalidAmount, "amount", err.Error())
	}
	if amount.Minor <= 0 {
		return validated{}, apierror.ForParam(apierror.InvalidAmount, "amount", "amount must be greater than zero")
	}
	if amount.ExceedsMajor(s.maxAmount) {
		limit := money.Amount{Minor: s.maxAmount, Currency: "USD"}
		return validated{}, apierror.ForParam(apierror.InvalidAmount, "amount", "amount must not exceed "+limit.String())
	}
	if in.PaymentMethod == "" {
		return validated{}, apierror.ForParam(apierror.MissingField, "payment_method", "payment_method is required")
	}
	if !in.PaymentMethod.Valid() {
		return validated{}, apierror.ForParam(apierror.InvalidPaymentMethod, "payment_method", "payment_method must be credit_card")
	}
	if err := validateCustomer(in.CustomerEmail, in.CustomerName); err != nil {
		return validated{}, err
	}
	if in.Card == nil {
		return validated{}, apierror.ForParam(apierror.MissingField, "card", "card is required for credit_card payments")
	}
	c, err := card.Validate(*in.Card, s.now())
	if err != nil {
		return validated{}, err
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescription {
		return validated{}, apierror.ForParam(apierror.InvalidRequest, "description", fmt.Sprintf("description must be at most %d characters", MaxDescription))
	}
	if err := validateMetadata(in.Metadata); err != nil {
		return validated{}, err
	}
	if !slices.Contains(in.captureMethod().Values(), string(in.captureMethod())) {
		return validated{}, apierror.ForParam(apierror.InvalidRequest, "capture_method", "capture_method must be automatic or manual")
	}
	if in.ReturnURL != nil && (len(*in.ReturnURL) > MaxReturnURL || !provider.WebAddress(*in.ReturnURL)) {
		return validated{}, apierror.ForParam(apierror.InvalidRequest, "return_url",
			fmt.Sprintf("return_url must be an absolute http or https URL of at most %d characters", MaxReturnURL))
	}
	return validated{amount: amount, card: c}, nil
}

func validateCustomer(email, name string) error {
	if email == "" {
		return apierror.ForParam(apierror.MissingField, "customer.email", "customer.email is required")
	}
	if utf8.RuneCountInString(email) > auth.MaxEmailLength {
		return apierror.ForParam(apierror.InvalidRequest, "customer.email", fmt.Sprintf("customer.email is longer than %d characters", auth.MaxEmailLength))
	}
	address, err := mail.ParseAddress(email)
	if err != nil || address.Address != email {
		return apierror.ForParam(apierror.InvalidRequest, "customer.email", "customer.email is not a valid email address")
	}
	if utf8.RuneCountInString(name) > MaxCustomerName {
		return apierror.ForParam(apierror.InvalidRequest, "customer.name", fmt.Sprintf("customer.name must be at most %d characters", MaxCustomerName))
	}
	return nil
}

func validateMetadata(metadata map[string]string) error {
	if len(metadata) > MaxMetadataKeys {
		return apierror.ForParam(apierror.InvalidRequest, "metadata", fmt.Sprintf("metadata may hold at most %d keys", MaxMetadataKeys))
	}
	for key, value := range metadata {
		if key == "" || utf8.RuneCountInString(key) > MaxMetadataKey {
			return apierror.ForParam(apierror.InvalidRequest, "metadata", fmt.Sprintf("metadata keys must be 1 to %d characters", MaxMetadataKey))
		}
		if utf8.RuneCountInString(value) > MaxMetadataValue {
			return apierror.ForParam(apierror.InvalidRequest, "metadata."+key, fmt.Sprintf("metadata values must be at most %d characters", MaxMetadataValue))
		}
	}
	return nil
}

// Create validates the request, records the payment as processing, charges the card and records
// the outcome. A decline is not an error: the payment comes back failed with its failure code.
// With an idempotency key it commits twice: the key with the payment before the provider is asked,
// and the key's outcome with the payment's.
func (s *Service) Create(ctx context.Context, in CreateInput) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.CreatePayment); err != nil {
		return nil, err
	}
	key, err := s.keys.For(ctx, auth.CreatePayment, in.IdempotencyKey, in.meaning())
	if err != nil {
		return nil, err
	}
	v, err := s.validate(in)
	if err != nil {
		// A retry of a call that went through replays it even if its input no longer passes
		// (the card expired since), and a key used with another input says so.
		return replayOr(ctx, s, key, s.paymentOf, err)
	}
	// From here on the charge must be seen through and recorded even if the client goes away,
	// and answered while the client still waits, however long the database is away.
	ctx = withAnswerBy(context.WithoutCancel(ctx))
	merchant, _ := tenant.Merchant(ctx)
	plan := s.router.Plan(routing.Payment{Amount: v.amount, Brand: v.card.Brand, Merchant: merchant})
	if len(plan.Providers) == 0 && len(plan.Unsendable) > 0 {
		// No provider that could be asked can be sent the amount at all: the client's to change.
		return replayOr(ctx, s, key, s.paymentOf, apierror.ForParam(apierror.InvalidAmount, "amount",
			"no payment provider in use can take this amount: "+strings.Join(plan.Unsendable, "; ")))
	}
	returnSecret := s.newReturnSecret(in)
	created, earlier, err := s.recordProcessing(ctx, key, in, v, plan, returnSecretHash(returnSecret))
	switch {
	case err != nil:
		return nil, fmt.Errorf("recording the payment: %w", err)
	case earlier != nil:
		return answer(ctx, *earlier, s.paymentOf)
	}
	defer s.settleOnPanic(ctx, key)
	sent, outcome, doubt := s.charge(ctx, created, v, plan, s.returnAddress(created, returnSecret))
	return s.recordCharge(ctx, key, created, sent, outcome, doubt)
}

// recordProcessing records the payment, with the claim of key and the hash of its return secret
// (nil for none), as handed to plan's first provider before that provider is asked. When an
// earlier call has the key, nothing is written and that call's outcome is returned instead.
func (s *Service) recordProcessing(ctx context.Context, key *idempotency.Key, in CreateInput, v validated, plan routing.Plan, returnSecretHash *string) (*ent.Payment, *idempotency.Outcome, error) {
	// The payment names the provider its charge goes to before the call, so that a charge whose
	// answer is lost is looked for where it was sent; a failover renames it first.
	first, sentTo := "", "no provider can take it"
	if len(plan.Providers) > 0 {
		first = plan.Providers[0]
		sentTo = "sent to " + first
	}
	actor := actorOf(ctx)
	id := prefixid.New("pay")
	// Made at the service's time, as every later move is, so that what reads payments by time
	// (lists, the overview) reads them as the server's clock does.
	at := s.now()
	var created *ent.Payment
	earlier, err := s.untilClaimed(ctx, key, func() error {
		var statements []ent.Statement
		if key != nil {
			claim, err := s.keys.ClaimStatement(ctx, key, id)
			if err != nil {
				return err
			}
			statements = append(statements, claim)
		}
		p, insert, err := s.client.Payment.Create().
			SetID(id).
			SetAmount(v.amount.Minor).
			SetCurrency(v.amount.Currency).
			SetStatus(state.PaymentProcessing).
			SetPaymentMethod(in.PaymentMethod).
			SetCustomerEmail(in.CustomerEmail).
			SetCustomerName(strings.TrimSpace(in.CustomerName)).
			SetCardBrand(v.card.Brand).
			SetCardLast4(v.card.Last4).
			SetCardExpMonth(v.card.ExpMonth).
			SetCardExpYear(v.card.ExpYear).
			SetCardFingerprint(card.Fingerprint(s.fingerprintKey, v.card)).
			SetProvider(first).
			SetNillableDescription(in.Description).
			SetMetadata(in.Metadata).
			SetCaptureMethod(in.captureMethod()).
			SetNillableReturnURL(in.ReturnURL).
			SetNillableReturnSecretHash(returnSecretHash).
			SetNillableTraceParent(tracing.Cause(ctx)).
			SetCreatedAt(at).SetUpdatedAt(at).
			InsertStatement(ctx)
		if err != nil {
			return err
		}
		statements = append(statements, insert)
		// Born pending and handed to the provider at once: both moves are history.
		for _, change := range []*ent.PaymentStatusChangeCreate{
			s.client.PaymentStatusChange.Create().SetTo(state.PaymentPending).SetReason("created"),
			s.client.PaymentStatusChange.Create().SetFrom(state.PaymentPending).SetTo(state.PaymentProcessing).SetReason(sentTo),
		} {
			_, insert, err := change.SetMerchantID(p.MerchantID).SetPaymentID(p.ID).SetActor(actor).SetAt(p.CreatedAt).InsertStatement(ctx)
			if err != nil {
				return err
			}
			statements = append(statements, insert)
		}
		// The payment's rows and the key's claim, in one transaction and, on PostgreSQL, in one
		// exchange with the server (a pgx.Batch).
		err = s.db.ExecTogether(ctx, statements...)
		if database.Unavailable(err) && !database.NothingWritten(err) {
			err = s.learnWritten(ctx, id, err, func() error { return s.db.ExecTogether(ctx, statements...) })
		}
		if failed, ok := errors.AsType[*database.StatementError](err); ok && key != nil && failed.Index == 0 && database.IsUniqueViolation(err) {
			return idempotency.ErrTaken
		}
		created = p
		return err
	})
	return created, earlier, err
}

// learnWritten learns whether payment id's rows, whose transaction broke once they were sent
// (lost), were committed: the primary may have committed them and died before answering, died
// first, or be committing them still. It sends them again (send) while the database is
// unavailable, within DatabasePatience: the unique indexes refuse them if the first send was
// committed (waiting for it if it is still under way), and take them otherwise. It returns nil
// when the rows are written, either time; send's refusal when another call claimed the key
// meanwhile; and lost when no primary answered in time, the rows then written or not, their key
// held until reconciliation finds that no provider saw the payment.
func (s *Service) learnWritten(ctx context.Context, id string, lost error, send func() error) error {
	err := s.whileUnavailable(ctx, send)
	switch {
	case err == nil:
		s.logger().WarnContext(ctx, "a payment's rows were sent again after their connection broke, and written", "payment_id", id)
		return nil
	case database.IsUniqueViolation(err):
		// The conflict's transaction has ended: the payment's row says whose it was.
		exists, existsErr := s.client.Payment.Query().Where(payment.ID(id)).Exist(ctx)
		if existsErr == nil && exists {
			s.logger().WarnContext(ctx, "a payment's rows were committed though the commit's answer was lost: it goes on", "payment_id", id)
			return nil
		}
		if existsErr != nil {
			err = lost
		}
	}
	if database.Unavailable(err) {
		s.logger().ErrorContext(ctx, "whether a payment's rows were committed is unknown: the database did not answer in time",
			"payment_id", id, "error", err.Error())
		return lost
	}
	return err
}

// unavailableWait is the pause between attempts at a database that is unavailable.
const unavailableWait = 250 * time.Millisecond

// answerWithin bounds how long a call that waits for the database may take in all, from its
// start (withAnswerBy), so that it answers within the server's write timeout of 30 s.
const answerWithin = 27 * time.Second

type answerByKey struct{}

// withAnswerBy marks ctx with the time by which its call must answer, answerWithin from now.
func withAnswerBy(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerByKey{}, time.Now().Add(answerWithin))
}

// whileUnavailable runs attempt until it returns anything other than a database.Unavailable
// error, for DatabasePatience at most and never past the time ctx's call must answer by
// (withAnswerBy), and returns its last error.
func (s *Service) whileUnavailable(ctx context.Context, attempt func() error) error {
	patience := s.DatabasePatience
	if patience == 0 {
		patience = DefaultDatabasePatience
	}
	until := time.Now().Add(patience)
	if answerBy, ok := ctx.Value(answerByKey{}).(time.Time); ok && answerBy.Before(until) {
		until = answerBy
	}
	err := attempt()
	for database.Unavailable(err) && time.Now().Add(unavailableWait).Before(until) {
		time.Sleep(unavailableWait)
		err = attempt()
	}
	return err
}

// charge asks plan's providers to charge payment p, renaming its provider at each failover, and
// returns how the charge was sent and what became of it; doubt is the error that left the outcome
// unknown (a timeout, an answer that cannot be read). returnAddress is where the shopper comes
// back to after authenticating, "" to ask for no authentication.
func (s *Service) charge(ctx context.Context, p *ent.Payment, v validated, plan routing.Plan, returnAddress string) (sent sentCharge, outcome chargeOutcome, doubt error) {
	callCtx, cancel := context.WithTimeout(ctx, providerCallLimit)
	defer cancel()
	decision, charger, result, err := s.router.Charge(callCtx, plan, provider.ChargeRequest{
		PaymentID:       p.ID,
		Amount:          v.amount,
		Card:            v.card,
		Description:     deref(p.Description),
		HolderName:      p.CustomerName,
		CaptureManually: p.CaptureMethod == state.CaptureManual,
		ReturnURL:       returnAddress,
	}, func(next string) error {
		err := s.client.Payment.UpdateOneID(p.ID).SetProvider(next).SetUpdatedAt(s.now()).Exec(ctx)
		if err != nil {
			// The router stops here and the payment fails as provider_unavailable (nothing was
			// charged): the cause is ours, not the provider's, so it must be told.
			s.logger().ErrorContext(ctx, "recording a failover failed: the payment fails without asking the next provider",
				"payment_id", p.ID, "provider", next, "error", err.Error())
		}
		return err
	})
	sent = sentCharge{provider: charger, routing: decision}
	switch {
	case errors.Is(err, provider.ErrUnavailable):
		return sent, notCharged(string(apierror.ProviderUnavailable), "The payment provider could not process the payment; nothing was charged."), nil
	case err != nil:
		return sent, chargeInDoubt, err
	}
	return sent, chargeAnswered(result), nil
}

// recordCharge records what became of payment p's charge, and how it was sent, and settles key by
// it: the payment as recorded answers the call. A charge in doubt leaves the payment processing
// until the provider's webhook or reconciliation settles it, and is never made again: the call
// answers the payment, processing.
func (s *Service) recordCharge(ctx context.Context, key *idempotency.Key, p *ent.Payment, sent sentCharge, outcome chargeOutcome, doubt error) (*ent.Payment, error) {
	actor := "provider:" + sent.provider
	if sent.provider == "" {
		actor = "system" // no provider was asked
	}
	var v verdict
	// record may change p before its transaction fails.
	asCreated := *p
	// record records the answer onto the payment as read under its lock.
	record := func(tx *ent.Tx) error {
		current, err := lockPayment(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		// keep makes p the payment as written, detached from tx so that its edges load once tx
		// is over.
		keep := func() { *p = *current.Unwrap() }
		if capturing(current) {
			// Authorised by the provider's event and sent for capture while this request waited
			// for the charge's answer (a create's, made before any capture), which is about the
			// authorisation: it must not take the capture's place. The call answers the payment
			// as it is.
			v = overCapture(current, "the charge's answer")
			keep()
			if key == nil {
				return nil
			}
			return s.keys.Settle(ctx, tx, key, nil)
		}
		// A move resolves every key that made the payment, this call's among them.
		moved := outcome.moves(current)
		if v, err = s.applyChargeOutcome(ctx, tx, current, outcome, actor, &sent); err != nil {
			return err
		}
		if doubt != nil && current.Status == state.PaymentProcessing {
			// Its outcome unknown, the payment answers 202: merchants hear of it as of any move.
			if err := s.Events.Record(ctx, tx, current.MerchantID, event.PaymentProcessing, current.ID, ObjectOf(current), s.now()); err != nil {
				return err
			}
		}
		// A charge in doubt, or an answer to a payment someone else moved first, settles the
		// key here: its retries answer the payment as it is then.
		if key != nil && !moved {
			if err := s.keys.Settle(ctx, tx, key, nil); err != nil {
				return err
			}
		}
		keep()
		return nil
	}
	// An answer that moves the payment is first recorded onto the payment as this request
	// recorded it (recordOntoRecorded): the move's UPDATE is conditional on its status and its
	// updated_at as recorded, and takes the row's lock, so no read under the lock is needed
	// first. Should anyone have written to it since (a provider's event or reconciliation moving
	// it, a failover renaming its provider, a dispute), the UPDATE finds it changed, nothing is
	// written, and the answer is recorded as any other: read afresh under the lock, where their
	// record, from the same provider, stands, and is this request's answer. A payment being
	// captured, which a create's own never is, is left to the locked path, which knows it.
	asRecorded := doubt == nil && outcome.moves(p) && !capturing(p)
	var err error
	if asRecorded {
		err = s.recordOntoRecorded(ctx, p, outcome, actor, &sent)
	}
	if !asRecorded || err != nil {
		err = s.recordOutcome(ctx, record)
	}
	if err == nil {
		s.tellPerson(ctx, v, p.ID)
	}
	if doubt != nil || database.Unavailable(err) {
		if err != nil {
			// Recorded as created, to the provider it went to, and no further.
			*p = asCreated
			if sent.provider != "" {
				p.Provider = sent.provider
			}
		}
		return s.answerInDoubt(ctx, key, p, sent, doubt, err)
	}
	if err != nil {
		// Not wrapped: the provider has been asked, so whatever went wrong recording its answer is
		// ours, a server error, whatever the cause says.
		return nil, s.endWith(ctx, key, fmt.Errorf("recording the outcome of payment %s (provider id %q): %v",
			p.ID, deref(outcome.recorded.providerPaymentID), err))
	}
	s.answered(string(p.Status), p.Provider, p.Currency)
	return p, nil
}

// recordOntoRecorded records outcome o of payment p's charge, which moves p, onto p as this
// request recorded it, by actor, with how the charge was sent: the moves applyChargeOutcome would
// make, their history rows and events, and the resolving of the keys that made p, in that order.
// They are rendered rather than run, and sent to the database as one transaction that commits only
// if each move's UPDATE, conditional on p's status and on its updated_at as recorded, found p:
// on PostgreSQL two exchanges (database.DB.ExecChecked), where running them would take six. When
// one did not, nothing is written and the error says p changed meanwhile. p is what was written
// once it returns nil, and as it was otherwise.
func (s *Service) recordOntoRecorded(ctx context.Context, p *ent.Payment, o chargeOutcome, actor string, sent *sentCharge) error {
	current := ptr(*p)
	o.recorded.unchangedSince = ptr(p.UpdatedAt)
	path, c := s.chargeMoves(current, o, sent)
	var statements []ent.Statement
	var updates []int // where the moves' UPDATEs are among statements
	tells := false
	for i, step := range stepsOf(path, c) {
		m, err := s.newMove(s.client, current, path[i], o.reason, actor, step)
		if err != nil {
			return err
		}
		update, err := m.update.UpdateStatement(ctx)
		if err != nil {
			return err
		}
		_, history, err := m.history.InsertStatement(ctx)
		if err != nil {
			return err
		}
		updates = append(updates, len(statements))
		statements = append(statements, update, history)
		m.apply(current)
		if eventType, ok := event.PaymentEventOf(m.to); ok {
			create, err := s.Events.Create(ctx, s.client.Event, current.MerchantID, eventType, current.ID, ObjectOf(current), m.at)
			if err != nil {
				return err
			}
			_, insert, err := create.InsertStatement(ctx)
			if err != nil {
				return err
			}
			statements = append(statements, insert)
			tells = true
		}
	}
	resolve, err := s.keys.Resolving(s.client.IdempotencyKey, current.ID).UpdateStatement(ctx)
	if err != nil {
		return err
	}
	statements = append(statements, resolve)
	err = s.db.ExecChecked(ctx, statements, func(affected []int64) error {
		for _, i := range updates {
			if affected[i] != 1 {
				return changedMeanwhile(current.ID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	*p = *current
	if tells {
		s.Events.Wrote()
	}
	return nil
}

// answerInDoubt answers a payment whose charge's outcome is unknown (doubt: the provider's answer
// was lost), or whose outcome could not be recorded (recordErr: the database was unavailable for
// longer than DatabasePatience): the payment, processing, which the provider's webhook or
// reconciliation settles later. p is as recorded, or as created when recordErr. The key is then
// settled alone, so a retry answers the payment and never charges again; should that fail too,
// the key stays held, and its retries are told to wait, until reconciliation records the outcome.
func (s *Service) answerInDoubt(ctx context.Context, key *idempotency.Key, p *ent.Payment, sent sentCharge, doubt, recordErr error) (*ent.Payment, error) {
	if doubt != nil {
		s.logger().WarnContext(ctx, "payment outcome unknown: the provider's webhook or reconciliation will settle it",
			"payment_id", p.ID, "provider", sent.provider, "error", doubt.Error())
	}
	if recordErr != nil {
		s.logger().ErrorContext(ctx, "recording what became of a payment's charge failed: it stays processing until reconciliation asks its provider",
			"payment_id", p.ID, "provider", sent.provider, "error", recordErr.Error())
		if key != nil {
			if err := s.keys.SettleAlone(ctx, key, nil); err != nil {
				s.logger().ErrorContext(ctx, "settling the idempotency key of a payment in doubt failed: its retries wait for reconciliation",
					"payment_id", p.ID, "error", err.Error())
			}
		}
	}
	s.answered(string(state.PaymentProcessing), sent.provider, p.Currency)
	return p, nil
}

// tellPerson logs, at error level, an outcome that disagrees with the payment's record about
// money, for a person to check at the provider, as the webhook worker logs such events.
func (s *Service) tellPerson(ctx context.Context, v verdict, paymentID string) {
	if v.attention {
		s.logger().ErrorContext(ctx, "payment needs a person", "payment_id", paymentID, "reason", v.ignored)
	}
}

// logger is where the service tells of what it could not settle: Logger, or slog's default.
func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Service) answered(status, provider, currency string) {
	if s.Answered != nil {
		s.Answered(status, provider, currency)
	}
}

// paymentOf loads the payment an earlier call with an idempotency key made, for its replay.
func (s *Service) paymentOf(ctx context.Context, id string) (*ent.Payment, error) {
	return s.client.Payment.Get(ctx, id)
}

// claimAndWrite runs write in one transaction with the claim of key (when there is one) for the
// resource it makes, under an id chosen here. When an earlier call has the key, nothing is written
// and that call's outcome is returned instead.
func (s *Service) claimAndWrite(ctx context.Context, key *idempotency.Key, id string, write func(tx *ent.Tx, id string) error) (*idempotency.Outcome, error) {
	return s.untilClaimed(ctx, key, func() error {
		return s.inTx(ctx, func(tx *ent.Tx) error {
			if key != nil {
				if err := s.keys.Claim(ctx, tx, key, id); err != nil {
					return err
				}
			}
			return write(tx, id)
		})
	})
}

// untilClaimed runs write, which writes what a call makes with the claim of key (when there is
// one), and answers idempotency.ErrTaken when an earlier call has the key. It then returns that
// call's outcome instead, having written nothing; a key found expired is deleted, and write runs
// again to claim it afresh.
func (s *Service) untilClaimed(ctx context.Context, key *idempotency.Key, write func() error) (*idempotency.Outcome, error) {
	for attempt := 0; ; attempt++ {
		err := write()
		if !errors.Is(err, idempotency.ErrTaken) {
			return nil, err
		}
		earlier, found, err := s.keys.Previous(ctx, key)
		switch {
		case err != nil:
			return nil, err
		case found:
			return &earlier, nil
		case attempt > 0: // taken, yet gone each time we look: another call keeps claiming it
			return nil, apierror.New(apierror.IdempotencyKeyInUse, "a request with this idempotency key is still running; retry later")
		}
		// It had expired, and is deleted: claim it afresh.
	}
}

// replayOr answers a call refused by err with the outcome of an earlier call with its key, if
// there is one, and with err otherwise.
func replayOr[T any](ctx context.Context, s *Service, key *idempotency.Key, load func(context.Context, string) (T, error), refused error) (T, error) {
	var none T
	if key == nil {
		return none, refused
	}
	earlier, found, err := s.keys.Previous(ctx, key)
	switch {
	case err != nil:
		return none, err
	case !found:
		return none, refused
	}
	return answer(ctx, earlier, load)
}

// answer is an earlier call's outcome: its error, or the resource it made as it is now.
func answer[T any](ctx context.Context, earlier idempotency.Outcome, load func(context.Context, string) (T, error)) (T, error) {
	if earlier.Err != nil {
		var none T
		return none, earlier.Err
	}
	return load(ctx, earlier.ResourceID)
}

// endWith settles key with err, the end of a call that wrote and then failed, so a retry replays
// the error rather than running again; it returns err, with the settling's own failure if any
// (the key then stays held until it expires, which is safe).
func (s *Service) endWith(ctx context.Context, key *idempotency.Key, err error) error {
	if key == nil {
		return err
	}
	if settleErr := s.keys.SettleAlone(ctx, key, err); settleErr != nil {
		return errors.Join(err, fmt.Errorf("settling idempotency key: %w", settleErr))
	}
	return err
}

// settleOnPanic settles key with an internal error if the call panics after it claimed the key:
// the provider may have been asked, so a retry must replay, not run again. Deferred.
func (s *Service) settleOnPanic(ctx context.Context, key *idempotency.Key) {
	if key == nil {
		return
	}
	if v := recover(); v != nil {
		s.keys.SettleAlone(ctx, key, errors.New("panic"))
		panic(v)
	}
}

// outcomeWaits are the pauses between attempts to record what a provider answered.
var outcomeWaits = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond, 3 * time.Second}

// recordOutcome writes a provider's answer in a transaction, retrying a failed write a few times,
// and for DatabasePatience more while the database is unavailable: the provider has already moved
// the money, so giving up leaves books that disagree with it until reconciliation. A refusal by
// our own rules (an API error) is final and not retried.
func (s *Service) recordOutcome(ctx context.Context, write func(tx *ent.Tx) error) error {
	err := s.inTx(ctx, write)
	for _, wait := range outcomeWaits {
		if _, refused := errors.AsType[*apierror.Error](err); err == nil || refused {
			return err
		}
		time.Sleep(wait)
		err = s.inTx(ctx, write)
	}
	if database.Unavailable(err) {
		time.Sleep(unavailableWait) // whileUnavailable tries at once, and the last try just failed
		err = s.whileUnavailable(ctx, func() error { return s.inTx(ctx, write) })
	}
	return err
}

// actorOf names who is acting: the principal's subject, or "system".
func actorOf(ctx context.Context) string {
	if p, ok := auth.PrincipalFrom(ctx); ok {
		return p.Subject
	}
	return "system"
}

// inTx runs fn in a transaction, committing when it returns nil. A panic in fn rolls it back
// before going on, so it never holds locks (a claimed key above all) until its connection dies.
func (s *Service) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			tx.Rollback()
			panic(v)
		}
	}()
	if err := fn(tx); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		return err
	}
	return tx.Commit()
}

// changes are the columns that change with a move besides the status; nil leaves one as it is.
type changes struct {
	provider, providerPaymentID, providerDeclineCode, failureCode, failureMessage *string
	amountRefunded, amountCapturable, amountCaptured                              *int64
	routing                                                                       *state.RoutingDecision
	captureBefore, canceledAt, authenticateBefore                                 *time.Time
	// nextActionURL is the provider's page a payment waiting for the shopper sends them to;
	// clearAction ends the wait.
	nextActionURL *string
	clearAction   bool
	// clearCancellation drops the reason of a cancellation given up.
	clearCancellation bool
	// reversalDue is when reconciliation asks the provider of a payment canceled while it waited
	// whether the shopper authenticated after all (checkLateApprovals).
	reversalDue        *time.Time
	cancellationReason *state.CancellationReason
	// pending claims a capture (of captureRequested) or cancellation for the request making the
	// move; clearPending ends the one claimed.
	pending          *payment.PendingAction
	captureRequested *int64
	clearPending     bool
	// unchangedSince makes the first move of a path conditional on the payment's updated_at as
	// well: a payment moved onto as it was recorded, not as read under its lock, is moved only if
	// no one wrote to it since.
	unchangedSince *time.Time
}

func ptr[T any](v T) *T { return &v }

// move changes a payment's status along the state machine and records the move in its history,
// within tx. The UPDATE is conditional on the status p was read with, so of two concurrent moves
// one fails instead of both applying. p is updated to what was written, without reading it back.
func (s *Service) move(ctx context.Context, tx *ent.Tx, p *ent.Payment, to state.PaymentStatus, reason, actor string, c changes) error {
	m, err := s.newMove(tx.Client(), p, to, reason, actor, c)
	if err != nil {
		return err
	}
	n, err := m.update.Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return changedMeanwhile(p.ID)
	}
	if err := m.history.Exec(ctx); err != nil {
		return err
	}
	m.apply(p)
	if eventType, tells := event.PaymentEventOf(to); tells {
		return s.Events.Record(ctx, tx, p.MerchantID, eventType, p.ID, ObjectOf(p), m.at)
	}
	return nil
}

// changedMeanwhile is the error of a move whose conditional UPDATE found the payment changed.
func changedMeanwhile(paymentID string) error {
	return apierror.New(apierror.InvalidState, fmt.Sprintf("payment %s changed while being updated; try again", paymentID))
}

// statusMove is one move of a payment's status, built but not run: the UPDATE of the payment,
// conditional on the status it moves from (which must find exactly the payment), and the move's
// history row.
type statusMove struct {
	update  *ent.PaymentUpdate
	history *ent.PaymentStatusChangeCreate
	to      state.PaymentStatus
	at      time.Time
	c       changes
}

// newMove builds, on client, the move of p to status to, by actor for reason, with the changes c.
// It refuses a move the state machine does not allow.
func (s *Service) newMove(client *ent.Client, p *ent.Payment, to state.PaymentStatus, reason, actor string, c changes) (statusMove, error) {
	from := p.Status
	if !from.CanMoveTo(to) {
		return statusMove{}, apierror.New(apierror.InvalidState, fmt.Sprintf("a %s payment cannot become %s", from, to))
	}
	if from == state.PaymentRequiresAction {
		c.clearAction = true // the shopper's page is of no use once the payment moved on
	}
	at := s.now()
	update := client.Payment.Update().Where(payment.ID(p.ID), payment.StatusEQ(from)).SetStatus(to).SetUpdatedAt(at).
		SetNillableProvider(c.provider).
		SetNillableProviderPaymentID(c.providerPaymentID).
		SetNillableProviderDeclineCode(c.providerDeclineCode).
		SetNillableFailureCode(c.failureCode).
		SetNillableFailureMessage(c.failureMessage).
		SetNillableAmountRefunded(c.amountRefunded).
		SetNillableAmountCapturable(c.amountCapturable).
		SetNillableAmountCaptured(c.amountCaptured).
		SetNillableCaptureBefore(c.captureBefore).
		SetNillableCanceledAt(c.canceledAt).
		SetNillableCancellationReason(c.cancellationReason)
	if c.routing != nil {
		update.SetRouting(c.routing)
	}
	if c.unchangedSince != nil {
		update.Where(payment.UpdatedAt(*c.unchangedSince))
	}
	if c.clearPending {
		update.ClearPendingAction().ClearCaptureRequested()
	}
	if c.clearAction {
		update.ClearNextActionURL().ClearAuthenticateBefore()
	}
	if c.clearCancellation {
		update.ClearCancellationReason()
	}
	update.SetNillableNextActionURL(c.nextActionURL).SetNillableAuthenticateBefore(c.authenticateBefore)
	update.SetNillablePendingAction(c.pending).SetNillableCaptureRequested(c.captureRequested).SetNillableReversalDue(c.reversalDue)
	history := client.PaymentStatusChange.Create().SetMerchantID(p.MerchantID).SetPaymentID(p.ID).SetFrom(from).SetTo(to).
		SetReason(reason).SetActor(actor).SetAt(at)
	return statusMove{update: update, history: history, to: to, at: at, c: c}, nil
}

// apply makes p the payment m writes, once it is written.
func (m statusMove) apply(p *ent.Payment) {
	c := m.c
	p.Status, p.UpdatedAt = m.to, m.at
	if c.provider != nil {
		p.Provider = *c.provider
	}
	if c.routing != nil {
		p.Routing = c.routing
	}
	if c.providerPaymentID != nil {
		p.ProviderPaymentID = c.providerPaymentID
	}
	if c.providerDeclineCode != nil {
		p.ProviderDeclineCode = c.providerDeclineCode
	}
	if c.failureCode != nil {
		p.FailureCode, p.FailureMessage = c.failureCode, c.failureMessage
	}
	if c.amountRefunded != nil {
		p.AmountRefunded = *c.amountRefunded
	}
	if c.amountCapturable != nil {
		p.AmountCapturable = *c.amountCapturable
	}
	if c.amountCaptured != nil {
		p.AmountCaptured = *c.amountCaptured
	}
	if c.captureBefore != nil {
		p.CaptureBefore = c.captureBefore
	}
	if c.canceledAt != nil {
		p.CanceledAt = c.canceledAt
	}
	if c.cancellationReason != nil {
		p.CancellationReason = c.cancellationReason
	}
	if c.clearPending {
		p.PendingAction, p.CaptureRequested = nil, nil
	}
	if c.clearAction {
		p.NextActionURL, p.AuthenticateBefore = nil, nil
	}
	if c.clearCancellation {
		p.CancellationReason = nil
	}
	if c.nextActionURL != nil {
		p.NextActionURL, p.AuthenticateBefore = c.nextActionURL, c.authenticateBefore
	}
	if c.pending != nil {
		p.PendingAction, p.CaptureRequested = c.pending, c.captureRequested
	}
	if c.reversalDue != nil {
		p.ReversalDue = c.reversalDue
	}
}

// moveThrough moves p along path, one move after another, each in its history (stepsOf).
func (s *Service) moveThrough(ctx context.Context, tx *ent.Tx, p *ent.Payment, path []state.PaymentStatus, reason, actor string, c changes) error {
	for i, step := range stepsOf(path, c) {
		if err := s.move(ctx, tx, p, path[i], reason, actor, step); err != nil {
			return err
		}
	}
	return nil
}

// stepsOf are the changes of each move along path: c goes with the last, and its condition that
// the payment be unchanged since a time with the first. A provider's news can skip a step Paygate
// never saw: an authorisation in doubt found voided passes through requires_capture on its way to
// canceled.
func stepsOf(path []state.PaymentStatus, c changes) []changes {
	if len(path) == 0 {
		return nil
	}
	steps := make([]changes, len(path))
	steps[len(path)-1] = c
	steps[len(path)-1].unchangedSince = nil
	steps[0].unchangedSince = c.unchangedSince
	return steps
}

// Get returns one payment.
func (s *Service) Get(ctx context.Context, id string) (*ent.Payment, error) {
	return s.getOne(ctx, id, &s.byID)
}

// getOne returns one payment, read by read.
func (s *Service) getOne(ctx context.Context, id string, read *byIDRead) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.GetPayment); err != nil {
		return nil, err
	}
	nodes, err := read.read(ctx, s.db, id)
	switch {
	case err != nil:
		return nil, err
	case len(nodes) == 0:
		return nil, apierror.ForParam(apierror.NotFound, "id", "no payment has the id "+id)
	case len(nodes) > 1:
		return nil, fmt.Errorf("%d payments have the id %s", len(nodes), id)
	}
	return nodes[0], nil
}

// GetMany returns those of the payments ids that the principal may read, in no set order: one
// read for a page of things that name payments, such as events.
func (s *Service) GetMany(ctx context.Context, ids []string) ([]*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.GetPayment); err != nil {
		return nil, err
	}
	return s.client.Payment.Query().Where(payment.IDIn(ids...)).All(ctx)
}

// List returns one page of payments as a Relay connection: first (after) pages forwards, last
// (before) backwards; neither means the first paging.DefaultPageSize. Without orderBy it is
// NewestFirst, as REST lists them, rather than entgql's default of the id, oldest first.
func (s *Service) List(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.PaymentOrder, where *ent.PaymentWhereInput) (*ent.PaymentConnection, error) {
	if err := auth.Authorize(ctx, auth.ListPayments); err != nil {
		return nil, err
	}
	return s.list(ctx, after, first, before, last, orderBy, where)
}

// ListAll lists every merchant's payments as List lists one merchant's, for platform staff.
func (s *Service) ListAll(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.PaymentOrder, where *ent.PaymentWhereInput) (*ent.PaymentConnection, error) {
	if err := auth.Authorize(ctx, auth.ListAllPayments); err != nil {
		return nil, err
	}
	return s.list(tenant.System(ctx), after, first, before, last, orderBy, where)
}

// list reads a page of the payments ctx may see.
func (s *Service) list(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.PaymentOrder, where *ent.PaymentWhereInput) (*ent.PaymentConnection, error) {
	first, err := paging.CheckPage(first, last)
	if err != nil {
		return nil, err
	}
	if err := paging.CheckFilter(where); err != nil {
		return nil, err
	}
	if err := amountsNeedCurrency(where, false); err != nil {
		return nil, err
	}
	upperCurrencies(where)
	if orderBy == nil {
		orderBy = NewestFirst
	}
	if err := cursorFits(after, orderBy, "after"); err != nil {
		return nil, err
	}
	if err := cursorFits(before, orderBy, "before"); err != nil {
		return nil, err
	}
	return s.client.Payment.Query().Paginate(ctx, after, first, before, last,
		ent.WithPaymentOrder(orderBy), ent.WithPaymentFilter(where.Filter))
}

// amountsNeedCurrency refuses an amount filter, at any depth of where, that neither its own
// filter nor an enclosing one pins to one currency: minor units mean something only within one.
func amountsNeedCurrency(where *ent.PaymentWhereInput, currencyPinned bool) error {
	if where == nil {
		return nil
	}
	currencyPinned = currencyPinned || where.Currency != nil
	filtersAmount := where.Amount != nil || where.AmountNEQ != nil || len(where.AmountIn) > 0 || len(where.AmountNotIn) > 0 ||
		where.AmountGT != nil || where.AmountGTE != nil || where.AmountLT != nil || where.AmountLTE != nil
	if filtersAmount && !currencyPinned {
		return apierror.ForParam(apierror.MissingField, "where.currency", "amount filters are in minor units of one currency: give currency too")
	}
	nested := append([]*ent.PaymentWhereInput{where.Not}, where.Or...)
	for _, inner := range append(nested, where.And...) {
		if err := amountsNeedCurrency(inner, currencyPinned); err != nil {
			return err
		}
	}
	return nil
}

// upperCurrencies makes the currency filters of where, at any depth, match the upper-case codes
// stored, since currency codes are case-insensitive in.
func upperCurrencies(where *ent.PaymentWhereInput) {
	if where == nil {
		return
	}
	for _, code := range []*string{where.Currency, where.CurrencyNEQ, where.CurrencyGT, where.CurrencyGTE,
		where.CurrencyLT, where.CurrencyLTE, where.CurrencyContains, where.CurrencyHasPrefix, where.CurrencyHasSuffix} {
		if code != nil {
			*code = strings.ToUpper(*code)
		}
	}
	for _, codes := range [][]string{where.CurrencyIn, where.CurrencyNotIn} {
		for i := range codes {
			codes[i] = strings.ToUpper(codes[i])
		}
	}
	upperCurrencies(where.Not)
	for _, inner := range append(where.Or, where.And...) {
		upperCurrencies(inner)
	}
}

// cursorFits refuses a cursor taken under another order: its value would be compared with the
// wrong column.
func cursorFits(cursor *ent.Cursor, orderBy *ent.PaymentOrder, param string) error {
	if cursor == nil {
		return nil
	}
	var fits bool
	switch {
	case orderBy == nil || orderBy.Field == nil:
		fits = cursor.Value == nil
	case orderBy.Field.String() == ent.PaymentOrderFieldCreatedAt.String():
		_, fits = cursor.Value.(time.Time)
	default: // amount
		switch cursor.Value.(type) {
		case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
			fits = true
		}
	}
	if !fits {
		return apierror.ForParam(apierror.InvalidRequest, param, "the cursor belongs to another order of the list")
	}
	return nil
}

// NewestFirst orders payments as both surfaces list them unless told otherwise: created_at, then
// id, descending.
var NewestFirst = &ent.PaymentOrder{Direction: entgql.OrderDirectionDesc, Field: ent.PaymentOrderFieldCreatedAt}

// CursorAt returns the cursor of the payment with the given id under NewestFirst, for REST's
// starting_after and ending_before.
func (s *Service) CursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListPayments); err != nil {
		return nil, err
	}
	p, err := s.client.Payment.Query().Where(payment.ID(id)).Select(payment.FieldCreatedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no payment has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: p.CreatedAt}, nil
}
