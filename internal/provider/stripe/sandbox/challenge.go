package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// challenged reads the PaymentIntent (found, or the error of finding it) whose challenge page the
// shopper is on, failing with provider.ErrNoChallenge unless it waits for them there.
func challenged(object *ent.SandboxObject, err error) (*ent.SandboxObject, *stripego.PaymentIntent, error) {
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return nil, nil, provider.ErrNoChallenge
	case err != nil:
		return nil, nil, err
	case object.Status != string(stripego.PaymentIntentStatusRequiresAction):
		return nil, nil, provider.ErrNoChallenge
	}
	var intent stripego.PaymentIntent
	if err := json.Unmarshal(object.Body, &intent); err != nil {
		return nil, nil, err
	}
	if intent.NextAction == nil || intent.NextAction.RedirectToURL == nil || intent.PaymentMethod == nil || intent.PaymentMethod.Card == nil {
		return nil, nil, provider.ErrNoChallenge // use_stripe_sdk: the authentication is Stripe.js's
	}
	return object, &intent, nil
}

// describeChallenge says what the shopper authenticates: the amount and the card.
func (s *Sandbox) describeChallenge(ctx context.Context, id string) (string, error) {
	_, intent, err := challenged(s.store.Get(ctx, sandboxobject.KindCharge, id))
	if err != nil {
		return "", err
	}
	amount, err := s.counting.Amount(intent.Amount, strings.ToUpper(string(intent.Currency)))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Pay %s %s with the card ending in %s.", amount, amount.Currency, intent.PaymentMethod.Card.Last4), nil
}

// finishChallenge decides the PaymentIntent as Stripe does once the shopper is done on its
// 3-D Secure page, sends the event that tells of it, and returns the return_url with what Stripe
// adds to it. The move from requires_action is conditional: of submissions on several servers at
// once, one decides, and the others find no challenge.
func (s *Sandbox) finishChallenge(ctx context.Context, id string, completed bool) (string, error) {
	var returnTo string
	err := s.store.InTx(ctx, func(tx *ent.Tx) error {
		object, intent, err := challenged(s.store.GetIn(ctx, tx, sandboxobject.KindCharge, id))
		if err != nil {
			return err
		}
		status, fields, event := afterAuthentication(intent, completed)
		fields["status"], fields["next_action"] = status, nil
		body, err := reshape(object.Body, fields)
		if err != nil {
			return err
		}
		moved, err := s.store.SetStatus(ctx, tx, id, object.Status, string(status), body)
		switch {
		case err != nil:
			return err
		case !moved:
			return provider.ErrNoChallenge
		}
		// No API request caused the decision: the event names none.
		if err := s.emitOnCommit(tx, event, body, ""); err != nil {
			return err
		}
		redirectStatus := "succeeded"
		if status == stripego.PaymentIntentStatusRequiresPaymentMethod {
			redirectStatus = "failed"
		}
		returnTo, err = provider.WithQuery(intent.NextAction.RedirectToURL.ReturnURL, url.Values{"payment_intent": {id},
			"payment_intent_client_secret": {intent.ClientSecret}, "redirect_status": {redirectStatus}})
		return err
	})
	return returnTo, err
}

// authenticationFailed is Stripe's error of a PaymentIntent whose shopper failed to authenticate.
var authenticationFailed = stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodePaymentIntentAuthenticationFailure,
	DocURL: "https://stripe.com/docs/error-codes/payment-intent-authentication-failure",
	Msg: "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod " +
		"to attempt to fulfill this PaymentIntent again."}

// afterAuthentication is what becomes of a PaymentIntent once the shopper completed its
// authentication or failed it: its status, the other fields that change, and its event. A failed
// authentication charges nothing; the card declined after it was charged, and declined. Either
// way Stripe takes the card off the intent, as it does a declined one.
func afterAuthentication(intent *stripego.PaymentIntent, completed bool) (stripego.PaymentIntentStatus, map[string]any, stripego.EventType) {
	charge := chargeID(intent.ID)
	switch {
	case !completed:
		return stripego.PaymentIntentStatusRequiresPaymentMethod, map[string]any{"payment_method": nil, "last_payment_error": authenticationFailed},
			stripego.EventTypePaymentIntentPaymentFailed
	case intent.PaymentMethod.Card.Last4 == lastFour(provider.AuthenticateThenDecline):
		return stripego.PaymentIntentStatusRequiresPaymentMethod,
			map[string]any{"payment_method": nil, "last_payment_error": genericDecline, "latest_charge": charge},
			stripego.EventTypePaymentIntentPaymentFailed
	case intent.CaptureMethod == stripego.PaymentIntentCaptureMethodManual:
		return stripego.PaymentIntentStatusRequiresCapture, map[string]any{"amount_capturable": intent.Amount, "latest_charge": charge},
			stripego.EventTypePaymentIntentAmountCapturableUpdated
	}
	return stripego.PaymentIntentStatusSucceeded, map[string]any{"amount_received": intent.Amount, "latest_charge": charge},
		stripego.EventTypePaymentIntentSucceeded
}
