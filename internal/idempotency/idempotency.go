// Package idempotency makes retried mutations safe, with the semantics of Stripe's idempotency
// keys and the IETF Idempotency-Key draft: a key names one call of one operation by one principal.
// A retry with the same key and the same input gets that call's outcome instead of running again,
// for 24 hours, whichever surface (REST or GraphQL) either came by; the same key with other input,
// or while the first call still runs, is refused.
//
// The services use it in their own transactions: a call claims its key in the transaction that
// writes what it makes, and settles it in the transaction that records the outcome. So a call
// refused before it wrote anything holds no key, and one that wrote holds it until its outcome is
// known; nothing depends on how an error is formatted or which HTTP status it becomes.
package idempotency

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/tenant"
)

const (
	// TTL is how long an outcome is replayed.
	TTL = 24 * time.Hour
	// MaxKeyLength bounds a key.
	MaxKeyLength = 255
)

// Key is one keyed call: whose, the client's key, and a fingerprint of the operation and input.
type Key struct {
	Principal   string
	Value       string
	Fingerprint string
}

// Outcome is how an earlier call with a key ended: the resource it made, or the error it ended
// with (the resource may then exist, its outcome unknown).
type Outcome struct {
	ResourceID string
	Err        *apierror.Error
}

// ErrTaken means another call holds the key or has settled it: roll back, then ask Previous.
var ErrTaken = errors.New("the idempotency key is taken")

// Store keeps keys in the database, where every server sees them.
type Store struct {
	client *ent.Client
	// secret keys the fingerprints: an input holds a card number and CVC, and a plain hash of it
	// could be brute-forced back to them from the other stored fields.
	secret []byte
	now    func() time.Time
}

// NewStore returns the store. The fingerprint key is derived from secret, so the secret can be
// one that serves another purpose too.
func NewStore(client *ent.Client, secret []byte, now func() time.Time) *Store {
	derive := hmac.New(sha256.New, secret)
	derive.Write([]byte("paygate idempotency fingerprint"))
	return &Store{client: client, secret: derive.Sum(nil), now: now}
}

// For returns the key of a call of op with input by the request's principal, or nil when the
// client sent none. input is the call's meaning, as the operation's service reads it, so the same
// request over either surface has one fingerprint. An empty or unprintable key is refused.
func (s *Store) For(ctx context.Context, op auth.Operation, key *string, input any) (*Key, error) {
	if key == nil {
		return nil, nil
	}
	if !validKey(*key) {
		return nil, apierror.ForParam(apierror.InvalidRequest, "idempotency_key",
			fmt.Sprintf("an idempotency key has 1 to %d printable ASCII characters; send none to send no key", MaxKeyLength))
	}
	principal, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return nil, apierror.New(apierror.Unauthenticated, "an idempotency key needs credentials")
	}
	meaning, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, s.secret)
	fmt.Fprintf(h, "%d:%s", len(op.Name), op.Name)
	h.Write(meaning)
	// Keys are the user's, as an account's are at Stripe: a request retried through another of
	// the user's credentials (a new token, one of their API keys) replays, not repeats.
	return &Key{Principal: principal.UserID, Value: *key, Fingerprint: hex.EncodeToString(h.Sum(nil))}, nil
}

