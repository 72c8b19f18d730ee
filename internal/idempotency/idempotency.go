// Package idempotency makes retried mutations safe (Stripe's and the IETF Idempotency-Key draft's
// semantics): the first response to a key is stored and replayed for 24 hours; the same key with
// another request, or while the first still runs, is refused. One key space per principal.
package idempotency

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/apierror"
)

const (
	// TTL is how long a response is replayed.
	TTL = 24 * time.Hour
	// MaxKeyLength bounds a key.
	MaxKeyLength = 255
)

// Response is a stored answer: the HTTP status and body it was sent with.
type Response struct {
	Status int
	Body   []byte
}

// Store keeps keys and responses in the database, where every server sees them.
type Store struct {
	client *ent.Client
	// secret keys the request fingerprints: a request body holds a card number and CVC, and a
	// plain hash of it could be brute-forced back to them from the other stored fields.
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

// Fingerprint identifies a request: a keyed hash of its parts (surface, route, body). A JSON
// body is compared by meaning, so key order and spacing do not make it another request.
func (s *Store) Fingerprint(parts ...[]byte) string {
	h := hmac.New(sha256.New, s.secret)
	for _, part := range parts {
		var value any
		dec := json.NewDecoder(bytes.NewReader(part))
		dec.UseNumber()
		if dec.Decode(&value) == nil && !dec.More() {
			part, _ = json.Marshal(value)
		}
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Begin claims key for the principal's request. It returns a response to replay, or nil when
// the caller runs the request and then calls Finish (or Release). The database's unique index
// settles a race between two servers: exactly one claims the key.
func (s *Store) Begin(ctx context.Context, principal, key, fingerprint string) (*Response, error) {
	if !validKey(key) {
		return nil, apierror.ForParam(apierror.InvalidRequest, "idempotency_key",
			fmt.Sprintf("an idempotency key has 1 to %d printable ASCII characters", MaxKeyLength))
	}
	now := s.now()
	err := s.client.IdempotencyKey.Create().
		SetPrincipal(principal).SetKey(key).SetRequestHash(fingerprint).
		SetLockedAt(now).SetExpiresAt(now.Add(TTL)).SetCreatedAt(now).
		Exec(ctx)
	if err == nil {
		return nil, nil
	}
	if !ent.IsConstraintError(err) {
		return nil, err
	}
	existing, err := s.client.IdempotencyKey.Query().
		Where(idempotencykey.PrincipalEQ(principal), idempotencykey.KeyEQ(key)).Only(ctx)
	if ent.IsNotFound(err) { // released or purged in between: try once more
		return s.Begin(ctx, principal, key, fingerprint)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !now.Before(existing.ExpiresAt):
		if _, err := s.client.IdempotencyKey.Delete().Where(idempotencykey.ID(existing.ID), idempotencykey.ExpiresAtLTE(now)).Exec(ctx); err != nil {
			return nil, err
		}
		return s.Begin(ctx, principal, key, fingerprint)
	case existing.RequestHash != fingerprint:
		return nil, apierror.New(apierror.IdempotencyKeyReused, "this idempotency key was used with another request; use a new key")
	case existing.ResponseStatus != nil:
		return &Response{Status: *existing.ResponseStatus, Body: *existing.ResponseBody}, nil
	}
	// Still held. A key whose request died with its server stays held until it expires: running
	// the request again could charge twice, and answering 409 never does.
	return nil, apierror.New(apierror.IdempotencyKeyInUse, "a request with this idempotency key is still running; retry later")
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

// Keeps reports whether a response with this status is stored for replay. A request refused
// before it did anything (bad input, no permission, a conflict) is not: the key is released so
// that a corrected retry runs. A payment that was attempted (201, 402, 502) and any server error
// (the outcome may be unknown) are kept, so a retry never runs them twice. The services answer
// every failure after a provider call as a server error for this reason.
func Keeps(status int) bool {
	return status < http.StatusBadRequest || status == http.StatusPaymentRequired || status >= http.StatusInternalServerError
}

// Finish stores the response of the request holding key, or releases the key when Keeps says
// the response is not to be replayed.
func (s *Store) Finish(ctx context.Context, principal, key string, resp Response) error {
	ctx = context.WithoutCancel(ctx)
	if !Keeps(resp.Status) {
		return s.Release(ctx, principal, key)
	}
	return s.client.IdempotencyKey.Update().
		Where(idempotencykey.PrincipalEQ(principal), idempotencykey.KeyEQ(key), idempotencykey.ResponseStatusIsNil()).
		SetResponseStatus(resp.Status).SetResponseBody(resp.Body).ClearLockedAt().
		Exec(ctx)
}

// Release frees the key of the request holding it, which did nothing, so that a retry runs.
func (s *Store) Release(ctx context.Context, principal, key string) error {
	_, err := s.client.IdempotencyKey.Delete().
		Where(idempotencykey.PrincipalEQ(principal), idempotencykey.KeyEQ(key), idempotencykey.ResponseStatusIsNil()).
		Exec(context.WithoutCancel(ctx))
	return err
}

// Purge deletes the keys whose replay window has passed.
func (s *Store) Purge(ctx context.Context) (int, error) {
	return s.client.IdempotencyKey.Delete().Where(idempotencykey.ExpiresAtLTE(s.now())).Exec(ctx)
}
