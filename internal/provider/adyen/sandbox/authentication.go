package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// challengePath is where the challenge pages are, below the sandbox's pages address.
const challengePath = "/challenge/"

// The refusals of 3-D Secure: Adyen's of a payment whose issuer wants the authentication but that
// asked for none, and of one whose shopper failed it.
var (
	authenticationRequired = [3]string{resultRefused, "38", "Authentication required"}
	notAuthenticated       = [3]string{resultRefused, "11", "3D Not Authenticated"}
)

// invalidRedirectResult refuses a redirectResult the sandbox did not make for a payment decided.
var invalidRedirectResult = sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "000", "Invalid redirectResult", "validation"})

// authentication is what the sandbox keeps of a payment that redirected the shopper.
type authentication struct {
	ReturnURL string `json:"returnUrl"`
	// Challenge is the secret in the address of the payment's challenge page; Result, made once
	// the payment is decided, the secret in its redirectResult. The API never answers either.
	Challenge string `json:"challenge"`
	Result    string `json:"result,omitempty"`
	// ManualCapture holds the authorisation once the shopper authenticated.
	ManualCapture bool `json:"manualCapture,omitempty"`
	// RefusedAfterwards refuses the card even once the shopper authenticated.
	RefusedAfterwards bool `json:"refusedByIssuer,omitempty"`
}

// redirectShopper answers a payment of a card that asks the shopper to authenticate: it keeps the
// payment, awaiting the shopper, and answers with the redirect to its challenge page.
func (s *Sandbox) redirectShopper(ctx context.Context, tx *ent.Tx, req paymentRequest) (sandboxstore.Answer, error) {
	if missing := missingForRedirect(req); missing != "" {
		return sandboxstore.JSON(http.StatusUnprocessableEntity,
			adyenError{422, "000", "3D Secure 2 by redirect needs " + missing, "validation"}), nil
	}
	auth := authentication{ReturnURL: req.ReturnURL, Challenge: newSecret(), ManualCapture: req.AdditionalData["manualCapture"] == "true",
		RefusedAfterwards: req.PaymentMethod.Number == provider.AuthenticateThenDecline}
	payment := paymentAnswer{PSPReference: pspReference(), ResultCode: resultRedirectShopper, MerchantReference: req.Reference, Amount: req.Amount}
	body, err := json.Marshal(storedPayment{paymentAnswer: payment, MerchantAccount: req.MerchantAccount, Authentication: &auth})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.PSPReference, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount.Value, Currency: req.Amount.Currency, Status: resultRedirectShopper, Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	// As Adyen answers a redirect: no pspReference until the payment is decided.
	return sandboxstore.JSON(http.StatusOK, paymentAnswer{ResultCode: resultRedirectShopper, Action: &redirectAction{Type: "redirect",
		PaymentMethodType: "scheme", URL: s.pagesURL + challengePath + seal(payment.PSPReference, auth.Challenge), Method: http.MethodGet}}), nil
}

// asksAuthentication reports whether a payment asks for 3-D Secure: Adyen can authenticate the
// shopper only by sending them to a page that sends them back (returnUrl) or in their browser
// (browserInfo), and a payment with neither asks for nothing of it.
func asksAuthentication(req paymentRequest) bool {
	return req.ReturnURL != "" || req.BrowserInfo != nil
}

// missingForRedirect names what a payment that redirects the shopper lacks of what 3-D Secure 2
// by redirect takes, "" when nothing: a web returnUrl, the Web channel, the browser's details,
// and native authentication turned off (the sandbox has no page for Adyen's JavaScript component).
func missingForRedirect(req paymentRequest) string {
	returnURL, err := url.Parse(req.ReturnURL)
	switch {
	case err != nil || (returnURL.Scheme != "http" && returnURL.Scheme != "https") || returnURL.Host == "":
		return "a returnUrl"
	case req.Channel != "Web":
		return "channel Web"
	case req.BrowserInfo == nil || req.BrowserInfo.UserAgent == "" || req.BrowserInfo.AcceptHeader == "":
		return "browserInfo"
	case req.AuthenticationData.ThreeDSRequestData.NativeThreeDS != "disabled":
		return "authenticationData.threeDSRequestData.nativeThreeDS disabled"
	}
	return ""
}

