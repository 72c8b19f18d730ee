package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/tenant"
)

const (
	// TestKeyPrefix and LiveKeyPrefix begin the keys of a development and a production server.
	TestKeyPrefix = "pk_test_"
	LiveKeyPrefix = "pk_live_"
	// MaxAPIKeysPerUser bounds the keys in force a user may hold.
	MaxAPIKeysPerUser = 100
	// MaxAPIKeyLifetime is the furthest a key's expiry may be set.
	MaxAPIKeyLifetime = 10 * 365 * 24 * time.Hour

	// keyCacheSize bounds the keys remembered (and the strings remembered as no key) per server.
	keyCacheSize = 10_000
	// keyCacheFor is how long a key read from the database is trusted before it is read again. A
	// revocation reaches other servers sooner, through Revocations, for this long.
	keyCacheFor = time.Minute
	// keyUseRecordedEvery is the precision of last_used_at: a key used constantly costs one write
	// a minute per server.
	keyUseRecordedEvery = time.Minute
	// keyRandomBytes is the randomness of a key: 256 bits, beyond any guessing.
	keyRandomBytes = 32
	// keyShownChars is how much of a key after its prefix is kept to tell keys apart.
	keyShownChars = 8
)

// APIKeys makes, checks and revokes API keys. Checking one is an HMAC and, almost always, a
// look in this server's memory: no password hash and no database round trip per request.
type APIKeys struct {
	client *ent.Client
	secret []byte
	// prefix is TestKeyPrefix or LiveKeyPrefix: a server takes only the keys of its own mode.
	prefix string
	now    func() time.Time

	// known remembers keys by hash, and hashes of no key as nil, for keyCacheFor.
	known *lru.Cache[string, *knownKey]

	mu sync.Mutex
	// used holds the keys used since their last use was written, and when.
	used map[string]time.Time
}

// knownKey is what a request's key is checked against.
type knownKey struct {
	key    *ent.APIKey // nil: no key has this hash
	readAt time.Time
	// usedWritten is the last use recorded, under APIKeys.mu.
	usedWritten time.Time
}

// NewAPIKeys returns the key keeper; secret keys the hash the keys are stored as, and live says
// whether this server makes and takes live keys or test ones.
func NewAPIKeys(client *ent.Client, secret []byte, live bool, now func() time.Time) *APIKeys {
	known, _ := lru.New[string, *knownKey](keyCacheSize) // fails only for a size below 1
	prefix := TestKeyPrefix
	if live {
		prefix = LiveKeyPrefix
	}
	return &APIKeys{client: client, secret: secret, prefix: prefix, now: now, known: known, used: map[string]time.Time{}}
}

// IsAPIKey reports whether a credential is an API key rather than an access token.
func IsAPIKey(credential string) bool { return strings.HasPrefix(credential, "pk_") }

func (k *APIKeys) hash(key string) string {
	mac := hmac.New(sha256.New, k.secret)
	mac.Write([]byte(key))
	return hex.EncodeToString(mac.Sum(nil))
}

// wellFormedKeyLength is the length of every key Paygate makes.
var wellFormedKeyLength = len(TestKeyPrefix) + base64.RawURLEncoding.EncodedLen(keyRandomBytes)

// lookup returns the key with this value, or nil, from memory when it was read lately; else it
// calls pay (when not nil) and reads it.
func (k *APIKeys) lookup(ctx context.Context, value string, pay func() error) (*knownKey, error) {
	hash := k.hash(value)
	now := k.now()
	if known, ok := k.known.Get(hash); ok && now.Sub(known.readAt) < keyCacheFor {
		return known, nil
	}
	if err := payFor(pay); err != nil {
		return nil, err
	}
	// Whose key it is, the key says: the lookup is the server's own.
	key, err := k.client.APIKey.Query().Where(apikey.KeyHash(hash)).Only(tenant.System(ctx))
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	known := &knownKey{key: key, readAt: now}
	if key != nil && key.LastUsedAt != nil {
		known.usedWritten = *key.LastUsedAt
	}
	k.known.Add(hash, known)
	return known, nil
}

// forget drops a key from this server's memory, so its next use reads it again.
func (k *APIKeys) forget(key *ent.APIKey) { k.known.Remove(key.KeyHash) }

