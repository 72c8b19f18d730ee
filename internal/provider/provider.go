// Package provider is the boundary to the card processors: one interface that every adapter (the
// built-in sandbox now; Stripe, Adyen and Checkout.com next) implements.
package provider

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
)

// ChargeRequest asks a provider to charge a card.
type ChargeRequest struct {
	PaymentID   string // our ID, sent as the provider's idempotency key and reference
	Amount      money.Amount
	Card        card.Card
	Description string
}

// ChargeResult is the provider's answer to a charge it processed. A decline is a result, not an
// error: the card was looked at and refused.
type ChargeResult struct {
	ProviderPaymentID string
	Approved          bool
	// DeclineCode is card_declined, insufficient_funds or expired_card when not approved.
	DeclineCode string
	// RawDeclineCode is the decline as the provider gave it (Stripe's decline_code, Adyen's
	// refusalReasonCode, Checkout.com's response_code), for support and reconciliation.
	RawDeclineCode string
	DeclineMessage string
}

// ErrUnavailable means the provider declared it could not process the request (outage, refused
// connection, a 5xx that says so): nothing happened, and another provider may be tried. Any other
// error, a timeout above all, leaves the outcome unknown: the payment or refund stays in flight
// (processing, pending) and is never retried as if nothing happened.
var ErrUnavailable = errors.New("the payment provider is unavailable")

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