// describeChallenge says what the shopper on the challenge page id is asked to pay.
func (s *Sandbox) describeChallenge(ctx context.Context, id string) (string, error) {
	var description string
	err := s.store.InTx(ctx, func(tx *ent.Tx) error {
		payment, stored, err := s.awaiting(ctx, tx, id)
		if err != nil {
			return err
		}
		description = fmt.Sprintf("%s asks %d %s (in Adyen's minor units) for payment %s.", stored.MerchantAccount, payment.Amount,
			payment.Currency, payment.Reference)
		return nil
	})
	return description, err
}

// finishChallenge decides the payment of the challenge page id as the shopper's authentication
// says, if it awaits them still (one statement, so that two servers decide it once), sends its
// AUTHORISATION notification, and returns its returnUrl with the redirectResult that
// /payments/details takes.
func (s *Sandbox) finishChallenge(ctx context.Context, id string, completed bool) (string, error) {
	var returnTo string
	err := s.store.InTx(ctx, func(tx *ent.Tx) error {
		payment, stored, err := s.awaiting(ctx, tx, id)
		if err != nil {
			return err
		}
		auth := stored.Authentication
		decision := [3]string{resultAuthorised}
		switch {
		case !completed:
			decision = notAuthenticated
		case auth.RefusedAfterwards:
			decision = refusedByIssuer
		}
		stored.ResultCode, stored.RefusalReasonCode, stored.RefusalReason = decision[0], decision[1], decision[2]
		status := stored.ResultCode
		if status == resultAuthorised && auth.ManualCapture {
			status = statusAwaitingCapture
		}
		auth.Result = newSecret()
		body, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		moved, err := s.store.SetStatus(ctx, tx, payment.ID, resultRedirectShopper, status, body)
		if err != nil {
			return err
		}
		if !moved {
			return provider.ErrNoChallenge
		}
		if returnTo, err = provider.WithQuery(auth.ReturnURL, url.Values{"redirectResult": {seal(payment.ID, auth.Result)}}); err != nil {
			return err
		}
		return s.notifyOnCommit(tx, authorisation(stored))
	})
	return returnTo, err
}

// awaiting returns the payment whose challenge page is id, and what the sandbox keeps of it, if
// it awaits the shopper; provider.ErrNoChallenge otherwise.
func (s *Sandbox) awaiting(ctx context.Context, tx *ent.Tx, id string) (*ent.SandboxObject, storedPayment, error) {
	var stored storedPayment
	reference, secret, ok := unseal(id)
	if !ok {
		return nil, stored, provider.ErrNoChallenge
	}
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return nil, stored, provider.ErrNoChallenge
	case err != nil:
		return nil, stored, err
	case payment.Status != resultRedirectShopper:
		return nil, stored, provider.ErrNoChallenge
	}
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return nil, stored, err
	}
	if stored.Authentication == nil || !sameSecret(secret, stored.Authentication.Challenge) {
		return nil, stored, provider.ErrNoChallenge
	}
	return payment, stored, nil
}

// details answers /payments/details: how the payment whose redirectResult the request carries was
// decided. A redirectResult the sandbox did not make for a payment decided is refused.
func (s *Sandbox) details(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	var req detailsRequest
	if json.Unmarshal(body, &req) != nil {
		return unparsable, nil
	}
	reference, secret, ok := unseal(req.Details.RedirectResult)
	if !ok {
		return invalidRedirectResult, nil
	}
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return invalidRedirectResult, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	}
	var stored storedPayment
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return sandboxstore.Answer{}, err
	}
	if stored.Authentication == nil || stored.Authentication.Result == "" || !sameSecret(secret, stored.Authentication.Result) {
		return invalidRedirectResult, nil
	}
	decided := stored.paymentAnswer
	// A capture or cancellation since changes the payment, not how it was decided.
	decided.ResultCode = resultAuthorised
	if decided.RefusalReasonCode != "" {
		decided.ResultCode = resultRefused
	}
	return sandboxstore.JSON(http.StatusOK, decided), nil
}

// seal is an opaque token naming the payment pspReference with a secret, as Adyen's redirect
// addresses and redirectResults are opaque; unseal reads one back.
func seal(pspReference, secret string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pspReference + "." + secret))
}

func unseal(token string) (pspReference, secret string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", "", false
	}
	pspReference, secret, ok = strings.Cut(string(raw), ".")
	return pspReference, secret, ok && pspReference != "" && secret != ""
}

// newSecret is 128 random bits, in hex.
func newSecret() string {
	secret := make([]byte, 16)
	rand.Read(secret)
	return hex.EncodeToString(secret)
}

func sameSecret(given, kept string) bool {
	return subtle.ConstantTimeCompare([]byte(given), []byte(kept)) == 1
}
