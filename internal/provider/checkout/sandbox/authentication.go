package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// A payment of a 3-D Secure test card waits (Pending) for the shopper, as Checkout.com's do, until
// its challenge page's form decides it, once, whichever server serves it:
//
//	completed, 4000002760003184  approved (10000): Captured, or Authorized for capture false;
//	                             payment_approved, and payment_captured when Captured
//	completed, 4000008400001629  declined (20005); payment_declined
//	failed                       declined (20151); payment_authentication_failed
//
// and sends the browser on (303) to the success_url of an approved payment, to the failure_url of
// another, with cko-session-id added. Checkout.com declines a payment whose shopper has not
// authenticated within authenticationWindow (20152; payment_authentication_failed): the sandbox
// does so when the payment is next read or its page opened. Until it is decided the payment has no
// authorisation, so its captures and voids are not allowed (403) and it refunds nothing; one
// declined as its shopper failed to authenticate, or did not in time, never had one, and its
// actions list none: only its event carries its response code.

// authenticationWindow is how long Checkout.com waits for the shopper to authenticate.
const authenticationWindow = 15 * time.Minute

// unauthenticated reports whether responseCode declines a payment whose shopper failed to
// authenticate or let the authentication lapse: Checkout.com never sent it for authorisation.
func unauthenticated(responseCode string) bool {
	return responseCode == codeAuthenticationFailed || responseCode == codeAuthenticationLapsed
}

// Response codes of 3-D Secure.
const (
	codeAuthenticationFailed   = "20151"
	codeAuthenticationLapsed   = "20152"
	codeAuthenticationRequired = "20154"
)

// authentication is what a payment waiting for the shopper is decided by: never the card's number.
type authentication struct {
	// Capture says the payment is captured once approved, not only authorised.
	Capture bool `json:"capture"`
	// IssuerDeclines says the card is declined even once the shopper authenticated.
	IssuerDeclines bool   `json:"issuer_declines"`
	SuccessURL     string `json:"success_url"`
	FailureURL     string `json:"failure_url"`
}

// awaitShopper makes the payment req asks for wait for the shopper to authenticate on its
// challenge page, and tells of it by payment_pending.
func (s *Sandbox) awaitShopper(ctx context.Context, tx *ent.Tx, req paymentRequest) (sandboxstore.Answer, error) {
	pending := paymentAnswer{ID: prefixid.New("pay"), Amount: req.Amount, Currency: req.Currency, Status: statusPending, Reference: req.Reference}
	stored := storedPayment{paymentAnswer: pending, Metadata: req.Metadata, Links: links{"redirect": {Href: s.pages + "/challenge/" + pending.ID}},
		Authentication: &authentication{Capture: req.Capture == nil || *req.Capture, IssuerDeclines: req.Source.Number == provider.AuthenticateThenDecline,
			SuccessURL: req.SuccessURL, FailureURL: req.FailureURL}}
	body, err := json.Marshal(stored)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: pending.ID, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount, Currency: req.Currency, Status: statusPending, Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	answer := pendingAnswer{ID: pending.ID, Status: statusPending, Reference: req.Reference, Links: stored.Links}
	return sandboxstore.JSON(http.StatusAccepted, answer), s.emitOnCommit(tx, eventPaymentPending, s.paymentEventOf(pending))
}

// charge reads the payment id as it stands (current).
func (s *Sandbox) charge(ctx context.Context, id string) (*ent.SandboxObject, error) {
	charge, err := s.store.Get(ctx, sandboxobject.KindCharge, id)
	if err != nil {
		return nil, err
	}
	return s.current(ctx, charge)
}

// current is the payment charge as it stands: one that waited for the shopper longer than
// authenticationWindow is declined first, as Checkout.com would have declined it by then.
func (s *Sandbox) current(ctx context.Context, charge *ent.SandboxObject) (*ent.SandboxObject, error) {
	if charge.Status != statusPending || s.store.Now().Sub(charge.CreatedAt) < authenticationWindow {
		return charge, nil
	}
	lapsed := decision{status: statusDeclined, code: codeAuthenticationLapsed,
		summary: "Initial 3DS transaction not completed within 15 minutes", event: eventPaymentAuthenticationFailed}
	if _, _, err := s.decide(ctx, charge, func(authentication) decision { return lapsed }); err != nil {
		return nil, err
	}
	return s.store.Get(ctx, sandboxobject.KindCharge, charge.ID)
}

