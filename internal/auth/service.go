package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/refreshtoken"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/tenant"
)

// PasswordCost is the bcrypt cost of stored passwords, unless the service is told another.
const PasswordCost = 12

// RefreshTokenLifetime is how long an unused refresh token stays good.
const RefreshTokenLifetime = 30 * 24 * time.Hour

// Session is what a login or a refresh hands out.
type Session struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    int // seconds
}

// Service manages users, their sessions and their API keys, and says who a request's
// credentials are.
type Service struct {
	// Throttle, when set, spends a login attempt of account from the request's address, or says
	// why not: checked before the password, so a throttled guess costs no hash.
	Throttle func(ctx context.Context, account string) error

	// Cost is the bcrypt cost of the passwords it stores (PasswordCost by default).
	Cost int

	// Hashing is the queue its passwords are hashed in: the process's, unless told another.
	Hashing *HashQueue
	// Client, when set, says who a request comes from as its rate limits count it: its client
	// address, by which Hashing shares out the hashes, and refuse, the 429 to answer when the
	// address may not wait, with a Retry-After of retryAfter. A request it knows nothing of (refuse
	// nil), a command's, is hashed as the client "".
	Client func(ctx context.Context) (address string, refuse func(retryAfter time.Duration) error)

	client *ent.Client
	tokens *Tokens
	keys   *APIKeys
	users  *UserDirectory
	now    func() time.Time
	// changes tells the subscriptions a credential may have stopped being good.
	changes *credentialChanges
	// missingUserHash is compared against when the email is unknown, so a login takes as long
	// for an unknown email as for a wrong password and does not reveal which emails exist.
	missingUserHash func() []byte
}

// NewService returns the auth service. Commands that only add users or keys pass nil for what
// they do not use.
func NewService(client *ent.Client, tokens *Tokens, keys *APIKeys, users *UserDirectory, now func() time.Time) *Service {
	s := &Service{Cost: PasswordCost, Hashing: processHashing, client: client, tokens: tokens, keys: keys, users: users, now: now, changes: &credentialChanges{}}
	if tokens != nil && tokens.Revocations != nil {
		tokens.Revocations.changes = s.changes
	}
	if users != nil {
		users.changes = s.changes
	}
	s.missingUserHash = sync.OnceValue(func() []byte {
		hash, _ := bcrypt.GenerateFromPassword([]byte("no user has this password"), s.Cost)
		return hash
	})
	return s
}

// Directory returns this server's copy of the users' standing.
func (s *Service) Directory() *UserDirectory { return s.users }

// APIKeyKeeper returns the API key keeper.
func (s *Service) APIKeyKeeper() *APIKeys { return s.keys }

// merchantID is the shape of a merchant's id: what Paygate-Merchant may name. Merchants made
// before ids carried the millisecond's fraction have 26 characters after the prefix.
var merchantID = regexp.MustCompile(`^mer_[0-9a-z]{26}(?:[0-9a-z]{3})?$`)

