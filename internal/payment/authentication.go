package payment

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"time"

	"github.com/paygate/paygate/internal/tenant"

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
// canceled as abandoned. Authentication is asked for only when the merchant gave a return_url:
// without a page to come back to, a card that needs it is declined.
//
// The return address carries a secret of the payment's, as Stripe's client_secret rides in the
// address its shoppers come back to: made when a payment with a return_url is, kept only as its
// hash, and never answered to anyone. Without it the return address tells nothing of the payment,
// not even that it exists, whoever guesses or learns its id. Payments made before there were
// secrets have none, so their return address is as closed as any: their webhooks and the expiry
// pass settle them.

// AuthenticationWindow is how long a payment waits for its shopper to authenticate.
const AuthenticationWindow = time.Hour

// Bounds on the addresses a payment keeps, as browsers and providers bound theirs.
const (
	MaxReturnURL     = 2048
	maxNextActionURL = 8192
)

// RedirectToURL is the one kind of next action: send the shopper's browser to a page.
const RedirectToURL = "redirect_to_url"

// ReturnSecretParam is the query parameter of the return address that holds the payment's
// secret; MaxReturnSecret bounds what is taken for one, with room beyond the 26 characters made.
const (
	ReturnSecretParam = "return_secret"
	MaxReturnSecret   = 64
)

// ReturnQuery is the query of the return address of a payment whose return secret is secret.
func ReturnQuery(secret string) string {
	return url.Values{ReturnSecretParam: {secret}}.Encode()
}

// newReturnSecret returns the secret of the return address of a payment made with in, "" when it
// has none: without a return_url (or a return address) no authentication is asked for. It is
// crypto/rand's text: 26 characters, 130 random bits.
func (s *Service) newReturnSecret(in CreateInput) string {
	if s.ReturnAddress == nil || in.ReturnURL == nil {
		return ""
	}
	return rand.Text()
}

// returnSecretHash is what a payment keeps of its return secret, nil for none. A plain SHA-256
// suffices: the secret is random, with nothing to guess from its hash.
func returnSecretHash(secret string) *string {
	if secret == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(secret))
	return new(hex.EncodeToString(sum[:]))
}

// returnSecretMatches reports whether secret is payment p's return secret, in time that does not
// depend on how much of it matches. A payment without one matches nothing.
func returnSecretMatches(p *ent.Payment, secret string) bool {
	sum := sha256.Sum256([]byte(secret))
	want, err := hex.DecodeString(deref(p.ReturnSecretHash))
	return err == nil && len(want) == len(sum) && subtle.ConstantTimeCompare(want, sum[:]) == 1
}

// returnAddress is where p's provider sends its shopper back to: Paygate's return address for
// it with its secret, or "" when it has none, so that no authentication is asked for.
func (s *Service) returnAddress(p *ent.Payment, secret string) string {
	if secret == "" {
		return ""
	}
	return s.ReturnAddress(p.ID, secret)
}

// ShopperReturned settles payment id once its shopper's browser came back from the provider's
// authentication page with the query returned, and answers the payment as it then is: a payment
// with a return_url. The browser carries no credential: the query must hold the payment's return
// secret (ReturnSecretParam), without which, or with another's, the payment is not found, as an id
// that names none, and nothing is written or asked. It asks the provider, never taking the
// browser's word: a payment no longer waiting is answered as it is, and one the provider cannot
// tell of yet stays waiting (its webhook settles it). A payment canceled while it waited is asked
// about too: a shopper who authenticated after all has paid, which Paygate undoes at the provider
// (lateApproval). The browsers coming back at once for one payment share one question to the
// provider.
func (s *Service) ShopperReturned(ctx context.Context, id string, returned url.Values) (*ent.Payment, error) {
	if err := auth.Authorize(ctx, auth.ShopperReturn); err != nil {
		return nil, err
	}
	secret := returned.Get(ReturnSecretParam)
	if len(secret) > MaxReturnSecret {
		return nil, apierror.ForParam(apierror.InvalidRequest, ReturnSecretParam,
			fmt.Sprintf("%s must be at most %d characters", ReturnSecretParam, MaxReturnSecret))
	}
	// The payment's id and secret, which only its return address holds, say whose payment it is.
	ctx = tenant.System(ctx)
	p, err := s.client.Payment.Get(ctx, id)
	switch {
	case ent.IsNotFound(err), err == nil && !returnSecretMatches(p, secret):
		return nil, apierror.ForParam(apierror.NotFound, "id", "no payment has the id "+id)
	case err != nil:
		return nil, err
	case p.Status != state.PaymentRequiresAction && !canceledWhileWaiting(p):
		return p, nil
	}
	// The secret is Paygate's own: the provider is told what it added alone.
	returned = maps.Clone(returned)
	delete(returned, ReturnSecretParam)
	ctx = context.WithoutCancel(ctx)
	settled, err, _ := s.returns.Do(id, func() (any, error) {
		result, err := s.askAuthentication(ctx, p, returned)
		if err != nil {
			s.logger().WarnContext(ctx, "the provider could not tell what became of an authentication: its webhook will settle it",
				"payment_id", p.ID, "provider", p.Provider, "error", err.Error())
			return p, nil
		}
		settled, err := s.recordAuthentication(ctx, p.ID, result)
		if err != nil {
			// The browser is sent on with what is recorded; the webhook settles the payment.
			s.logger().ErrorContext(ctx, "recording an authentication", "payment_id", p.ID, "error", err.Error())
			return p, nil
		}
		return settled, nil
	})
	return settled.(*ent.Payment), err
}

