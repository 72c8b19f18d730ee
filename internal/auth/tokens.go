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

// Tokens issues and verifies HS256 access tokens.
type Tokens struct {
	secret []byte
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
		// The algorithm is pinned: "none" and any switch to another algorithm are rejected.
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
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
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
}

// Verify checks an access token and returns its principal.
func (t *Tokens) Verify(token string) (Principal, error) {
	if p, ok := t.verified.Get(token); ok && t.now().Before(p.Expires.Add(clockSkew)) {
		if t.Revocations != nil && t.Revocations.Revoked(p.Session, p.TokenID) {
			return Principal{}, apierror.New(apierror.TokenRevoked, "the access token has been revoked; log in again")
		}
		return p, nil
	}
	var claims accessClaims
	_, err := t.parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil })
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
	_, err := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithoutClaimsValidation()).
		ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil })
	if err == nil && (claims.ID == "" || claims.ExpiresAt == nil) {
		err = errors.New("the token has no id or no end")
	}
	return claims, err
}
