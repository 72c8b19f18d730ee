// Package provider is the boundary to the card processors: one interface that every adapter (the
// built-in sandbox, Stripe, Adyen and Checkout.com) implements, and one through which the
// adapters that can be asked look up outcomes Paygate lost.
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
)

// ChargeRequest asks a provider to charge a card.
type ChargeRequest struct {
	PaymentID   string // our ID, sent as the provider's idempotency key and reference
	Amount      money.Amount
	Card        card.Card
	Description string
	// HolderName is the customer's name, as the card's holder: Adyen's holderName, Checkout.com's
	// source.name; "" when the customer gave none.
	HolderName string
	// CaptureManually asks for an authorisation only: the amount is held on the card until a
	// Capturer captures it or cancels the hold (Stripe's capture_method=manual, Adyen's manual
	// capture, Checkout.com's capture:false).
	CaptureManually bool
	// ReturnURL is where the provider sends the shopper's browser back to once they have
	// authenticated (3-D Secure): Paygate's return address for the payment. Only a charge with
	// one asks for authentication; without one (the merchant has no page for the shopper to come
	// back to) a card that needs it is declined.
	ReturnURL string
}

// ChargeResult is the provider's answer to a charge it processed. A decline is a result, not an
// error: the card was looked at and refused.
type ChargeResult struct {
	ProviderPaymentID string
	// Approved means the card was charged or, for a charge asked to capture manually, that the
	// amount was authorised and is held.
	Approved bool
	// Captured is, for a charge asked to capture manually, how much of it the provider reports
	// captured, in Paygate's minor units: 0 while the authorisation only holds the amount.
	// Canceled says the authorisation was voided (canceled or expired) at the provider.
	Captured int64
	Canceled bool
	// DeclineCode is card_declined, insufficient_funds or expired_card when not approved.
	DeclineCode string
	// RawDeclineCode is the decline as the provider gave it (Stripe's decline_code, Adyen's
	// refusalReasonCode, Checkout.com's response_code), for support and reconciliation.
	RawDeclineCode string
	DeclineMessage string
	// RedirectURL, when set, says the provider asks the shopper to authenticate before it
	// decides: their browser goes there (Stripe's next_action.redirect_to_url.url, Adyen's
	// action.url, Checkout.com's _links.redirect.href) and comes back to the request's ReturnURL.
	// The charge is then neither approved nor declined yet.
	RedirectURL string
}

// AwaitsShopper reports whether the provider waits for the shopper to authenticate.
func (r ChargeResult) AwaitsShopper() bool { return r.RedirectURL != "" }

// ErrUnavailable means the provider declared it could not process the request (outage, refused
// connection, a 5xx that says so): nothing happened, and another provider may be tried. Any other
// error, a timeout above all, leaves the outcome unknown: the payment or refund stays in flight
// (processing, pending) and is never retried as if nothing happened.
var ErrUnavailable = errors.New("the payment provider is unavailable")

// ErrOutage, beside ErrUnavailable, says the provider itself is failing or refuses every request
// of ours (a 503, a connection refused, a processing error, refused credentials, a rate limit),
// not this one request (another 4xx, an amount it cannot take): only outages count against its
// circuit, so requests the providers refuse one by one cannot switch them off.
var ErrOutage = errors.New("the payment provider is down")

// RefundRequest asks a provider to give back part or all of a charge.
type RefundRequest struct {
	RefundID          string // our ID, sent as the provider's idempotency key
	ProviderPaymentID string
	Amount            money.Amount
}

// RefundResult is the provider's answer to a refund it accepted.
type RefundResult struct {
	ProviderRefundID string
	// Pending means the provider took the refund and will say later, by webhook, whether it
	// went through (Adyen, Checkout.com); until then the refund holds its amount.
	Pending bool
}

// Provider charges cards and refunds charges.
type Provider interface {
	Name() string
	Charge(ctx context.Context, req ChargeRequest) (ChargeResult, error)
	Refund(ctx context.Context, req RefundRequest) (RefundResult, error)
}

// Reconciler finds out what became of a charge or refund whose outcome Paygate does not know. An
// error means the provider could not tell now: ask again later.
//
// Not found is final only once the provider has had time to record what reached it: Stripe finds
// charges through its search, which trails them by under a minute (up to an hour during its
// incidents), and Checkout.com lists a refund among its payment's actions once it has processed
// it. So an outcome is asked about only after it has been in doubt for longer than that.
// Adyen has no look-up, so its adapter is no Reconciler: its notifications settle its outcomes.
type Reconciler interface {
	// LookupCharge finds the charge made for Paygate's payment id (its reference/metadata at the
	// provider). found is false when the provider has no charge for it: nothing was charged. A
	// charge waiting for the shopper to authenticate is found, with its RedirectURL; one the
	// provider has not decided otherwise is an error, as any answer that cannot tell.
	LookupCharge(ctx context.Context, paymentID string) (result ChargeResult, found bool, err error)
	// LookupRefund tells whether the refund (Paygate's id refundID; the provider's id
	// providerRefundID when known, "" otherwise) of the charge providerPaymentID has settled.
	LookupRefund(ctx context.Context, providerPaymentID, refundID, providerRefundID string) (RefundStatus, error)
}

