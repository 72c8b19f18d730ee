// Package sandboxstore keeps a provider sandbox's charges, refunds and idempotent answers in
// Paygate's database, so that every Paygate server over one database sees one sandbox, as they
// would see one real provider.
package sandboxstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxanswer"
	"github.com/paygate/paygate/ent/sandboxobject"
)

// Store is one sandbox's state.
type Store struct {
	client   *ent.Client
	provider string
	now      func() time.Time
}

// New returns the state of the sandbox of provider.
func New(client *ent.Client, provider string, now func() time.Time) *Store {
	return &Store{client: client, provider: provider, now: now}
}

// Now is the sandbox's clock.
func (s *Store) Now() time.Time { return s.now() }

// Answer is a sandbox's answer: an HTTP status and a JSON body.
type Answer struct {
	Status int
	Body   []byte
}

// Answer answers request, kept under key (none when key is ""): a key answered before gets that
// answer again (replayed), or nothing when it came with another request (reused). Otherwise run
// answers, in a transaction with the keeping of its answer, so two servers answering one key at
// once leave one answer and the effects of one run. An answer of 5xx is not kept and its run's
// writes are undone: the sandbox failed, and a retry runs afresh.
func (s *Store) Answer(ctx context.Context, key, request string, run func(ctx context.Context, tx *ent.Tx) (Answer, error)) (answer Answer, replayed, reused bool, err error) {
	hash := sha256.Sum256([]byte(request))
	requestHash := hex.EncodeToString(hash[:])
	if key != "" {
		if answer, replayed, reused, found, err := s.kept(ctx, key, requestHash); err != nil || found {
			return answer, replayed, reused, err
		}
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return Answer{}, false, false, err
	}
	defer tx.Rollback()
	answer, err = run(ctx, tx)
	if err != nil || answer.Status >= 500 {
		return answer, false, false, err
	}
	if key != "" {
		err = tx.SandboxAnswer.Create().SetProvider(s.provider).SetKey(key).SetRequest(requestHash).
			SetStatus(answer.Status).SetBody(answer.Body).SetCreatedAt(s.now()).Exec(ctx)
		if ent.IsConstraintError(err) {
			// Another server answered the key first: its answer stands, and this run is undone.
			tx.Rollback()
			answer, replayed, reused, _, err := s.kept(ctx, key, requestHash)
			return answer, replayed, reused, err
		}
		if err != nil {
			return Answer{}, false, false, err
		}
	}
	return answer, false, false, tx.Commit()
}

func (s *Store) kept(ctx context.Context, key, requestHash string) (answer Answer, replayed, reused, found bool, err error) {
	earlier, err := s.client.SandboxAnswer.Query().
		Where(sandboxanswer.Provider(s.provider), sandboxanswer.Key(key)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return Answer{}, false, false, false, nil
	case err != nil:
		return Answer{}, false, false, false, err
	case earlier.Request != requestHash:
		return Answer{}, false, true, true, nil
	}
	return Answer{Status: earlier.Status, Body: earlier.Body}, true, false, true, nil
}

// Object is a charge or refund as a sandbox records it.
type Object struct {
	ID        string
	Kind      sandboxobject.Kind
	Reference string
	ChargeID  string // a refund's charge
	Amount    int64
	Currency  string
	Status    string
	Body      []byte
}

// Create records a new charge or refund.
func (s *Store) Create(ctx context.Context, tx *ent.Tx, o Object) error {
	create := tx.SandboxObject.Create().SetID(o.ID).SetProvider(s.provider).SetKind(o.Kind).
		SetReference(o.Reference).SetAmount(o.Amount).SetCurrency(o.Currency).SetStatus(o.Status).
		SetBody(o.Body).SetCreatedAt(s.now()).SetUpdatedAt(s.now())
	if o.ChargeID != "" {
		create.SetChargeID(o.ChargeID)
	}
	return create.Exec(ctx)
}

// ErrNotFound means the sandbox has no such object.
var ErrNotFound = errors.New("no such object")

// Get returns the object id of kind, or ErrNotFound.
func (s *Store) Get(ctx context.Context, kind sandboxobject.Kind, id string) (*ent.SandboxObject, error) {
	return s.get(ctx, s.client.SandboxObject, kind, id)
}

// GetIn is Get within tx.
func (s *Store) GetIn(ctx context.Context, tx *ent.Tx, kind sandboxobject.Kind, id string) (*ent.SandboxObject, error) {
	return s.get(ctx, tx.SandboxObject, kind, id)
}

