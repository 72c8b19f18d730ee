package auth

import (
	"context"
	"sync"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
)

// directoryFullReadEvery is how often the directory reads every user rather than those changed
// since it last looked: a user deleted from the database leaves no changed row to read.
const directoryFullReadEvery = time.Minute

// UserDirectory is this server's copy of every user's role and whether they are enabled, so that
// each request's token or key is checked against its user without a database round trip. A
// change made here is in force here at once; one made on another server, once Load has looked
// (every second), or at once when the user is not in the copy yet.
type UserDirectory struct {
	client *ent.Client
	now    func() time.Time

	mu       sync.RWMutex
	users    map[string]userStanding
	seen     time.Time // the newest change read
	fullRead time.Time // when every user was last read
}

// userStanding is what a request's credentials are checked against.
type userStanding struct {
	role     string
	disabled bool
	// updated is the user's updated_at: of two reads of one user, the later change wins.
	updated time.Time
}

// NewUserDirectory returns an empty directory; Load fills it.
func NewUserDirectory(client *ent.Client, now func() time.Time) *UserDirectory {
	return &UserDirectory{client: client, now: now, users: map[string]userStanding{}}
}

// standing returns the user's role, or the error that refuses their credentials: token_invalid
// for a user who does not exist (credentials Paygate never issued), token_revoked for a disabled
// one.
func (d *UserDirectory) standing(ctx context.Context, id string) (string, error) {
	d.mu.RLock()
	s, ok := d.users[id]
	d.mu.RUnlock()
	if !ok {
		// Made on another server since the last look, or never made: only a leaked signing key
		// makes the latter, so this read is not on any ordinary request's path.
		u, err := d.client.User.Get(ctx, id)
		if ent.IsNotFound(err) {
			return "", apierror.New(apierror.TokenInvalid, "the credentials name a user who does not exist")
		}
		if err != nil {
			return "", err
		}
		s = d.remember(u)
	}
	if s.disabled {
		return "", apierror.New(apierror.TokenRevoked, "the credentials' user is disabled")
	}
	return s.role, nil
}

// remember puts a user as read or written here in the copy.
func (d *UserDirectory) remember(u *ent.User) userStanding {
	s := userStanding{role: string(u.Role), disabled: u.Disabled, updated: u.UpdatedAt}
	d.mu.Lock()
	defer d.mu.Unlock()
	if known, ok := d.users[u.ID]; ok && known.updated.After(s.updated) {
		return known
	}
	d.users[u.ID] = s
	return s
}

// Load reads the users changed since the last look (every user, once a minute).
func (d *UserDirectory) Load(ctx context.Context) error {
	now := d.now()
	d.mu.RLock()
	full := now.Sub(d.fullRead) >= directoryFullReadEvery
	since := d.seen.Add(-revocationOverlap)
	d.mu.RUnlock()
	query := d.client.User.Query().Select(user.FieldID, user.FieldRole, user.FieldDisabled, user.FieldUpdatedAt)
	if !full {
		// A change committed on another server after one made later, with an earlier time, is
		// still read.
		query.Where(user.UpdatedAtGTE(since))
	}
	users, err := query.All(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	read := make(map[string]userStanding, len(users))
	for _, u := range users {
		read[u.ID] = userStanding{role: string(u.Role), disabled: u.Disabled, updated: u.UpdatedAt}
		if u.UpdatedAt.After(d.seen) {
			d.seen = u.UpdatedAt
		}
	}
	if !full {
		for id, fresh := range read {
			if known, ok := d.users[id]; !ok || !known.updated.After(fresh.updated) {
				d.users[id] = fresh
			}
		}
		return nil
	}
	for id, known := range d.users {
		fresh, ok := read[id]
		// A user changed or made here while the read was under way is newer than what it read;
		// any other user it did not read is gone.
		if ok && known.updated.After(fresh.updated) || !ok && known.updated.After(now.Add(-revocationOverlap)) {
			read[id] = known
		}
	}
	d.users = read
	d.fullRead = now
	return nil
}