// canceledWhileWaiting reports whether p was canceled while it waited for its shopper, never
// authorised: only an authorisation gets a capture_before.
func canceledWhileWaiting(p *ent.Payment) bool {
	return p.Status == state.PaymentCanceled && p.CaptureBefore == nil
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
func (s *Service) recordAuthentication(ctx context.Context, id string, result provider.ChargeResult) (*ent.Payment, error) {
	var p *ent.Payment
	var v verdict
	err := s.recordOutcome(ctx, func(tx *ent.Tx) error {
		var err error
		if p, err = lockPayment(ctx, tx, id); err != nil {
			return err
		}
		if capturing(p) {
			// Settled and sent for capture while the provider was asked: the answer is about the
			// authorisation, recorded before, and must not take the capture's place. One that says
			// the authorisation failed or was voided contradicts the capture, and needs a person.
			if !result.AwaitsShopper() && !result.Approved || result.Canceled {
				v = attention(fmt.Sprintf("payment %s is being captured, but %s now reports its authorisation declined or voided: check it at %s",
					p.ID, p.Provider, p.Provider))
			} else {
				v = overCapture(p, "the answer")
			}
			return nil
		}
		v, err = s.applyChargeOutcome(ctx, tx, p, chargeAnswered(result), "provider:"+p.Provider, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recording the authentication of payment %s: %w", id, err)
	}
	s.tellPerson(ctx, v, id)
	return p.Unwrap(), nil
}

// settleIfDecided settles payment p, waiting for its shopper, if its provider says it decided;
// it reports whether it did. A provider that cannot be asked (Adyen, without what the browser
// brings back) has decided nothing Paygate can know.
func (s *Service) settleIfDecided(ctx context.Context, p *ent.Payment) (bool, error) {
	result, err := s.askAuthentication(ctx, p, nil)
	if err != nil || result.AwaitsShopper() {
		return false, nil
	}
	_, err = s.recordAuthentication(ctx, p.ID, result)
	return err == nil, err
}

// NextAction says where the shopper of payment p is to be sent while p waits for them: the
// provider's page, and the merchant's return_url they come back to; waits is false otherwise.
// Its type is RedirectToURL.
func NextAction(p *ent.Payment) (redirectURL string, returnURL *string, waits bool) {
	if p.Status != state.PaymentRequiresAction || p.NextActionURL == nil {
		return "", nil, false
	}
	return *p.NextActionURL, p.ReturnURL, true
}

// ReturnTo is where the shopper's browser goes once back from authenticating payment p: the
// merchant's return_url with payment_id and status added to its query, the rest of it as the
// merchant wrote it (a signed URL stays signed); "" when it gave none, which a payment that
// ShopperReturned answers always did.
func ReturnTo(p *ent.Payment) string {
	if p.ReturnURL == nil {
		return ""
	}
	u, err := url.Parse(*p.ReturnURL)
	if err != nil {
		return "" // checked when the payment was made
	}
	added := url.Values{"payment_id": {p.ID}, "status": {string(p.Status)}}.Encode()
	if u.RawQuery != "" {
		added = u.RawQuery + "&" + added
	}
	u.RawQuery, u.ForceQuery = added, false
	return u.String()
}
