package auth

import (
	"context"

	"github.com/paygate/paygate/internal/tenant"
)

// ViewerFacts is who a request's principal is and what it may do, for a client to offer only
// what it may ask.
type ViewerFacts struct {
	// Email is the user's: the one signed in, or the one whose API key it is.
	Email string
	// Credential is "session" (an access token) or "api_key".
	Credential string
	// Role is the user's role when the principal is the user; an API key has none.
	Role     *string
	Scopes   []string
	Platform bool
	// Merchant is whose data the request reads and changes; Home the user's own merchant.
	Merchant, Home string
}

// Viewer answers who the request's principal is.
func (s *Service) Viewer(ctx context.Context) (ViewerFacts, error) {
	if err := Authorize(ctx, Viewer); err != nil {
		return ViewerFacts{}, err
	}
	p, _ := PrincipalFrom(ctx)
	// The user is of the principal's own merchant, whichever one platform staff act for.
	u, err := s.client.User.Get(tenant.For(ctx, p.Home), p.UserID)
	if err != nil {
		return ViewerFacts{}, err
	}
	facts := ViewerFacts{Email: u.Email, Credential: "session", Scopes: p.Scopes, Platform: p.Platform, Merchant: p.Merchant, Home: p.Home}
	if p.IsAPIKey() {
		facts.Credential = "api_key"
	} else {
		facts.Role = &p.Role
	}
	return facts, nil
}