// authenticate checks an API key and returns the key it is, for the principal to be made of.
func (k *APIKeys) authenticate(ctx context.Context, value string, revocations *Revocations, pay func() error) (*ent.APIKey, error) {
	switch {
	case len(value) != wellFormedKeyLength || !IsAPIKey(value):
		return nil, apierror.New(apierror.TokenInvalid, "the API key is not valid")
	case !strings.HasPrefix(value, k.prefix):
		return nil, apierror.New(apierror.TokenInvalid, "the API key is for another mode: this server takes "+k.prefix+" keys")
	}
	known, err := k.lookup(ctx, value, pay)
	if err != nil {
		return nil, err
	}
	key := known.key
	now := k.now()
	switch {
	case key == nil:
		return nil, apierror.New(apierror.TokenInvalid, "the API key is not valid")
	case key.RevokedAt != nil, revocations != nil && revocations.Revoked(key.ID):
		return nil, apierror.New(apierror.TokenRevoked, "the API key has been revoked")
	case key.ExpiresAt != nil && !now.Before(*key.ExpiresAt):
		return nil, apierror.New(apierror.TokenExpired, "the API key has expired")
	}
	k.mu.Lock()
	if now.Sub(known.usedWritten) >= keyUseRecordedEvery {
		known.usedWritten = now
		k.used[key.ID] = now
	}
	k.mu.Unlock()
	return key, nil
}

// RecordUse writes when the keys used since the last call were last used.
func (k *APIKeys) RecordUse(ctx context.Context) error {
	ctx = tenant.System(ctx)
	k.mu.Lock()
	used := k.used
	k.used = map[string]time.Time{}
	k.mu.Unlock()
	for id, at := range used {
		// Never backwards: another server may have written a later use.
		if err := k.client.APIKey.Update().
			Where(apikey.ID(id), apikey.Or(apikey.LastUsedAtIsNil(), apikey.LastUsedAtLT(at))).
			SetLastUsedAt(at).Exec(ctx); err != nil {
			k.keepUnwritten(used)
			return err
		}
		delete(used, id)
	}
	return nil
}

// keepUnwritten puts back the uses a failed RecordUse did not write, for the next call to write,
// unless a later use of the key has been noted since.
func (k *APIKeys) keepUnwritten(used map[string]time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, at := range used {
		if later, ok := k.used[id]; !ok || later.Before(at) {
			k.used[id] = at
		}
	}
}

// NewAPIKey is a key just made: the key itself, shown this once, and what is kept of it.
type NewAPIKey struct {
	Key    string
	APIKey *ent.APIKey
}

// APIKeyRequest is what a key is made with.
type APIKeyRequest struct {
	Name      string
	Scopes    []string
	ExpiresAt *time.Time
}

// CreateAPIKey makes a key for the caller's user, with scopes they hold, of the user's merchant.
func (s *Service) CreateAPIKey(ctx context.Context, req APIKeyRequest) (NewAPIKey, error) {
	if err := Authorize(ctx, CreateAPIKey); err != nil {
		return NewAPIKey{}, err
	}
	p, _ := PrincipalFrom(ctx)
	if p.ActsForAnother() {
		// A key is its user's, and works for its user's merchant: another merchant's programs
		// get their keys from that merchant's own users.
		return NewAPIKey{}, apierror.New(apierror.Forbidden, "platform staff acting for another merchant make no API keys there: that merchant's own users do")
	}
	var parentID string
	if p.IsAPIKey() {
		parentID = p.Subject
	}
	return s.createAPIKey(ctx, p.Merchant, p.UserID, parentID, p.Scopes, req)
}

// CreateFirstAPIKey makes a key for a deployment's programs, from the command line: for the user
// with email, or the first enabled admin when email is empty.
func (s *Service) CreateFirstAPIKey(ctx context.Context, email string, req APIKeyRequest) (NewAPIKey, *ent.User, error) {
	ctx = tenant.System(ctx)
	query := s.client.User.Query().Where(user.Disabled(false))
	if email != "" {
		query.Where(user.EmailEQ(normalizeEmail(email)))
	} else {
		query.Where(user.RoleEQ(user.RoleAdmin), user.Platform(true)).Order(ent.Asc(user.FieldID)) // the platform's, for Prometheus
	}
	owner, err := query.First(ctx)
	if ent.IsNotFound(err) {
		return NewAPIKey{}, nil, fmt.Errorf("no enabled user to own the key: create one with paygate user create, or name an existing one")
	}
	if err != nil {
		return NewAPIKey{}, nil, err
	}
	key, err := s.createAPIKey(ctx, owner.MerchantID, owner.ID, "", scopesOfUser(string(owner.Role), owner.Platform), req)
	return key, owner, err
}

