package auth

import (
	"context"
	"errors"
	"sync"

	"github.com/paygate/paygate/internal/apierror"
)

// ErrUserDisabled and ErrMerchantDisabled refuse the credentials of a disabled user, and of a
// user of a disabled merchant: token_revoked to a request, as any credential that stopped
// working; a subscription that ends for it says which.
var (
	ErrUserDisabled     = apierror.New(apierror.TokenRevoked, "the credentials' user is disabled")
	ErrMerchantDisabled = apierror.New(apierror.TokenRevoked, "the credentials' merchant is disabled")
)

// credentialChanges tells whoever holds a credential checked earlier (a subscription) that it
// may have stopped being good: a revocation, or a user or merchant changed, made on this server
// or read from another.
type credentialChanges struct {
	mu   sync.Mutex
	next chan struct{}
}

func (c *credentialChanges) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		c.next = make(chan struct{})
	}
	return c.next
}

// tell wakes every waiter. A copy of the revocations or users no service reads (a command's)
// has none to tell.
func (c *credentialChanges) tell() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next != nil {
		close(c.next)
		c.next = nil
	}
}

// CredentialsChanged receives once a credential may have stopped being good since it was called:
// then Recheck it.
func (s *Service) CredentialsChanged() <-chan struct{} { return s.changes.wait() }

// Recheck authenticates again the credential that principal came with, acting for the same
// merchant, from this server's memory where it can. When the credential no longer works because
// its user or their merchant was disabled (which revokes the user's sessions too), the error says
// so: ErrUserDisabled, ErrMerchantDisabled.
func (s *Service) Recheck(ctx context.Context, credential string, principal Principal) (Principal, error) {
	now, err := s.Authenticate(ctx, credential, principal.Merchant, nil)
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok && apiErr.Code == apierror.TokenRevoked {
		if _, standingErr := s.users.standing(ctx, principal.UserID, nil); standingErr != nil {
			return Principal{}, standingErr
		}
	}
	return now, err
}