// Authenticate returns the principal of a request's credential, an access token or an API key,
// acting for merchant (Paygate-Merchant; "" for its own), or why it is refused. Its user and
// their merchant must exist and be enabled; a token must carry the user's role as it is now, and
// a key gives no scope its user has lost since it was made. Only platform staff act for another
// merchant, and only for one that exists and is enabled.
//
// pay, when not nil, is called before any work this server's memory cannot answer (a token's
// signature, a read of a key, a user or a merchant), maybe more than once; its error ends the
// authentication. A credential checked lately is answered from memory and pays nothing.
func (s *Service) Authenticate(ctx context.Context, credential, merchant string, pay func() error) (Principal, error) {
	if utf8.RuneCountInString(merchant) > prefixid.MaxLength {
		return Principal{}, apierror.ForParam(apierror.InvalidRequest, "Paygate-Merchant",
			fmt.Sprintf("Paygate-Merchant is longer than any merchant's id (%d characters)", prefixid.MaxLength))
	}
	var p Principal
	var standing userStanding
	var key *ent.APIKey
	if IsAPIKey(credential) {
		var err error
		key, err = s.keys.authenticate(ctx, credential, s.tokens.Revocations, pay)
		if err != nil {
			return Principal{}, err
		}
		if standing, err = s.users.standing(ctx, key.UserID, pay); err != nil {
			return Principal{}, err
		}
		held := scopesOfUser(standing.role, standing.platform)
		scopes := make([]string, 0, len(key.Scopes))
		for _, scope := range key.Scopes {
			if slices.Contains(held, scope) {
				scopes = append(scopes, scope)
			}
		}
		p = Principal{Subject: key.ID, UserID: key.UserID, Scopes: scopes}
		if key.ExpiresAt != nil {
			p.Expires = *key.ExpiresAt
		}
	} else {
		var err error
		if p, err = s.tokens.verify(credential, pay); err != nil {
			return Principal{}, err
		}
		if standing, err = s.users.standing(ctx, p.Subject, pay); err != nil {
			return Principal{}, err
		}
		if standing.role != p.Role {
			return Principal{}, apierror.New(apierror.TokenRevoked, "the user's role has changed since the token was issued; log in again")
		}
		p.UserID = p.Subject
		p.Scopes = scopesOfUser(standing.role, standing.platform)
	}
	p.Merchant, p.Platform = standing.merchant, standing.platform
	if key != nil && key.MerchantID != standing.merchant {
		return Principal{}, apierror.New(apierror.TokenInvalid, "the API key is not valid") // keys are made in their user's merchant
	}
	p.Home = p.Merchant
	if merchant == "" || merchant == p.Merchant {
		return p, nil
	}
	if !p.Platform {
		return Principal{}, apierror.New(apierror.Forbidden, "only platform staff act for another merchant: send no Paygate-Merchant header")
	}
	active, err := false, error(nil)
	if merchantID.MatchString(merchant) { // anything else names no merchant, and is not looked up
		active, err = s.users.merchantActive(ctx, merchant, pay)
	}
	switch {
	case err != nil:
		return Principal{}, err
	case !active:
		return Principal{}, apierror.ForParam(apierror.MerchantUnavailable, "Paygate-Merchant", "no enabled merchant has the id "+merchant)
	}
	p.Merchant = merchant
	return p, nil
}

// payFor calls pay, when there is one, before work memory cannot answer: a refusal is its error.
func payFor(pay func() error) error {
	if pay == nil {
		return nil
	}
	return pay()
}

// Tokens returns the access token issuer and verifier.
func (s *Service) Tokens() *Tokens { return s.tokens }

// Login checks an email and password and starts a session.
func (s *Service) Login(ctx context.Context, email, password string) (Session, error) {
	ctx = tenant.System(ctx) // whoever logs in, of whichever merchant
	if err := cmp.Or(checkEmail("email", email), checkPasswordLength("password", password)); err != nil {
		return Session{}, err
	}
	if s.Throttle != nil {
		if err := s.Throttle(ctx, normalizeEmail(email)); err != nil {
			return Session{}, err
		}
	}
	u, err := s.client.User.Query().Where(user.EmailEQ(normalizeEmail(email))).Only(ctx)
	if err == nil && u.Disabled {
		// A disabled user logs in with no password; the hash is still compared, so the answer
		// takes as long as any other wrong password's.
		if _, err := s.passwordMatches(ctx, s.missingUserHash(), password); err != nil {
			return Session{}, err
		}
		return Session{}, apierror.New(apierror.InvalidCredentials, "the email or password is wrong")
	}
	if ent.IsNotFound(err) {
		if _, err := s.passwordMatches(ctx, s.missingUserHash(), password); err != nil {
			return Session{}, err
		}
		return Session{}, apierror.New(apierror.InvalidCredentials, "the email or password is wrong")
	}
	if err != nil {
		return Session{}, err
	}
	if matches, err := s.passwordMatches(ctx, []byte(u.PasswordHash), password); err != nil || !matches {
		return Session{}, cmp.Or(err, error(apierror.New(apierror.InvalidCredentials, "the email or password is wrong")))
	}
	// The session starts only if the password just checked is still the user's: a change of
	// password locks the user's row, so a login that checked the old one either starts its
	// session first, which the change then ends, or finds the new hash and is refused.
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return Session{}, err
	}
	current, err := tx.User.Query().Where(user.ID(u.ID), lockUser).Only(ctx)
	if err != nil {
		return Session{}, rollback(tx, err)
	}
	if current.PasswordHash != u.PasswordHash || current.Disabled {
		return Session{}, rollback(tx, apierror.New(apierror.InvalidCredentials, "the email or password is wrong"))
	}
	if err := s.merchantEnabled(ctx, current.MerchantID); err != nil {
		return Session{}, rollback(tx, err)
	}
	family := prefixid.New("fam")
	refresh, err := s.newRefreshToken(ctx, tx.Client(), u.ID, family)
	if err != nil {
		return Session{}, rollback(tx, err)
	}
	if err := tx.Commit(); err != nil {
		return Session{}, err
	}
	return s.session(current, refresh, family)
}