// createAPIKey makes a key for userID with scopes among grantable; parentID is the key making it,
// when a key does, which the new key may not outlive.
func (s *Service) createAPIKey(ctx context.Context, merchantID, userID, parentID string, grantable []string, req APIKeyRequest) (NewAPIKey, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxAPIKeyName || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return NewAPIKey{}, apierror.ForParam(apierror.InvalidRequest, "name", fmt.Sprintf("name must be 1 to %d characters of text", MaxAPIKeyName))
	}
	if len(req.Scopes) == 0 {
		return NewAPIKey{}, apierror.ForParam(apierror.InvalidRequest, "scopes", "scopes must name at least one scope")
	}
	if len(req.Scopes) > len(platformAdminScopes) {
		return NewAPIKey{}, apierror.ForParam(apierror.InvalidRequest, "scopes", fmt.Sprintf("scopes names at most the %d scopes there are, each once", len(platformAdminScopes)))
	}
	scopes := slices.Clone(req.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	for _, scope := range scopes {
		if !slices.Contains(scopesOfUser("admin", true), scope) {
			return NewAPIKey{}, apierror.ForParam(apierror.InvalidRequest, "scopes", fmt.Sprintf("%q is not a scope", scope))
		}
		if !slices.Contains(grantable, scope) {
			return NewAPIKey{}, apierror.ForParam(apierror.Forbidden, "scopes", "a key cannot have the "+scope+" scope, which its creator lacks")
		}
	}
	now := s.now()
	if req.ExpiresAt != nil && (!req.ExpiresAt.After(now) || req.ExpiresAt.Sub(now) > MaxAPIKeyLifetime) {
		return NewAPIKey{}, apierror.ForParam(apierror.InvalidRequest, "expires_at", "expires_at must be in the future, and within ten years")
	}
	raw := make([]byte, keyRandomBytes)
	rand.Read(raw)
	value := s.keys.prefix + base64.RawURLEncoding.EncodeToString(raw)
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return NewAPIKey{}, err
	}
	// The user's row, locked, makes the count and the insert one step across servers: two
	// creates at once cannot both see 99 keys.
	if _, err := tx.User.Query().Where(user.ID(userID), lockUser).Only(ctx); err != nil {
		return NewAPIKey{}, rollback(tx, err)
	}
	expiresAt := req.ExpiresAt
	if parentID != "" {
		// The making key, locked against its revocation: a key made while its parent is being
		// revoked is either refused here or revoked with it.
		parent, err := tx.APIKey.Query().Where(apikey.ID(parentID), database.ForUpdate).Only(ctx)
		if err != nil {
			return NewAPIKey{}, rollback(tx, err)
		}
		if parent.RevokedAt != nil || parent.ExpiresAt != nil && !now.Before(*parent.ExpiresAt) {
			return NewAPIKey{}, rollback(tx, apierror.New(apierror.TokenRevoked, "the API key making this one is no longer in force"))
		}
		if parent.ExpiresAt != nil {
			switch {
			case expiresAt == nil:
				expiresAt = parent.ExpiresAt
			case expiresAt.After(*parent.ExpiresAt):
				return NewAPIKey{}, rollback(tx, apierror.ForParam(apierror.InvalidRequest, "expires_at",
					"expires_at must not be after "+parent.ExpiresAt.UTC().Format(time.RFC3339)+", when the key making this one expires"))
			}
		}
	}
	held, err := tx.APIKey.Query().Where(apikey.UserID(userID), apikey.RevokedAtIsNil(),
		apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(now))).Count(ctx)
	if err != nil {
		return NewAPIKey{}, rollback(tx, err)
	}
	if held >= MaxAPIKeysPerUser {
		return NewAPIKey{}, rollback(tx, apierror.New(apierror.InvalidState, fmt.Sprintf("a user may hold at most %d keys in force: revoke one first", MaxAPIKeysPerUser)))
	}
	create := tx.APIKey.Create().
		SetMerchantID(merchantID).
		SetName(name).
		SetKeyHash(s.keys.hash(value)).
		SetPrefix(value[:len(s.keys.prefix)+keyShownChars]).
		SetScopes(scopes).
		SetUserID(userID).
		SetNillableExpiresAt(expiresAt).
		SetCreatedAt(now).SetUpdatedAt(now)
	if parentID != "" {
		create.SetParentID(parentID)
	}
	created, err := create.Save(ctx)
	if err != nil {
		return NewAPIKey{}, rollback(tx, err)
	}
	if err := tx.Commit(); err != nil {
		return NewAPIKey{}, err
	}
	return NewAPIKey{Key: value, APIKey: created.Unwrap()}, nil
}

// APIKeyPage is a page of keys, and whether more lie beyond it in the direction it was read.
type APIKeyPage struct {
	Keys    []*ent.APIKey
	HasMore bool
}

