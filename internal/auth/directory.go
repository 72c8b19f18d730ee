package auth

import (
	"context"
	"sync"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/merchant"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/tenant"
)

// directoryFullReadEvery is how often the directory reads every user rather than those changed
// since it last looked: a user deleted from the database leaves no changed row to read.
const directoryFullReadEvery = time.Minute

// UserDirectory is this server's copy of every user's role, merchant and whether they are
// enabled, and of every merchant's standing, so that each request's token or key is checked
// against its user and merchant without a database round trip. A change made here is in force
// here at once; one made on another server, once Load has looked (every second), or at once when
// the user or merchant is not in the copy yet.
type UserDirectory struct {
	client *ent.Client
	now    func() time.Time
	// changes is told of each change of a user's or merchant's standing.
	changes *credentialChanges

	mu            sync.RWMutex
	users         map[string]userStanding
	merchants     map[string]merchantStanding
	seen          time.Time // the newest change of a user read
	merchantsSeen time.Time // the newest change of a merchant read
	fullRead      time.Time // when every user and merchant was last read
}

// userStanding is what a request's credentials are checked against.
type userStanding struct {
	role     string
	disabled bool
	merchant string
	platform bool
	// updated is the user's updated_at: of two reads of one user, the later change wins.
	updated time.Time
}

// sameAs reports whether a credential checked against s is still good against o.
func (s userStanding) sameAs(o userStanding) bool {
	return s.role == o.role && s.disabled == o.disabled && s.merchant == o.merchant && s.platform == o.platform
}

// merchantStanding is whether a merchant's credentials work, and whether platform staff may act
// for it.
type merchantStanding struct {
	disabled bool
	updated  time.Time
}

// NewUserDirectory returns an empty directory; Load fills it.
func NewUserDirectory(client *ent.Client, now func() time.Time) *UserDirectory {
	return &UserDirectory{client: client, now: now, users: map[string]userStanding{}, merchants: map[string]merchantStanding{}}
}

// standing returns the user's standing, or the error that refuses their credentials:
// token_invalid for a user who does not exist (credentials Paygate never issued), token_revoked
// for a disabled one or one whose merchant is disabled. A user or merchant not in the directory is
// read, after pay (when not nil) allows it.
func (d *UserDirectory) standing(ctx context.Context, id string, pay func() error) (userStanding, error) {
	d.mu.RLock()
	s, ok := d.users[id]
	d.mu.RUnlock()
	if !ok {
		// Made on another server since the last look, or never made: only a leaked signing key
		// makes the latter, so this read is not on any ordinary request's path.
		if err := payFor(pay); err != nil {
			return userStanding{}, err
		}
		u, err := d.client.User.Get(tenant.System(ctx), id)
		if ent.IsNotFound(err) {
			return userStanding{}, apierror.New(apierror.TokenInvalid, "the credentials name a user who does not exist")
		}
		if err != nil {
			return userStanding{}, err
		}
		s = d.remember(u)
	}
	if s.disabled {
		return userStanding{}, ErrUserDisabled
	}
	active, err := d.merchantActive(ctx, s.merchant, pay)
	if err != nil {
		return userStanding{}, err
	}
	if !active {
		return userStanding{}, ErrMerchantDisabled
	}
	return s, nil
}

// merchantActive reports whether the merchant exists and is not disabled; one not in the
// directory is read, after pay (when not nil) allows it.
func (d *UserDirectory) merchantActive(ctx context.Context, id string, pay func() error) (bool, error) {
	d.mu.RLock()
	m, ok := d.merchants[id]
	d.mu.RUnlock()
	if !ok {
		if err := payFor(pay); err != nil {
			return false, err
		}
		found, err := d.client.Merchant.Get(ctx, id)
		if ent.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		m = d.rememberMerchant(found)
	}
	return !m.disabled, nil
}

// remember puts a user as read or written here in the copy.
func (d *UserDirectory) remember(u *ent.User) userStanding {
	s := standingOf(u)
	d.mu.Lock()
	known, ok := d.users[u.ID]
	if ok && known.updated.After(s.updated) {
		d.mu.Unlock()
		return known
	}
	d.users[u.ID] = s
	d.mu.Unlock()
	if ok && !known.sameAs(s) {
		d.changes.tell()
	}
	return s
}

func standingOf(u *ent.User) userStanding {
	return userStanding{role: string(u.Role), disabled: u.Disabled, merchant: u.MerchantID, platform: u.Platform, updated: u.UpdatedAt}
}

// rememberMerchant puts a merchant as read or written here in the copy.
func (d *UserDirectory) rememberMerchant(m *ent.Merchant) merchantStanding {
	s := merchantStanding{disabled: m.Status == MerchantDisabled, updated: m.UpdatedAt}
	d.mu.Lock()
	known, ok := d.merchants[m.ID]
	if ok && known.updated.After(s.updated) {
		d.mu.Unlock()
		return known
	}
	d.merchants[m.ID] = s
	d.mu.Unlock()
	if ok && known.disabled != s.disabled {
		d.changes.tell()
	}
	return s
}

// Load reads the users and merchants changed since the last look (all of them, once a minute).
func (d *UserDirectory) Load(ctx context.Context) error {
	ctx = tenant.System(ctx)
	now := d.now()
	d.mu.RLock()
	full := now.Sub(d.fullRead) >= directoryFullReadEvery
	since := d.seen.Add(-revocationOverlap)
	d.mu.RUnlock()
	if err := d.loadMerchants(ctx, full); err != nil {
		return err
	}
	query := d.client.User.Query().Select(user.FieldID, user.FieldRole, user.FieldDisabled, user.FieldMerchantID, user.FieldPlatform, user.FieldUpdatedAt)
	if !full {
		// A change committed on another server after one made later, with an earlier time, is
		// still read.
		query.Where(user.UpdatedAtGTE(since))
	}
	users, err := query.All(ctx)
	if err != nil {
		return err
	}
	changed := false
	defer func() {
		if changed {
			d.changes.tell()
		}
	}()
	d.mu.Lock()
	defer d.mu.Unlock()
	read := make(map[string]userStanding, len(users))
	for _, u := range users {
		read[u.ID] = standingOf(u)
		if u.UpdatedAt.After(d.seen) {
			d.seen = u.UpdatedAt
		}
	}
	if !full {
		for id, fresh := range read {
			if known, ok := d.users[id]; !ok || !known.updated.After(fresh.updated) {
				d.users[id] = fresh
				changed = changed || ok && !known.sameAs(fresh)
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
		} else {
			changed = changed || !ok || !known.sameAs(fresh)
		}
	}
	d.users = read
	d.fullRead = now
	return nil
}

// loadMerchants reads the merchants changed since the last look, or all of them. Merchants are
// never deleted, so a full read only catches what the overlap missed.
func (d *UserDirectory) loadMerchants(ctx context.Context, full bool) error {
	d.mu.RLock()
	since := d.merchantsSeen.Add(-revocationOverlap)
	d.mu.RUnlock()
	query := d.client.Merchant.Query().Select(merchant.FieldID, merchant.FieldStatus, merchant.FieldUpdatedAt)
	if !full {
		query.Where(merchant.UpdatedAtGTE(since))
	}
	merchants, err := query.All(ctx)
	if err != nil {
		return err
	}
	for _, m := range merchants {
		d.rememberMerchant(m)
		d.mu.Lock()
		if m.UpdatedAt.After(d.merchantsSeen) {
			d.merchantsSeen = m.UpdatedAt
		}
		d.mu.Unlock()
	}
	return nil
}