// Refresh trades a refresh token for a new session. Each refresh token works once: presenting one
// that was already used revokes every token of its family, since one of the two holders is a thief.
func (s *Service) Refresh(ctx context.Context, token string) (Session, error) {
	ctx = tenant.System(ctx) // the token says whose session it is
	if err := checkToken("refresh_token", token); err != nil {
		return Session{}, err
	}
	rt, err := s.client.RefreshToken.Query().
		Where(refreshtoken.TokenHashEQ(hashToken(token))).WithUser().Only(ctx)
	if ent.IsNotFound(err) {
		return Session{}, apierror.New(apierror.TokenInvalid, "the refresh token is not valid")
	}
	if err != nil {
		return Session{}, err
	}
	now := s.now()
	switch {
	case rt.RevokedAt != nil && rt.UsedAt == nil:
		return Session{}, apierror.New(apierror.TokenRevoked, "the refresh token has been revoked")
	case rt.UsedAt != nil:
		return Session{}, s.revokeFamily(ctx, rt.Family)
	case !now.Before(rt.ExpiresAt):
		return Session{}, apierror.New(apierror.TokenExpired, "the refresh token has expired; log in again")
	}
	if err := s.merchantEnabled(ctx, rt.Edges.User.MerchantID); err != nil {
		return Session{}, err
	}

	tx, err := s.client.Tx(ctx)
	if err != nil {
		return Session{}, err
	}
	// The conditional update settles a race between two uses of one token: only one marks it used.
	claimed, err := tx.RefreshToken.Update().
		Where(refreshtoken.ID(rt.ID), refreshtoken.UsedAtIsNil(), refreshtoken.RevokedAtIsNil()).
		SetUsedAt(now).Save(ctx)
	if err != nil {
		return Session{}, rollback(tx, err)
	}
	if claimed == 0 {
		tx.Rollback()
		// Revoked meanwhile (a logout), or used meanwhile (by another holder: reuse).
		if current, err := s.client.RefreshToken.Get(ctx, rt.ID); err == nil && current.UsedAt == nil {
			return Session{}, apierror.New(apierror.TokenRevoked, "the refresh token has been revoked")
		}
		return Session{}, s.revokeFamily(ctx, rt.Family)
	}
	refresh, err := s.newRefreshToken(ctx, tx.Client(), rt.UserID, rt.Family)
	if err != nil {
		return Session{}, rollback(tx, err)
	}
	if err := tx.Commit(); err != nil {
		return Session{}, err
	}
	return s.session(rt.Edges.User, refresh, rt.Family)
}

// merchantEnabled refuses a session to a disabled merchant's user: its tokens would not work.
func (s *Service) merchantEnabled(ctx context.Context, merchant string) error {
	active, err := s.users.merchantActive(ctx, merchant, nil)
	switch {
	case err != nil:
		return err
	case !active:
		return apierror.New(apierror.Forbidden, "the user's merchant is disabled")
	}
	return nil
}

func (s *Service) revokeFamily(ctx context.Context, family string) error {
	if err := s.endSession(ctx, family); err != nil {
		return err
	}
	return apierror.New(apierror.RefreshTokenReused, "the refresh token was already used; every session from that login is now revoked")
}