// APIKeys lists a page of the keys the caller sees (listedKeys), oldest first (by id).
func (s *Service) APIKeys(ctx context.Context, page ListPage) (APIKeyPage, error) {
	if err := Authorize(ctx, ListAPIKeys); err != nil {
		return APIKeyPage{}, err
	}
	p, err := page.check()
	if err != nil {
		return APIKeyPage{}, err
	}
	keys, err := listedKeys(ctx, s.client.APIKey.Query()).Where(p.window).Order(p.order).Limit(p.limit()).All(ctx)
	if err != nil {
		return APIKeyPage{}, err
	}
	keys, more := pageOf(p, keys)
	return APIKeyPage{Keys: keys, HasMore: more}, nil
}

// APIKeyCursorAt is the cursor of the key with id, which param (REST's starting_after or
// ending_before) pages from: a key the caller sees, or invalid_request, whether or not a key they
// may not see has the id.
func (s *Service) APIKeyCursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := Authorize(ctx, ListAPIKeys); err != nil {
		return nil, err
	}
	listed, err := listedKeys(ctx, s.client.APIKey.Query()).Where(apikey.ID(id)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !listed {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no API key has the id "+id)
	}
	return &ent.Cursor{ID: id}, nil
}

// listedKeys narrows query to the keys the caller sees: their own, or everyone's for someone who
// manages users.
func listedKeys(ctx context.Context, query *ent.APIKeyQuery) *ent.APIKeyQuery {
	p, _ := PrincipalFrom(ctx)
	switch {
	case !p.Can(ScopeUsersManage):
		query.Where(apikey.UserID(p.UserID))
	case !p.Platform:
		// A merchant's admin manages its own people's keys, not the platform staff's.
		query.Where(apikey.HasUserWith(user.Platform(false)))
	}
	return query
}

// RevokeAPIKey revokes a key, and the keys it made and theirs: here at once, on every other server
// within a second. Its owner or someone who manages users may; to anyone else it does not exist.
func (s *Service) RevokeAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	if err := Authorize(ctx, RevokeAPIKey); err != nil {
		return nil, err
	}
	p, _ := PrincipalFrom(ctx)
	key, err := s.client.APIKey.Query().Where(apikey.ID(id)).WithUser().Only(ctx)
	if ent.IsNotFound(err) || err == nil && key.UserID != p.UserID && (!p.Can(ScopeUsersManage) || key.Edges.User != nil && key.Edges.User.Platform && !p.Platform) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no API key has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	if key.RevokedAt != nil {
		return key, nil
	}
	now := s.now()
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return nil, err
	}
	revoked, err := revokeWithDescendants(ctx, tx, id, now)
	if err != nil {
		return nil, rollback(tx, err)
	}
	// Other servers may trust what they read of a key for keyCacheFor; the revocation stands
	// until then, and the row says so after.
	inForce := make([]func(), 0, len(revoked))
	for _, k := range revoked {
		done, err := s.tokens.Revocations.revoke(ctx, tx.Client(), k.ID, now.Add(keyCacheFor+revocationOverlap))
		if err != nil {
			return nil, rollback(tx, err)
		}
		inForce = append(inForce, done)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	for i, k := range revoked {
		inForce[i]()
		s.keys.forget(k)
	}
	return s.client.APIKey.Get(ctx, id)
}

// maxKeyGenerations bounds the walk down from a revoked key: a chain of keys each made by the
// last is at most MaxAPIKeysPerUser long, since all are one user's and in force when made.
const maxKeyGenerations = MaxAPIKeysPerUser + 1

// revokeWithDescendants revokes the key id, unless it is already, and every key in force it made,
// down the generations; it returns the keys it revoked. The revocation of a parent takes its row
// lock first, so a key being made by it waits and then sees it revoked.
func revokeWithDescendants(ctx context.Context, tx *ent.Tx, id string, now time.Time) ([]*ent.APIKey, error) {
	var revoked []*ent.APIKey
	generation := []string{id}
	for range maxKeyGenerations {
		if len(generation) == 0 {
			return revoked, nil
		}
		keys, err := tx.APIKey.Query().Where(apikey.IDIn(generation...), apikey.RevokedAtIsNil(), database.ForUpdate).All(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(keys))
		for i, k := range keys {
			ids[i] = k.ID
		}
		if len(ids) > 0 {
			if err := tx.APIKey.Update().Where(apikey.IDIn(ids...)).SetRevokedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
				return nil, err
			}
			revoked = append(revoked, keys...)
		}
		// The children in force of this generation: a child revoked or expired already needs
		// nothing, and neither do its own, revoked with it or expired no later. So the walk stays
		// within one user's keys in force, however many keys a parent has made over time.
		if generation, err = tx.APIKey.Query().Where(apikey.ParentIDIn(ids...), apikey.RevokedAtIsNil(),
			apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(now))).IDs(ctx); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("api keys: the keys made by a revoked key go deeper than any user's keys can")
}
