package payment

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
)

// A card that needs the shopper to authenticate (3-D Secure) makes a payment that waits for them
// (requires_action) with the provider's page to send them to. The provider sends their browser
// back to Paygate's return address for the payment, which asks the provider what became of it
// and sends the browser on to the merchant's return_url. The provider's webhook settles the
// payment too, if the browser never comes back; one still waiting after AuthenticationWindow is
// canceled as abandoned.

// AuthenticationWindow is how long a payment waits for its shopper to authenticate.
const AuthenticationWindow = time.Hour

// maxReturnURL bounds the merchant's return_url, as browsers and providers bound addresses.
const maxReturnURL = 2048

// webAddress reports whether address is an absolute http or https URL a browser can be sent to.
func webAddress(address string) bool {
	u, err := url.Parse(address)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// returnAddress is where the provider sends the shopper of payment id back to.
func (s *Service) returnAddress(id string) string {
	if s.ReturnAddress == nil {
		return ""
	}
	return s.ReturnAddress(id)
}

// ShopperReturned settles payment id once its shopper's browser came back from the provider's
// authentication page with the query returned, and answers the payment as it then is. It asks
// the provider, never taking the browser's word: a payment no longer waiting is answered as it is,
// and one the provider cannot tell of yet stays waiting (its webhook settles it). Anyone with the
// payment's id may call it, as the browser carries no credential: it reveals only the status.
func (s *Service) ShopperReturned(ctx context.Context, id string, returned url.Values) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.ShopperReturn); err != nil {
		return nil, err
	}
	p, err := s.client.Payment.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no payment has the id "+id)
	}
	if err != nil || p.Status != state.PaymentRequiresAction {
		return p, err
	}
	ctx = context.WithoutCancel(ctx)
	result, err := s.askAuthentication(ctx, p, returned)
	if err != nil {
		s.logger().WarnContext(ctx, "the provider could not tell what became of an authentication: its webhook will settle it",
			"payment_id", p.ID, "provider", p.Provider, "error", err.Error())
		return p, nil
	}
	return s.recordAuthentication(ctx, p.ID, result, "provider:"+p.Provider)
}

// askAuthentication asks payment p's provider what became of the charge its shopper was asked to
// authenticate, with what the browser brought back (nil when it did not come back).
func (s *Service) askAuthentication(ctx context.Context, p *ent.Payment, returned url.Values) (provider.ChargeResult, error) {
	charger, _ := s.router.Provider(p.Provider)
	authenticator, ok := charger.(provider.Authenticator)
	if !ok {
		return provider.ChargeResult{}, fmt.Errorf("the payment's provider %q cannot be asked about authentications on this server", p.Provider)
	}
	callCtx, cancel := context.WithTimeout(ctx, providerCallLimit)
	defer cancel()
	return authenticator.Authenticated(callCtx, provider.AuthenticationRequest{
		PaymentID: p.ID, ProviderPaymentID: deref(p.ProviderPaymentID), Returned: returned})
}

// recordAuthentication records what the provider says became of payment id's authentication.
func (s *Service) recordAuthentication(ctx context.Context, id string, result provider.ChargeResult, actor string) (*ent.Payment, error) {
	var p *ent.Payment
	var v verdict
	err := s.recordOutcome(ctx, func(tx *ent.Tx) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		v, err = s.applyChargeOutcome(ctx, tx, p, chargeAnswered(result), actor, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recording the authentication of payment %s: %w", id, err)
	}
	s.tellPerson(ctx, v, id)
	return p.Unwrap(), nil
}

// abandon settles payment p, left waiting for its shopper past its authenticate_before: as the
// provider decided, if it has, else canceled as abandoned. It reports whether it canceled p.
func (s *Service) abandon(ctx context.Context, p *ent.Payment) (bool, error) {
	if result, err := s.askAuthentication(ctx, p, nil); err == nil && !result.AwaitsShopper() {
		settled, err := s.recordAuthentication(ctx, p.ID, result, "provider:"+p.Provider)
		return err == nil && settled.Status == state.PaymentCanceled, err
	}
	claimed := true
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		locked, err := lockPayment(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if locked.Status != state.PaymentRequiresAction || locked.PendingAction != nil {
			claimed = false // settled, canceled or claimed meanwhile
			return nil
		}
		*p = *locked
		return s.claimCancel(ctx, tx, p, state.CanceledAbandoned)
	})
	if err != nil || !claimed {
		return false, err
	}
	settled, err := s.cancelAtProvider(ctx, nil, p, "system")
	if err != nil {
		if _, refused := errors.AsType[*apierror.Error](err); refused {
			return false, nil // the provider refused: asked again on the next pass
		}
		return false, err
	}
	return settled.Status == state.PaymentCanceled, nil
}

// NextAction says where the shopper of payment p is to be sent while p waits for them: the
// provider's page, and the merchant's return_url they come back to; waits is false otherwise.
func NextAction(p *ent.Payment) (redirectURL string, returnURL *string, waits bool) {
	if p.Status != state.PaymentRequiresAction || p.NextActionURL == nil {
		return "", nil, false
	}
	return *p.NextActionURL, p.ReturnURL, true
}

// ReturnTo is where the shopper's browser goes once back from authenticating payment p: the
// merchant's return_url with payment_id and status added to its query; "" when it gave none.
func ReturnTo(p *ent.Payment) string {
	if p.ReturnURL == nil {
		return ""
	}
	u, err := url.Parse(*p.ReturnURL)
	if err != nil {
		return "" // checked when the payment was made
	}
	query := u.Query()
	query.Set("payment_id", p.ID)
	query.Set("status", string(p.Status))
	u.RawQuery = query.Encode()
	return u.String()
}