// endSession revokes a login: its refresh tokens, and the access tokens issued in it, on every
// server (here at once, elsewhere within a second).
func (s *Service) endSession(ctx context.Context, family string) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return err
	}
	// A refresh under way holds its token's row: waiting for it first means the update below,
	// a statement of its own, sees the token that refresh hands out, and revokes it too.
	if _, err := tx.RefreshToken.Query().Where(refreshtoken.FamilyEQ(family), refreshtoken.UsedAtIsNil(), database.ForUpdate).IDs(ctx); err != nil {
		return rollback(tx, err)
	}
	if _, err := tx.RefreshToken.Update().
		Where(refreshtoken.FamilyEQ(family), refreshtoken.RevokedAtIsNil()).
		SetRevokedAt(s.now()).Save(ctx); err != nil {
		return rollback(tx, err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return s.revoke(ctx, family, s.now().Add(AccessTokenLifetime+clockSkew))
}

// revoke revokes the tokens of subject (a session, an access token, a user) issued until now, on
// every server, until until.
func (s *Service) revoke(ctx context.Context, subject string, until time.Time) error {
	if s.tokens == nil || s.tokens.Revocations == nil {
		return errors.New("revocations are not kept by this service")
	}
	inForce, err := s.tokens.Revocations.revoke(ctx, s.client, subject, until)
	if err == nil {
		inForce()
	}
	return err
}

// Logout ends the caller's session: the login its access token was issued in, and the session
// of refreshToken too when it is given and the caller's. A token issued outside a login is
// revoked alone.
func (s *Service) Logout(ctx context.Context, refreshToken *string) error {
	if err := Authorize(ctx, Logout); err != nil {
		return err
	}
	p, _ := PrincipalFrom(ctx)
	if p.IsAPIKey() {
		return apierror.New(apierror.InvalidRequest, "an API key has no session to log out of; revoke the key instead")
	}
	if refreshToken != nil && *refreshToken != "" {
		if err := s.revokeRefreshToken(ctx, p, *refreshToken, "refresh_token"); err != nil {
			return err
		}
	}
	if p.Session == "" {
		return s.revoke(ctx, p.TokenID, p.Expires)
	}
	return s.endSession(ctx, p.Session)
}

// RevokeToken revokes an access token (that token alone) or a refresh token (its whole
// session). Only the token's owner or an admin may.
func (s *Service) RevokeToken(ctx context.Context, token string) error {
	if err := Authorize(ctx, RevokeToken); err != nil {
		return err
	}
	if err := checkToken("token", token); err != nil {
		return err
	}
	p, _ := PrincipalFrom(ctx)
	if strings.HasPrefix(token, "rt_") {
		return s.revokeRefreshToken(ctx, p, token, "token")
	}
	claims, err := s.tokens.claimsOf(token)
	if err != nil {
		return apierror.ForParam(apierror.InvalidRequest, "token", "token is not a token Paygate issued")
	}
	if claims.Subject != p.Subject && !s.adminOf(ctx, p, claims.Subject) {
		return apierror.ForParam(apierror.Forbidden, "token", "only its owner or an admin of its merchant may revoke a token")
	}
	return s.revoke(ctx, claims.ID, claims.ExpiresAt.Time.Add(clockSkew))
}

// revokeRefreshToken ends the session of a refresh token, which p must own or be an admin for.
func (s *Service) revokeRefreshToken(ctx context.Context, p Principal, token, param string) error {
	if err := checkToken(param, token); err != nil {
		return err
	}
	rt, err := s.client.RefreshToken.Query().Where(refreshtoken.TokenHashEQ(hashToken(token))).Only(ctx)
	if ent.IsNotFound(err) {
		return apierror.ForParam(apierror.InvalidRequest, param, param+" is not a token Paygate issued")
	}
	if err != nil {
		return err
	}
	if rt.UserID != p.Subject && !s.adminOf(ctx, p, rt.UserID) {
		return apierror.ForParam(apierror.Forbidden, param, "only its owner or an admin of its merchant may revoke a token")
	}
	return s.endSession(ctx, rt.Family)
}

// adminOf reports whether p is an admin of the user's merchant, or a platform admin; only the
// latter for platform staff.
func (s *Service) adminOf(ctx context.Context, p Principal, userID string) bool {
	if p.Role != "admin" {
		return false
	}
	standing, err := s.users.standing(ctx, userID, nil)
	return p.Platform || err == nil && standing.merchant == p.Merchant && !standing.platform
}

func (s *Service) newRefreshToken(ctx context.Context, client *ent.Client, userID, family string) (string, error) {
	raw := make([]byte, 32)
	rand.Read(raw)
	token := "rt_" + base64.RawURLEncoding.EncodeToString(raw)
	err := client.RefreshToken.Create().
		SetTokenHash(hashToken(token)).
		SetFamily(family).
		SetUserID(userID).
		SetExpiresAt(s.now().Add(RefreshTokenLifetime)).
		Exec(ctx)
	return token, err
}

func (s *Service) session(u *ent.User, refresh, family string) (Session, error) {
	access, err := s.tokens.Issue(u.ID, string(u.Role), family)
	if err != nil {
		return Session{}, err
	}
	return Session{AccessToken: access, RefreshToken: refresh, ExpiresIn: int(AccessTokenLifetime / time.Second)}, nil
}

// hashToken stores refresh tokens as SHA-256: they are long random strings, so a fast hash is
// enough and finding one by hash stays a single index lookup.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateUser adds a user with a bcrypt-hashed password to the merchant of ctx's work.
func (s *Service) CreateUser(ctx context.Context, email, password, role string) (*ent.User, error) {
	return s.createUser(ctx, email, password, role, false)
}

// createUser adds a user, one of the platform's staff when platform is set.
func (s *Service) createUser(ctx context.Context, email, password, role string, platform bool) (*ent.User, error) {
	if err := checkEmail("email", email); err != nil {
		return nil, err
	}
	email = normalizeEmail(email)
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, " <>") {
		return nil, apierror.ForParam(apierror.InvalidRequest, "email", "email is not a valid address")
	}
	if ScopesOf(role) == nil {
		return nil, apierror.ForParam(apierror.InvalidRequest, "role", "role must be admin, operator, developer or viewer")
	}
	if err := CheckPassword(password, email, "password"); err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return nil, err
	}
	u, err := s.client.User.Create().SetEmail(email).SetPasswordHash(string(hash)).SetRole(user.Role(role)).SetPlatform(platform).Save(ctx)
	if err == nil && s.users != nil {
		s.users.remember(u)
	}
	return u, err
}

