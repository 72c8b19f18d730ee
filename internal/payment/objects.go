package payment

import (
	"encoding/json"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// Object is a payment as merchants see it: the REST API's answers and the events' data.object.
// Amounts are JSON numbers written from their exact decimal text.
type Object struct {
	ID                string              `json:"id"`
	Object            string              `json:"object"`
	Amount            json.Number         `json:"amount"`
	Currency          string              `json:"currency"`
	Status            state.PaymentStatus `json:"status"`
	PaymentMethod     card.PaymentMethod  `json:"payment_method"`
	Customer          CustomerObject      `json:"customer"`
	Card              CardObject          `json:"card"`
	Provider          string              `json:"provider"`
	ProviderPaymentID *string             `json:"provider_payment_id"`
	// ProviderDeclineCode is the decline as the provider gave it.
	ProviderDeclineCode *string                `json:"provider_decline_code"`
	Routing             *state.RoutingDecision `json:"routing"`
	AmountRefunded      json.Number            `json:"amount_refunded"`
	CaptureMethod       state.CaptureMethod    `json:"capture_method"`
	// AmountCapturable is what an authorisation still holds; AmountCaptured what was captured.
	AmountCapturable   json.Number               `json:"amount_capturable"`
	AmountCaptured     json.Number               `json:"amount_captured"`
	CaptureBefore      *Timestamp                `json:"capture_before"`
	CanceledAt         *Timestamp                `json:"canceled_at"`
	CancellationReason *state.CancellationReason `json:"cancellation_reason"`
	// ReturnURL is the merchant's page the shopper comes back to after authenticating;
	// NextAction what the shopper must do while the payment is requires_action.
	ReturnURL      *string           `json:"return_url"`
	NextAction     *NextActionObject `json:"next_action"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Description    *string           `json:"description"`
	// DisputedAt is when the provider reported the cardholder's dispute, with its reason.
	DisputedAt    *Timestamp `json:"disputed_at"`
	DisputeReason *string    `json:"dispute_reason"`
	// ReversalStatus says, of a payment canceled while it waited for its shopper that its
	// provider approved afterwards, how Paygate is undoing that approval there, and
	// ReversalFailureMessage why it could not.
	ReversalStatus         *state.ReversalStatus `json:"reversal_status"`
	ReversalFailureMessage *string               `json:"reversal_failure_message"`
	Metadata               map[string]string     `json:"metadata"`
	CreatedAt              Timestamp             `json:"created_at"`
	UpdatedAt              Timestamp             `json:"updated_at"`
	// StatusHistory is only on a payment read by its id.
	StatusHistory []StatusChange `json:"status_history,omitempty"`
}

// NextActionObject is a step the shopper takes: redirect_to_url, to the provider's page.
type NextActionObject struct {
	Type          string         `json:"type"`
	RedirectToURL RedirectObject `json:"redirect_to_url"`
}

type RedirectObject struct {
	URL       string  `json:"url"`
	ReturnURL *string `json:"return_url"`
}

type CustomerObject struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

type CardObject struct {
	Brand       string `json:"brand"`
	Last4       string `json:"last4"`
	ExpMonth    int    `json:"exp_month"`
	ExpYear     int    `json:"exp_year"`
	Fingerprint string `json:"fingerprint"`
}

// ObjectOf is payment p as merchants see it.
func ObjectOf(p *ent.Payment) Object {
	return Object{
		ID:                     p.ID,
		Object:                 "payment",
		Amount:                 json.Number(money.Amount{Minor: p.Amount, Currency: p.Currency}.String()),
		Currency:               p.Currency,
		Status:                 p.Status,
		PaymentMethod:          p.PaymentMethod,
		Customer:               CustomerObject{Email: p.CustomerEmail, Name: p.CustomerName},
		Card:                   CardObject{Brand: p.CardBrand, Last4: p.CardLast4, ExpMonth: p.CardExpMonth, ExpYear: p.CardExpYear, Fingerprint: p.CardFingerprint},
		Provider:               p.Provider,
		ProviderPaymentID:      p.ProviderPaymentID,
		ProviderDeclineCode:    p.ProviderDeclineCode,
		Routing:                p.Routing,
		AmountRefunded:         json.Number(money.Amount{Minor: p.AmountRefunded, Currency: p.Currency}.String()),
		CaptureMethod:          p.CaptureMethod,
		AmountCapturable:       json.Number(money.Amount{Minor: p.AmountCapturable, Currency: p.Currency}.String()),
		AmountCaptured:         json.Number(money.Amount{Minor: p.AmountCaptured, Currency: p.Currency}.String()),
		CaptureBefore:          timestampOrNil(p.CaptureBefore),
		CanceledAt:             timestampOrNil(p.CanceledAt),
		CancellationReason:     p.CancellationReason,
		ReturnURL:              p.ReturnURL,
		NextAction:             nextActionOf(p),
		FailureCode:            p.FailureCode,
		FailureMessage:         p.FailureMessage,
		Description:            p.Description,
		DisputedAt:             timestampOrNil(p.DisputedAt),
		DisputeReason:          p.DisputeReason,
		ReversalStatus:         p.ReversalStatus,
		ReversalFailureMessage: p.ReversalFailureMessage,
		Metadata:               p.MetadataOrEmpty(),
		CreatedAt:              TimestampOf(p.CreatedAt),
		UpdatedAt:              TimestampOf(p.UpdatedAt),
	}
}

func nextActionOf(p *ent.Payment) *NextActionObject {
	redirectURL, returnURL, waits := NextAction(p)
	if !waits {
		return nil
	}
	return &NextActionObject{Type: RedirectToURL, RedirectToURL: RedirectObject{URL: redirectURL, ReturnURL: returnURL}}
}

// RefundObject is a refund as merchants see it.
type RefundObject struct {
	ID          string             `json:"id"`
	Object      string             `json:"object"`
	PaymentID   string             `json:"payment_id"`
	Amount      json.Number        `json:"amount"`
	Currency    string             `json:"currency"`
	Status      state.RefundStatus `json:"status"`
	Reason      *string            `json:"reason"`
	FailureCode *string            `json:"failure_code"`
	CreatedAt   Timestamp          `json:"created_at"`
}

// RefundObjectOf is refund r as merchants see it.
func RefundObjectOf(r *ent.Refund) RefundObject {
	return RefundObject{
		ID:          r.ID,
		Object:      "refund",
		PaymentID:   r.PaymentID,
		Amount:      json.Number(money.Amount{Minor: r.Amount, Currency: r.Currency}.String()),
		Currency:    r.Currency,
		Status:      r.Status,
		Reason:      r.Reason,
		FailureCode: r.FailureCode,
		CreatedAt:   TimestampOf(r.CreatedAt),
	}
}

// StatusChange is one entry of a payment's status_history; from is null on its creation.
type StatusChange struct {
	From   *state.PaymentStatus `json:"from"`
	To     state.PaymentStatus  `json:"to"`
	Reason string               `json:"reason"`
	Actor  string               `json:"actor"`
	At     Timestamp            `json:"at"`
}

// Timestamp is a time in an object merchants see, in UTC, written in JSON as time.Time writes
// itself (RFC 3339, with the fraction of a second it has). It writes itself as text, which
// encoding/json quotes as it copies, where the output of time.Time's MarshalJSON is checked and
// copied once more: a page of 20 payments holds 40 times or more.
type Timestamp time.Time

// TimestampOf is t as a Timestamp, in UTC.
func TimestampOf(t time.Time) Timestamp { return Timestamp(t.UTC()) }

func (t Timestamp) MarshalText() ([]byte, error) { return time.Time(t).MarshalText() }

func (t *Timestamp) UnmarshalText(text []byte) error { return (*time.Time)(t).UnmarshalText(text) }

func timestampOrNil(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	utc := TimestampOf(*t)
	return &utc
}

// SampleObject is the object a test event of eventType shows, in the shape of a real one: a
// payment of 10.00 USD through providerName (ids pay_test_..., described and labelled as a test),
// or a refund of all of it.
func SampleObject(eventType, providerName string, at time.Time) any {
	at = at.UTC()
	p := &ent.Payment{
		ID: prefixid.New("pay_test"), Amount: 1000, Currency: "USD", Status: state.PaymentSucceeded,
		PaymentMethod: card.MethodCreditCard, CustomerEmail: "test@example.com", CustomerName: "Test Customer",
		CardBrand: "visa", CardLast4: "4242", CardExpMonth: 12, CardExpYear: at.Year() + 1, CardFingerprint: "test_fingerprint",
		Provider: providerName, CaptureMethod: state.CaptureAutomatic, AmountCaptured: 1000,
		Description: new("Paygate test webhook"), Metadata: map[string]string{"paygate_test": "true"},
		CreatedAt: at, UpdatedAt: at,
	}
	r := &ent.Refund{ID: prefixid.New("re_test"), PaymentID: p.ID, Amount: p.Amount, Currency: p.Currency,
		Status: state.RefundSucceeded, Reason: new("requested_by_customer"), CreatedAt: at}
	switch eventType {
	case event.PaymentFailed:
		p.Status, p.AmountCaptured = state.PaymentFailed, 0
		p.FailureCode, p.FailureMessage = new("card_declined"), new("The card was declined.")
	case event.PaymentProcessing:
		p.Status, p.AmountCaptured = state.PaymentProcessing, 0
	case event.PaymentRequiresAction:
		p.Status, p.AmountCaptured = state.PaymentRequiresAction, 0
		p.ReturnURL, p.NextActionURL = new("https://shop.example/orders/test"), new("https://provider.example/authenticate/test")
	case event.PaymentRequiresCapture:
		p.Status, p.CaptureMethod, p.AmountCaptured, p.AmountCapturable = state.PaymentRequiresCapture, state.CaptureManual, 0, p.Amount
		p.CaptureBefore = new(at.Add(DefaultCaptureWindow))
	case event.PaymentCanceled:
		p.Status, p.CaptureMethod, p.AmountCaptured = state.PaymentCanceled, state.CaptureManual, 0
		p.CanceledAt, p.CancellationReason = &at, new(state.CanceledByCustomer)
	case event.PaymentReversed, event.PaymentReversalFailed:
		p.Status, p.AmountCaptured, p.CanceledAt, p.CancellationReason = state.PaymentCanceled, 0, &at, new(state.CanceledByCustomer)
		p.ReturnURL, p.ReversalStatus = new("https://shop.example/orders/test"), new(state.ReversalRefunded)
		if eventType == event.PaymentReversalFailed {
			p.ReversalStatus, p.ReversalFailureMessage = new(state.ReversalFailed), new("the payment provider refused the refund")
		}
	case event.PaymentRefunded:
		p.Status, p.AmountRefunded = state.PaymentRefunded, p.Amount
	case event.DisputeCreated:
		p.DisputedAt, p.DisputeReason = &at, new("fraudulent")
	case event.RefundSucceeded:
		return RefundObjectOf(r)
	case event.RefundFailed:
		r.Status, r.FailureCode = state.RefundFailed, new("refund_declined")
		return RefundObjectOf(r)
	}
	return ObjectOf(p)
}
