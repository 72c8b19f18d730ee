package auth

import (
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/prefixid"
)

// AccessTokenLifetime is how long an access token is good for.
const AccessTokenLifetime = 15 * time.Minute

const (
	clockSkew = 30 * time.Second
	issuer    = "paygate"
	audience  = "paygate-api"
)

type accessClaims struct {
	Role  string `json:"role"`
	Scope string `json:"scope"`
	// Session is the login the token was issued in (its refresh token family): logging out
	// revokes it, and with it every access token of the login.
	Session string `json:"sid,omitempty"`
	jwt.RegisteredClaims
}

// Tokens issues and verifies access tokens: signed with this server's key when it has one
// (EdDSA or RS256, verifiable by anyone through the published keys), else with the secret the
// servers share (HS256). Either kind is verified, so a deployment moving to keys logs no one out.
type Tokens struct {
	secret []byte
	// Keys are the keys of every server, this one's included; nil: the secret alone.
	Keys   *PublishedKeys
	parser *jwt.Parser
	now    func() time.Time
	// Revocations, when set, refuses the tokens of revoked sessions and revoked tokens.
	Revocations *Revocations
	// verified remembers the principals of tokens already verified, by the token: a client sends
	// its token with every request for 15 minutes, and parsing it again each time costs ten
	// times what looking it up does.
	verified *lru.Cache[string, Principal]
}

// verifiedTokensKept bounds the tokens remembered; a token not remembered is verified again.
const verifiedTokensKept = 4096

// NewTokens returns a token issuer; secret must hold at least 32 bytes.
func NewTokens(secret []byte, now func() time.Time) (*Tokens, error) {
	if len(secret) < 32 {
		return nil, errors.New("the JWT secret must be at least 32 bytes")
	}
	verified, _ := lru.New[string, Principal](verifiedTokensKept) // fails only for a size below 1
	return &Tokens{
		secret: secret,
		// The algorithms are pinned: "none" and any other are rejected, and a key signs only with
		// its own (keyOf).
		parser: jwt.NewParser(
			jwt.WithValidMethods(signingMethods),
			jwt.WithIssuer(issuer),
			jwt.WithAudience(audience),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			// Servers behind one load balancer issue and check each other's tokens; allow their
			// clocks to differ a little.
			jwt.WithLeeway(clockSkew),
			jwt.WithTimeFunc(now),
		),
		now:      now,
		verified: verified,
	}, nil
}

// Issue returns a signed access token for the user, in session (a login's family; "" for none).
func (t *Tokens) Issue(userID, role, session string) (string, error) {
	now := t.now()
	claims := accessClaims{
		Role:    role,
		Scope:   strings.Join(ScopesOf(role), " "),
		Session: session,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			ID:        prefixid.New("jti"),
			Issuer:    issuer,
			Audience:  jwt.ClaimStrings{audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(AccessTokenLifetime)),
		},
	}
	if t.Keys != nil && t.Keys.own != nil {
		own := t.Keys.own
		token := jwt.NewWithClaims(own.method, claims)
		token.Header["kid"] = own.ID
		return token.SignedString(own.private)
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
}

// signingMethods are the algorithms of the tokens Paygate issues.
var signingMethods = []string{jwt.SigningMethodHS256.Alg(), jwt.SigningMethodEdDSA.Alg(), jwt.SigningMethodRS256.Alg()}

// keyOf returns the key a token is verified with: the shared secret for HS256, else the published
// key its kid names, whose algorithm must be the token's.
func (t *Tokens) keyOf(token *jwt.Token) (any, error) {
	if token.Method == jwt.SigningMethodHS256 {
		return t.secret, nil
	}
	kid, _ := token.Header["kid"].(string)
	if t.Keys == nil || kid == "" {
		return nil, errors.New("the token names no key Paygate signs with")
	}
	return t.Keys.key(kid, token.Method.Alg())
}

// Verify checks an access token and returns its principal.
func (t *Tokens) Verify(token string) (Principal, error) { return t.verify(token, nil) }

// verify is Verify, calling pay (when not nil) before checking a signature: a token verified
// lately is answered from memory.
func (t *Tokens) verify(token string, pay func() error) (Principal, error) {
	if p, ok := t.verified.Get(token); ok && t.now().Before(p.Expires.Add(clockSkew)) {
		if t.Revocations != nil && t.Revocations.Revoked(p.Session, p.TokenID) {
			return Principal{}, apierror.New(apierror.TokenRevoked, "the access token has been revoked; log in again")
		}
		return p, nil
	}
	if err := payFor(pay); err != nil {
		return Principal{}, err
	}
	var claims accessClaims
	_, err := t.parser.ParseWithClaims(token, &claims, t.keyOf)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return Principal{}, apierror.New(apierror.TokenExpired, "the access token has expired; refresh it")
	case err != nil, claims.Subject == "", claims.IssuedAt == nil:
		return Principal{}, apierror.New(apierror.TokenInvalid, "the access token is not valid")
	case claims.ExpiresAt.Sub(claims.IssuedAt.Time) > AccessTokenLifetime, claims.ExpiresAt.Sub(t.now()) > AccessTokenLifetime+clockSkew:
		// Paygate never issues a token that lives longer: one that does was not made by it as
		// it is now (a leaked key, an old build), and would outlive any revocation.
		return Principal{}, apierror.New(apierror.TokenInvalid, "the access token lives longer than Paygate issues tokens for")
	case t.Revocations != nil && t.Revocations.Revoked(claims.Session, claims.ID):
		return Principal{}, apierror.New(apierror.TokenRevoked, "the access token has been revoked; log in again")
	}
	p := Principal{Subject: claims.Subject, Role: claims.Role, Scopes: strings.Fields(claims.Scope),
		Session: claims.Session, TokenID: claims.ID, Expires: claims.ExpiresAt.Time}
	t.verified.Add(token, p)
	return p, nil
}

// claimsOf reads a token Paygate signed, whether or not it is still in force, for revoking it.
func (t *Tokens) claimsOf(token string) (accessClaims, error) {
	var claims accessClaims
	_, err := jwt.NewParser(jwt.WithValidMethods(signingMethods), jwt.WithoutClaimsValidation()).
		ParseWithClaims(token, &claims, t.keyOf)
	if err == nil && (claims.ID == "" || claims.ExpiresAt == nil) {
		err = errors.New("the token has no id or no end")
	}
	return claims, err
}
