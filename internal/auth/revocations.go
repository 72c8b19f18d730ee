package auth

import (
	"context"
	"sync"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/revocation"
)

// revocationOverlap is how far back each look at the revocations reaches before the newest one
// seen: a revocation made on another server can commit after one made later, with an earlier
// time, and would otherwise be missed.
const revocationOverlap = 5 * time.Second

// Revocations is this server's copy of what is revoked (sessions, single access tokens),
// so every request is checked without a database round trip. A revocation made here is in force
// here at once; one made on another server, once Load has looked (every second).
type Revocations struct {
	client *ent.Client
	now    func() time.Time
	// changes is told of each revocation put in force.
	changes *credentialChanges

	mu      sync.RWMutex
	revoked map[string]time.Time // what is revoked, until when it matters
	seen    time.Time            // the newest revocation read
}

// NewRevocations returns an empty copy; Load fills it.
func NewRevocations(client *ent.Client, now func() time.Time) *Revocations {
	return &Revocations{client: client, now: now, revoked: map[string]time.Time{}}
}

// Revoked reports whether any of subjects (a token's session, its own id) is revoked.
func (r *Revocations) Revoked(subjects ...string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, subject := range subjects {
		if _, ok := r.revoked[subject]; ok && subject != "" {
			return true
		}
	}
	return false
}

// revoke records, through client (a transaction's, to revoke with what caused it), that subject
// is revoked until until. The returned inForce puts it in this copy: call it once the revocation
// is committed.
func (r *Revocations) revoke(ctx context.Context, client *ent.Client, subject string, until time.Time) (inForce func(), err error) {
	if err := client.Revocation.Create().SetSubject(subject).SetUntil(until).SetCreatedAt(r.now()).Exec(ctx); err != nil {
		return nil, err
	}
	return func() { r.remember(subject, until) }, nil
}

// remember puts a revocation in this copy.
func (r *Revocations) remember(subject string, until time.Time) {
	r.mu.Lock()
	revoked := until.After(r.revoked[subject])
	if revoked {
		r.revoked[subject] = until
	}
	r.mu.Unlock()
	if revoked {
		r.changes.tell()
	}
}

// Load reads the revocations made since the last look, and forgets those past their end.
func (r *Revocations) Load(ctx context.Context) error {
	r.mu.RLock()
	since := r.seen.Add(-revocationOverlap)
	r.mu.RUnlock()
	rows, err := r.client.Revocation.Query().
		Where(revocation.CreatedAtGTE(since), revocation.UntilGT(r.now())).All(ctx)
	if err != nil {
		return err
	}
	now := r.now()
	revoked := false
	defer func() {
		if revoked {
			r.changes.tell()
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range rows {
		if row.Until.After(r.revoked[row.Subject]) {
			r.revoked[row.Subject] = row.Until
			revoked = true
		}
		if row.CreatedAt.After(r.seen) {
			r.seen = row.CreatedAt
		}
	}
	for subject, until := range r.revoked {
		if !until.After(now) {
			delete(r.revoked, subject)
		}
	}
	return nil
}

// Purge deletes the revocations past their end.
func (r *Revocations) Purge(ctx context.Context) (int, error) {
	return r.client.Revocation.Delete().Where(revocation.UntilLTE(r.now())).Exec(ctx)
}