// waiting reads the payment id waiting for the shopper, or fails with provider.ErrNoChallenge.
func (s *Sandbox) waiting(ctx context.Context, id string) (*ent.SandboxObject, error) {
	charge, err := s.charge(ctx, id)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return nil, provider.ErrNoChallenge
	case err != nil:
		return nil, err
	case charge.Status != statusPending:
		return nil, provider.ErrNoChallenge
	}
	return charge, nil
}

// describeChallenge says what the shopper of the payment id is asked to pay.
func (s *Sandbox) describeChallenge(ctx context.Context, id string) (string, error) {
	charge, err := s.waiting(ctx, id)
	if err != nil {
		return "", err
	}
	amount, err := s.counting.Amount(charge.Amount, charge.Currency)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Pay %s %s, reference %s.", amount, charge.Currency, charge.Reference), nil
}

// finishChallenge decides the payment id as the shopper completed its authentication or failed
// it, and returns where Checkout.com sends the browser then.
func (s *Sandbox) finishChallenge(ctx context.Context, id string, completed bool) (string, error) {
	charge, err := s.waiting(ctx, id)
	if err != nil {
		return "", err
	}
	decided, stored, err := s.decide(ctx, charge, func(a authentication) decision {
		switch {
		case !completed:
			return decision{status: statusDeclined, code: codeAuthenticationFailed, summary: "Cardholder failed 3D-Secure authentication",
				event: eventPaymentAuthenticationFailed}
		case a.IssuerDeclines:
			return decision{status: statusDeclined, code: codeDeclined, summary: "Declined - Do Not Honour", event: eventPaymentDeclined}
		case a.Capture:
			return decision{status: statusCaptured, code: codeApproved, summary: "Approved", event: eventPaymentApproved}
		}
		return decision{status: statusAuthorized, code: codeApproved, summary: "Approved", event: eventPaymentApproved}
	})
	if err != nil {
		return "", err
	}
	if !decided {
		return "", provider.ErrNoChallenge // decided through another server meanwhile
	}
	back := stored.Authentication.FailureURL
	if stored.Approved {
		back = stored.Authentication.SuccessURL
	}
	return provider.WithQuery(back, url.Values{"cko-session-id": {prefixid.New("sid")}})
}

// decision is how a payment waiting for the shopper is decided: its status, its authorization's
// response code and summary, and the event that tells of it.
type decision struct {
	status, code, summary, event string
}

// decide decides the payment charge, waiting for the shopper, as choose says from its
// authentication, if it waits still: one statement, so that servers deciding it at once decide
// it once. Its events are sent once that is committed. It returns whether it decided it, and the
// payment as decided.
func (s *Sandbox) decide(ctx context.Context, charge *ent.SandboxObject, choose func(authentication) decision) (bool, storedPayment, error) {
	var stored storedPayment
	if err := json.Unmarshal(charge.Body, &stored); err != nil {
		return false, storedPayment{}, err
	}
	if stored.Authentication == nil {
		return false, storedPayment{}, fmt.Errorf("checkout sandbox: payment %s waits with nothing to decide it by", charge.ID)
	}
	d := choose(*stored.Authentication)
	stored.Status, stored.Approved, stored.ResponseCode, stored.ResponseSummary = d.status, d.status != statusDeclined, d.code, d.summary
	stored.ActionID, stored.Links = prefixid.New("act"), nil
	var capture actionAnswer // a payment captured at once: its capture
	if d.status == statusCaptured {
		capture = actionAnswer{ActionID: prefixid.New("act"), Reference: stored.Reference}
		stored.CaptureOrVoid = s.approvedAction(actionCapture, capture, charge.Amount)
	}
	body, err := json.Marshal(stored)
	if err != nil {
		return false, storedPayment{}, err
	}
	decided := false
	err = s.store.InTx(ctx, func(tx *ent.Tx) error {
		moved, err := s.store.SetStatus(ctx, tx, charge.ID, statusPending, d.status, body)
		if err != nil || !moved {
			return err
		}
		decided = true
		if err := s.emitOnCommit(tx, d.event, s.paymentEventOf(stored.paymentAnswer)); err != nil || capture.ActionID == "" {
			return err
		}
		return s.emitOnCommit(tx, eventPaymentCaptured, s.actionEventOf(charge, capture, charge.Amount))
	})
	return decided, stored, err
}