// NoUsers reports whether no user exists yet.
func (s *Service) NoUsers(ctx context.Context) (bool, error) {
	exists, err := s.client.User.Query().Exist(tenant.System(ctx))
	return !exists, err
}

// EnsureFirstAdmin creates the first admin, platform staff of the default merchant, when there
// are no users. With no email given it creates admin@localhost with a random password, which it
// returns so it can be shown once.
func (s *Service) EnsureFirstAdmin(ctx context.Context, email, password string) (created *ent.User, generatedPassword string, err error) {
	exists, err := s.client.User.Query().Exist(tenant.System(ctx))
	if err != nil || exists {
		return nil, "", err
	}
	if email == "" {
		email = "admin@localhost"
		// 144 random bits; drawn again in the unlikely case the policy refuses them.
		for generatedPassword == "" || CheckPassword(generatedPassword, email, "password") != nil {
			raw := make([]byte, 18)
			rand.Read(raw)
			generatedPassword = base64.RawURLEncoding.EncodeToString(raw)
		}
		password = generatedPassword
	}
	u, err := s.createUser(tenant.For(ctx, tenant.DefaultMerchant), email, password, "admin", true)
	if ent.IsConstraintError(err) {
		return nil, "", nil // another server starting at the same moment created it
	}
	if err != nil {
		return nil, "", fmt.Errorf("creating the first admin: %w", err)
	}
	return u, generatedPassword, nil
}

func normalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func rollback(tx *ent.Tx, err error) error {
	if rbErr := tx.Rollback(); rbErr != nil {
		return errors.Join(err, rbErr)
	}
	return err
}
