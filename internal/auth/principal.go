// Package auth logs people in, issues and checks access tokens, rotates refresh tokens and decides
// what a principal may do.
package auth

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/tenant"
)

// Scopes name what a principal may do.
const (
	ScopePaymentsRead   = "payments:read"
	ScopePaymentsWrite  = "payments:write"
	ScopeRefundsWrite   = "refunds:write"
	ScopeWebhooksRead   = "webhooks:read"
	ScopeWebhooksManage = "webhooks:manage"
	ScopeMonitoringRead = "monitoring:read"
	ScopeConfigWrite    = "config:write"
	ScopeUsersManage    = "users:manage"
	ScopeAPIKeysManage  = "apikeys:manage"
	// ScopeMerchantsManage is held by the platform's admins alone, whatever their role says.
	ScopeMerchantsManage = "merchants:manage"
)

// scopesByRole says which scopes each role grants.
var scopesByRole = map[string][]string{
	"admin": {
		ScopePaymentsRead, ScopePaymentsWrite, ScopeRefundsWrite, ScopeWebhooksRead, ScopeWebhooksManage,
		ScopeMonitoringRead, ScopeConfigWrite, ScopeUsersManage, ScopeAPIKeysManage,
	},
	"operator": {
		ScopePaymentsRead, ScopePaymentsWrite, ScopeRefundsWrite, ScopeWebhooksRead, ScopeWebhooksManage,
		ScopeMonitoringRead,
	},
	"developer": {ScopePaymentsRead, ScopePaymentsWrite, ScopeAPIKeysManage, ScopeWebhooksRead},
	"viewer":    {ScopePaymentsRead, ScopeWebhooksRead, ScopeMonitoringRead},
}

// ScopesOf returns the scopes a role grants, or nil for an unknown role.
func ScopesOf(role string) []string { return scopesByRole[role] }

// platformAdminScopes are the scopes of the platform's admins: an admin's, and managing merchants.
var platformAdminScopes = append(slices.Clip(ScopesOf("admin")), ScopeMerchantsManage)

// scopesOfUser returns the scopes a user holds: their role's, and managing merchants for the
// platform's admins. Like ScopesOf's, the slice is shared, read by every request of the role.
func scopesOfUser(role string, platform bool) []string {
	if platform && role == "admin" {
		return platformAdminScopes
	}
	return ScopesOf(role)
}

// Principal is who is making a request.
type Principal struct {
	// Subject is who acts: a user (usr_...), or an API key (key_...) acting for its user. The
	// rate limit and idempotency keys are the user's, shared by their API keys.
	Subject string
	// UserID is the user: the subject itself, or the user whose key it is.
	UserID string
	// Role is the user's role when the subject is the user; an API key has none, only scopes.
	Role   string
	Scopes []string
	// Session and TokenID are those of the access token it came with: what logging out and
	// revoking it revoke. Expires is when the token or key ends (zero for a key that never does).
	Session, TokenID string
	Expires          time.Time
	// Merchant is whose data the principal reads and changes: its user's merchant, or, for
	// platform staff, the merchant it acts for (Paygate-Merchant).
	Merchant string
	// Home is the merchant the user (or key) belongs to: Merchant, unless platform staff act
	// for another.
	Home string
	// Platform says the user is the platform's staff.
	Platform bool
}

// ActsForAnother reports whether platform staff act for a merchant other than their own.
func (p Principal) ActsForAnother() bool { return p.Merchant != p.Home }

// IsAPIKey reports whether the principal is an API key.
func (p Principal) IsAPIKey() bool { return strings.HasPrefix(p.Subject, "key_") }

// Can reports whether the principal holds scope.
func (p Principal) Can(scope string) bool { return slices.Contains(p.Scopes, scope) }

// authentication is what a request authenticated as, and with: one context value for both.
type authentication struct {
	principal Principal
	// credential is what the principal authenticated with, so that what lasts beyond the
	// request (a subscription) can check it is still good.
	credential string
}

type authenticationKey struct{}

// CredentialFrom returns the credential the request's principal authenticated with.
func CredentialFrom(ctx context.Context) string {
	if a, ok := ctx.Value(authenticationKey{}).(*authentication); ok {
		return a.credential
	}
	return ""
}

type failureKey struct{}

// WithPrincipal returns a context carrying the authenticated principal, whose work is its
// merchant's: what it reads and changes is held to that merchant in the data layer.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return Authenticated(ctx, p, "")
}

// Authenticated is WithPrincipal for a principal that authenticated with credential.
func Authenticated(ctx context.Context, p Principal, credential string) context.Context {
	return context.WithValue(tenant.For(ctx, p.Merchant), authenticationKey{}, &authentication{principal: p, credential: credential})
}

// WithFailure returns a context recording why the credentials sent failed (expired, invalid), so
// that an operation needing a principal answers with that reason rather than a bare 401.
func WithFailure(ctx context.Context, err *apierror.Error) context.Context {
	return context.WithValue(ctx, failureKey{}, err)
}

// PrincipalFrom returns the request's principal, if it authenticated.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	if a, ok := ctx.Value(authenticationKey{}).(*authentication); ok {
		return a.principal, true
	}
	return Principal{}, false
}

// RequireScope returns nil when the request's principal holds scope, and otherwise the error to
// answer with: 401 without valid credentials, 403 without the scope.
func RequireScope(ctx context.Context, scope string) error {
	p, err := principalOf(ctx)
	if err != nil {
		return err
	}
	if !p.Can(scope) {
		return apierror.New(apierror.Forbidden, "this operation needs the "+scope+" scope")
	}
	return nil
}

// principalOf returns the request's principal, or the 401 to answer without one: why its
// credentials failed, or that it sent none.
func principalOf(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if ok {
		return p, nil
	}
	if failure, ok := ctx.Value(failureKey{}).(*apierror.Error); ok {
		return Principal{}, failure
	}
	return Principal{}, apierror.New(apierror.Unauthenticated, "authentication required: send Authorization: Bearer <access token or API key>, or X-API-Key: <API key>")
}