func (s *Store) get(ctx context.Context, objects *ent.SandboxObjectClient, kind sandboxobject.Kind, id string) (*ent.SandboxObject, error) {
	o, err := objects.Query().
		Where(sandboxobject.ID(id), sandboxobject.Provider(s.provider), sandboxobject.KindEQ(kind)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, ErrNotFound
	}
	return o, err
}

// ByReference returns the objects of kind made for Paygate's reference, newest first (as the
// providers list them): limit of them after the first skip.
func (s *Store) ByReference(ctx context.Context, kind sandboxobject.Kind, reference string, skip, limit int) ([]*ent.SandboxObject, error) {
	return s.client.SandboxObject.Query().
		Where(sandboxobject.Provider(s.provider), sandboxobject.Reference(reference), sandboxobject.KindEQ(kind)).
		Order(ent.Desc(sandboxobject.FieldCreatedAt), ent.Desc(sandboxobject.FieldID)).Offset(skip).Limit(limit).All(ctx)
}

// CountByReference is how many objects of kind were made for Paygate's reference.
func (s *Store) CountByReference(ctx context.Context, kind sandboxobject.Kind, reference string) (int, error) {
	return s.client.SandboxObject.Query().
		Where(sandboxobject.Provider(s.provider), sandboxobject.Reference(reference), sandboxobject.KindEQ(kind)).Count(ctx)
}

// ChargeByReference returns the newest charge made for Paygate's payment reference, or ErrNotFound.
func (s *Store) ChargeByReference(ctx context.Context, reference string) (*ent.SandboxObject, error) {
	charges, err := s.ByReference(ctx, sandboxobject.KindCharge, reference, 0, 1)
	if err != nil {
		return nil, err
	}
	if len(charges) == 0 {
		return nil, ErrNotFound
	}
	return charges[0], nil
}

// RefundsIn returns the refunds of a charge within tx, newest first, as Stripe lists them.
func (s *Store) RefundsIn(ctx context.Context, tx *ent.Tx, chargeID string) ([]*ent.SandboxObject, error) {
	return tx.SandboxObject.Query().
		Where(sandboxobject.Provider(s.provider), sandboxobject.ChargeID(chargeID), sandboxobject.KindEQ(sandboxobject.KindRefund)).
		Order(ent.Desc(sandboxobject.FieldCreatedAt), ent.Desc(sandboxobject.FieldID)).All(ctx)
}

// Refunds returns the newest refunds of a charge, at most limit, newest first.
func (s *Store) Refunds(ctx context.Context, chargeID string, limit int) ([]*ent.SandboxObject, error) {
	return s.client.SandboxObject.Query().
		Where(sandboxobject.Provider(s.provider), sandboxobject.ChargeID(chargeID), sandboxobject.KindEQ(sandboxobject.KindRefund)).
		Order(ent.Desc(sandboxobject.FieldCreatedAt), ent.Desc(sandboxobject.FieldID)).Limit(limit).All(ctx)
}

// TakeRefund takes amount from what is left to refund of the charge, if the charge has status
// chargedStatus and that much is left (of what was captured, for a charge captured later); it
// reports whether it did. One statement, so refunds through several servers at once never take
// more than the charge.
func (s *Store) TakeRefund(ctx context.Context, tx *ent.Tx, chargeID, chargedStatus string, amount int64) (bool, error) {
	n, err := tx.SandboxObject.Update().
		Where(sandboxobject.ID(chargeID), sandboxobject.Provider(s.provider), sandboxobject.KindEQ(sandboxobject.KindCharge),
			sandboxobject.Status(chargedStatus),
			func(sel *entsql.Selector) {
				sel.Where(entsql.P(func(b *entsql.Builder) {
					b.WriteString(sel.C(sandboxobject.FieldRefunded)).WriteString(" + ").Arg(amount).
						WriteString(" <= COALESCE(").WriteString(sel.C(sandboxobject.FieldCaptured)).WriteString(", ").
						WriteString(sel.C(sandboxobject.FieldAmount)).WriteString(")")
				}))
			}).
		AddRefunded(amount).SetUpdatedAt(s.now()).Save(ctx)
	return n == 1, err
}

// Settlement is the outcome a sandbox gives a refund it settles.
type Settlement struct {
	Status string // the refund's status once settled
	Body   []byte // its body once settled, as the provider shows it; nil keeps the body it has
	// Failed gives the refund's amount back to what is left to refund of its charge.
	Failed bool
}

// Settled is a refund this server settled: the refund as it was before, its settlement, and when.
type Settled struct {
	Refund     *ent.SandboxObject
	Settlement Settlement
	At         time.Time
}

// settleBatch is how many due refunds are read at a time.
const settleBatch = 100