func validKey(key string) bool {
	if key == "" || len(key) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// Claim records within tx that k's call is making resourceID. It returns ErrTaken when the key
// exists: the database's unique index settles a race between servers, and on PostgreSQL a claim
// racing an uncommitted one waits for it, so exactly one call claims a key. The index's refusal
// is the insert's own error on either database (ent.IsConstraintError).
func (s *Store) Claim(ctx context.Context, tx *ent.Tx, k *Key, resourceID string) error {
	err := s.claim(tx.IdempotencyKey, k, resourceID).Exec(ctx)
	if ent.IsConstraintError(err) {
		return ErrTaken
	}
	return err
}

// ClaimStatement is Claim's insert, rendered for the caller to run with the rows of resourceID
// (database.DB.ExecTogether); the unique index's refusal of it is a claim refused.
func (s *Store) ClaimStatement(ctx context.Context, k *Key, resourceID string) (ent.Statement, error) {
	_, statement, err := s.claim(s.client.IdempotencyKey, k, resourceID).InsertStatement(ctx)
	return statement, err
}

func (s *Store) claim(keys *ent.IdempotencyKeyClient, k *Key, resourceID string) *ent.IdempotencyKeyCreate {
	now := s.now()
	return keys.Create().
		SetPrincipal(k.Principal).SetKey(k.Value).SetRequestHash(k.Fingerprint).SetResourceID(resourceID).
		SetExpiresAt(now.Add(TTL)).SetCreatedAt(now)
}

// Settle records within tx that k's call ended with err (nil: it made its resource).
func (s *Store) Settle(ctx context.Context, tx *ent.Tx, k *Key, err error) error {
	return settle(ctx, tx.IdempotencyKey, s.now(), k, err)
}

// SettleAlone is Settle in a transaction of its own, for a call whose last transaction failed or
// that never reached it: it is best kept, so a retry replays the error instead of waiting for the
// key to expire. It goes ahead when the request has been cancelled.
func (s *Store) SettleAlone(ctx context.Context, k *Key, err error) error {
	return settle(context.WithoutCancel(ctx), s.client.IdempotencyKey, s.now(), k, err)
}

func settle(ctx context.Context, keys *ent.IdempotencyKeyClient, now time.Time, k *Key, outcome error) error {
	update := keys.Update().
		Where(idempotencykey.PrincipalEQ(k.Principal), idempotencykey.KeyEQ(k.Value), idempotencykey.SettledAtIsNil()).
		SetSettledAt(now)
	if outcome != nil {
		apiErr := apierror.From(outcome)
		update.SetErrorCode(string(apiErr.Code)).SetErrorMessage(apiErr.Message).SetErrorParam(apiErr.Param)
	}
	return update.Exec(ctx)
}

// Resolve makes the calls that made resourceID and ended in doubt answer with the resource, as it
// is now, from now on: calls that ended in an internal error (a refund whose provider's answer
// was lost, a call before payments in doubt were answered 202) or that never ended (their server
// stopped). The payments service calls it, within tx, whenever it records what became of a
// payment (a create's own answer among them, which this settles with the create's key), so a
// retry with the key stops answering the error, or 409.
func (s *Store) Resolve(ctx context.Context, tx *ent.Tx, resourceID string) error {
	return s.Resolving(tx.IdempotencyKey, resourceID).Exec(ctx)
}

// Resolving is Resolve's update, on keys, for a caller that sends it with other statements itself
// (database.DB.ExecChecked). Any number of keys may be resolved by it, none among them.
func (s *Store) Resolving(keys *ent.IdempotencyKeyClient, resourceID string) *ent.IdempotencyKeyUpdate {
	return keys.Update().
		Where(idempotencykey.ResourceID(resourceID),
			idempotencykey.Or(idempotencykey.ErrorCode(string(apierror.Internal)), idempotencykey.SettledAtIsNil())).
		ClearErrorCode().ClearErrorMessage().ClearErrorParam().SetSettledAt(s.now())
}

// Previous returns how the earlier call with k ended, and marks ctx's replay watch. It refuses a
// key whose call is still running (idempotency_key_in_use) or had another operation or input
// (idempotency_key_reused), and reports found false when there is no earlier call, or only one
// whose replay window has passed, which it deletes so the key can be claimed afresh.
func (s *Store) Previous(ctx context.Context, k *Key) (outcome Outcome, found bool, err error) {
	earlier, err := s.client.IdempotencyKey.Query().
		Where(idempotencykey.PrincipalEQ(k.Principal), idempotencykey.KeyEQ(k.Value)).Only(ctx)
	if ent.IsNotFound(err) {
		return Outcome{}, false, nil
	}
	if err != nil {
		return Outcome{}, false, err
	}
	now := s.now()
	switch {
	case !now.Before(earlier.ExpiresAt):
		_, err := s.client.IdempotencyKey.Delete().
			Where(idempotencykey.ID(earlier.ID), idempotencykey.ExpiresAtLTE(now)).Exec(ctx)
		return Outcome{}, false, err
	case earlier.ResourceID == nil:
		// Stored before keys named their call's resource, with a fingerprint of another form that
		// no request matches now: telling its retry to use a new key could charge twice, so it
		// waits until the key expires.
		return Outcome{}, false, apierror.New(apierror.IdempotencyKeyInUse, "a request with this idempotency key is still running; retry later")
	case earlier.RequestHash != k.Fingerprint:
		return Outcome{}, false, apierror.New(apierror.IdempotencyKeyReused, "this idempotency key was used with another request; use a new key")
	case earlier.SettledAt == nil:
		// Still held. A key whose call died with its server stays held until it expires: running
		// the call again could charge twice, and answering 409 never does.
		return Outcome{}, false, apierror.New(apierror.IdempotencyKeyInUse, "a request with this idempotency key is still running; retry later")
	}
	outcome.ResourceID = *earlier.ResourceID
	if earlier.ErrorCode != nil {
		outcome.Err = &apierror.Error{Code: apierror.Code(*earlier.ErrorCode), Message: deref(earlier.ErrorMessage), Param: deref(earlier.ErrorParam)}
	}
	if watch, ok := ctx.Value(replayWatchKey{}).(*atomic.Bool); ok {
		watch.Store(true)
	}
	return outcome, true, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Purge deletes the keys whose replay window has passed.
func (s *Store) Purge(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	return s.client.IdempotencyKey.Delete().Where(idempotencykey.ExpiresAtLTE(s.now())).Exec(ctx)
}

type replayWatchKey struct{}

// WatchReplays returns ctx with a watch that Previous marks when a call answers with an earlier
// call's outcome, and a function that tells whether it did: each surface says so its own way
// (REST's Idempotent-Replayed header, GraphQL's extensions.idempotentReplayed).
func WatchReplays(ctx context.Context) (context.Context, func() bool) {
	watch := new(atomic.Bool)
	return context.WithValue(ctx, replayWatchKey{}, watch), watch.Load
}