// RefundLister lists the refunds of a charge, for an event that says its refunds changed without
// naming them (Stripe's charge.refunded since API version 2022-11-15).
type RefundLister interface {
	ListRefunds(ctx context.Context, providerPaymentID string) ([]RefundNotice, error)
}

// Capturer captures or voids authorisations made with ChargeRequest.CaptureManually. Its errors
// mean what Charge's do: provider.ErrUnavailable when the provider did nothing (it refused the
// request: the authorisation is gone, the amount is more than it holds), any other error an
// outcome unknown.
type Capturer interface {
	Capture(ctx context.Context, req CaptureRequest) (CaptureResult, error)
	Cancel(ctx context.Context, req CancelRequest) (CancelResult, error)
}

// CaptureRequest asks the provider to capture all or part of an authorisation; what is not
// captured is released.
type CaptureRequest struct {
	PaymentID         string // Paygate's payment id: the provider's reference
	ProviderPaymentID string
	Amount            money.Amount
	// IdempotencyKey is sent with the request, so a retry never captures twice.
	IdempotencyKey string
}

// CaptureResult is the provider's answer to a capture it accepted.
type CaptureResult struct {
	// Pending means the provider took the capture and confirms it later by webhook (Adyen's
	// CAPTURE or CAPTURE_FAILED, Checkout.com's payment_captured or payment_capture_declined);
	// otherwise the amount is captured.
	Pending bool
}

// CancelRequest asks the provider to void an authorisation, releasing all of it.
type CancelRequest struct {
	PaymentID         string // Paygate's payment id: the provider's reference
	ProviderPaymentID string
	// Reason is Paygate's cancellation reason: requested_by_customer, duplicate, fraudulent,
	// abandoned or expired.
	Reason string
	// IdempotencyKey is sent with the request, so a retry never voids twice.
	IdempotencyKey string
}

// CancelResult is the provider's answer to a cancellation it accepted.
type CancelResult struct {
	// Pending means the provider took the cancellation and confirms it later by webhook (Adyen's
	// CANCELLATION, Checkout.com's payment_voided); otherwise the authorisation is void.
	Pending bool
}

// Authenticator finishes a charge that waited for the shopper to authenticate, once their browser
// came back from the provider's page: it asks the provider what became of the charge (Stripe's
// and Checkout.com's look-up of the payment, Adyen's /payments/details with the redirectResult
// the browser brought back), never taking the browser's word for it.
type Authenticator interface {
	// Authenticated returns the charge's outcome: approved or declined once the provider decided,
	// with RedirectURL still set while it waits for the shopper. An error means the provider
	// could not tell now: the provider's webhook or a later return settles it.
	Authenticated(ctx context.Context, req AuthenticationRequest) (ChargeResult, error)
}

// AuthenticationRequest asks what became of a charge the shopper was asked to authenticate.
type AuthenticationRequest struct {
	PaymentID         string // Paygate's payment id: the provider's reference
	ProviderPaymentID string // the provider's id of the charge, "" when it gave none yet
	// Returned is the query string the provider's page sent the browser back with (Stripe's
	// payment_intent, Adyen's redirectResult, Checkout.com's cko-session-id): passed on to the
	// provider where its API takes it, never trusted alone.
	Returned url.Values
}

// ErrNothingToCancel, beside ErrUnavailable, says the provider refused to cancel a charge that
// waits for the shopper because it holds nothing to cancel yet (Adyen before it named the charge,
// Checkout.com before the authorisation): it lapses there by itself.
var ErrNothingToCancel = fmt.Errorf("%w: nothing to cancel yet", ErrUnavailable)

// RefundStatus is what became of a refund, as its provider tells it.
type RefundStatus string

const (
	// RefundPending: the provider holds the refund and has not settled it yet; ask again later.
	RefundPending RefundStatus = "pending"
	// RefundSucceeded: the amount went back to the card.
	RefundSucceeded RefundStatus = "succeeded"
	// RefundFailed: the provider settled the refund as failed; nothing went back, and the amount
	// can be refunded again.
	RefundFailed RefundStatus = "failed"
	// RefundNotFound: the provider has no such refund; the request never reached it, and nothing
	// was refunded.
	RefundNotFound RefundStatus = "not_found"
)

// WebAddress reports whether address is an absolute http or https URL, with a host and no user,
// that a shopper's browser can be sent to.
func WebAddress(address string) bool {
	u, err := url.Parse(address)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.User == nil
}