// SettleDue settles the refunds that have been in status pending for delay or longer on the
// sandbox's clock, oldest first, each with the settlement settle decides. Each is settled in its own
// transaction by an update that requires it to be pending still: a refund another server settled
// first is skipped, so among all the servers over the database each refund is settled once. It
// returns the refunds this server settled, those settled before an error included.
func (s *Store) SettleDue(ctx context.Context, pending string, delay time.Duration, settle func(refund *ent.SandboxObject, at time.Time) Settlement) ([]Settled, error) {
	var settled []Settled
	for {
		now := s.now()
		due, err := s.client.SandboxObject.Query().
			Where(sandboxobject.Provider(s.provider), sandboxobject.KindEQ(sandboxobject.KindRefund),
				sandboxobject.Status(pending), sandboxobject.CreatedAtLTE(now.Add(-delay))).
			Order(ent.Asc(sandboxobject.FieldCreatedAt), ent.Asc(sandboxobject.FieldID)).Limit(settleBatch).All(ctx)
		if err != nil {
			return settled, err
		}
		for _, refund := range due {
			settlement := settle(refund, now)
			won, err := s.settleRefund(ctx, refund, pending, settlement, now)
			if err != nil {
				return settled, err
			}
			if won {
				settled = append(settled, Settled{Refund: refund, Settlement: settlement, At: now})
			}
		}
		if len(due) < settleBatch {
			return settled, nil
		}
	}
}

// settleRefund gives refund its settlement if it is pending still, and reports whether it did.
func (s *Store) settleRefund(ctx context.Context, refund *ent.SandboxObject, pending string, settlement Settlement, now time.Time) (bool, error) {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	update := tx.SandboxObject.Update().
		Where(sandboxobject.ID(refund.ID), sandboxobject.Provider(s.provider), sandboxobject.Status(pending)).
		SetStatus(settlement.Status).SetUpdatedAt(now)
	if settlement.Body != nil {
		update.SetBody(settlement.Body)
	}
	if n, err := update.Save(ctx); err != nil || n == 0 {
		return false, err
	}
	if settlement.Failed {
		if refund.ChargeID == nil {
			return false, fmt.Errorf("sandbox refund %s has no charge", refund.ID)
		}
		n, err := tx.SandboxObject.Update().
			Where(sandboxobject.ID(*refund.ChargeID), sandboxobject.Provider(s.provider), sandboxobject.KindEQ(sandboxobject.KindCharge)).
			AddRefunded(-refund.Amount).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return false, err
		}
		if n != 1 {
			return false, fmt.Errorf("sandbox refund %s: its charge %s is missing", refund.ID, *refund.ChargeID)
		}
	}
	return true, tx.Commit()
}

// SetStatus moves the object id from status from to status to, with body its new look; it reports
// whether it did (not when the object had another status: one statement, so two servers moving
// it at once move it once).
func (s *Store) SetStatus(ctx context.Context, tx *ent.Tx, id, from, to string, body []byte) (bool, error) {
	n, err := tx.SandboxObject.Update().
		Where(sandboxobject.ID(id), sandboxobject.Provider(s.provider), sandboxobject.Status(from)).
		SetStatus(to).SetBody(body).SetUpdatedAt(s.now()).Save(ctx)
	return n == 1, err
}

// Capture moves the charge id from status from to status to, with body its new look, recording
// that amount of it was captured, if it has status from and amount is no more than it holds; it
// reports whether it did. One statement, so two servers capturing at once capture once.
func (s *Store) Capture(ctx context.Context, tx *ent.Tx, id, from, to string, amount int64, body []byte) (bool, error) {
	n, err := tx.SandboxObject.Update().
		Where(sandboxobject.ID(id), sandboxobject.Provider(s.provider), sandboxobject.KindEQ(sandboxobject.KindCharge),
			sandboxobject.Status(from), sandboxobject.AmountGTE(amount)).
		SetStatus(to).SetCaptured(amount).SetBody(body).SetUpdatedAt(s.now()).Save(ctx)
	return n == 1, err
}

// InTx runs f in a transaction, committed when f returns no error.
func (s *Store) InTx(ctx context.Context, f func(tx *ent.Tx) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// OnCommit calls f once tx has committed: what f tells others (a webhook) is then never about
// writes that were undone, nor about an answer that another server's replaced.
func OnCommit(tx *ent.Tx, f func()) {
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				f()
			}
			return err
		})
	})
}

// JSON is the answer of v as JSON with status.
func JSON(status int, v any) Answer {
	body, err := json.Marshal(v)
	if err != nil {
		return Answer{Status: http.StatusInternalServerError}
	}
	return Answer{Status: status, Body: body}
}
