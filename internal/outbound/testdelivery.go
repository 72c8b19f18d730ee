package outbound

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// testEventTypes are the event types Paygate sends merchants, which a test event may be; the
// first is the default.
var testEventTypes = []string{"payment.succeeded", "payment.failed", "payment.refunded", "refund.succeeded",
	"refund.failed", "dispute.created"}

// Bounds of a test delivery.
const (
	// maxTestURL is the longest URL a test event is sent to.
	maxTestURL = 2048
	// maxTestsInFlight bounds the test deliveries under way on this server, whoever asked them.
	maxTestsInFlight = 16
)

// TestWebhookRequest asks for one signed test event.
type TestWebhookRequest struct {
	URL string
	// Type is one of the event types Paygate sends (payment.succeeded, payment.failed,
	// payment.refunded, refund.succeeded, refund.failed, dispute.created); "" for the first.
	Type string
	// Secret is the signing secret the endpoint verifies with (whsec_ and the base64 of 24 to 64
	// bytes, as Standard Webhooks secrets are); "" to have Paygate make one.
	Secret string
}

// TestDelivery is what came of a test event. A delivery that got no answer is no error: Error
// says what happened, as the merchant asked to know.
type TestDelivery struct {
	EventID string
	// StatusCode is the endpoint's HTTP status, a redirect's included (never followed); 0 when no
	// answer came.
	StatusCode int
	Latency    time.Duration
	// ResponseExcerpt is the start of the answer's body, valid UTF-8, trimmed.
	ResponseExcerpt string
	// Secret is the signing secret when Paygate made it; "" when the request gave one.
	Secret string
	// Error says why no answer, or no whole answer, came; "" when one did.
	Error string
}

// TestSender sends merchants' endpoints signed test events, so that they can check they receive
// and verify Paygate's webhooks. The URL is the caller's: each test event is one try of Sender,
// bounded as every try is.
type TestSender struct {
	Sender *Sender
	// Now times the event and its signature (default time.Now).
	Now func() time.Time
	// SampleProvider is the provider the sample payment names.
	SampleProvider string

	mu sync.Mutex
	// inFlight holds the principals with a delivery under way: one each, so that no one holds
	// more than one of the server's maxTestsInFlight.
	inFlight map[string]bool
}

// Send sends one signed test event as req asks and reports what came back.
func (s *TestSender) Send(ctx context.Context, req TestWebhookRequest) (TestDelivery, error) {
	if err := auth.Authorize(ctx, auth.SendTestWebhook); err != nil {
		return TestDelivery{}, err
	}
	target, err := testURL(req.URL)
	if err != nil {
		return TestDelivery{}, err
	}
	eventType := cmp.Or(req.Type, testEventTypes[0])
	if !slices.Contains(testEventTypes, eventType) {
		return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "type", "type must be one of "+strings.Join(testEventTypes, ", "))
	}
	delivery := TestDelivery{EventID: prefixid.New("evt_test")}
	secret := req.Secret
	if secret == "" {
		secret = NewSigningSecret()
		delivery.Secret = secret
	} else if err := CheckSigningSecret(secret); err != nil {
		return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "secret", "secret must be as Standard Webhooks secrets are: "+err.Error())
	}
	p, _ := auth.PrincipalFrom(ctx) // the operation has a scope, so there is a principal
	release, err := s.claim(p.Subject)
	if err != nil {
		return TestDelivery{}, err
	}
	defer release()

	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	at := now().UTC().Truncate(time.Second)
	body, err := json.Marshal(testEvent{ID: delivery.EventID, Type: eventType, CreatedAt: at, Data: testEventData{Object: testObject(eventType, s.SampleProvider, at)}})
	if err != nil {
		return TestDelivery{}, err
	}
	headers, err := SignedHeaders(delivery.EventID, at, body, secret)
	if err != nil {
		return TestDelivery{}, err
	}
	headers.Set("User-Agent", "Paygate-Webhooks/1.0")
	attempt, err := s.Sender.Try(ctx, target.String(), body, headers)
	if err != nil {
		return TestDelivery{}, err
	}
	if attempt.Refused != "" {
		return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "url",
			"url leads to "+attempt.Refused+" address, where test webhooks are not sent")
	}
	delivery.StatusCode, delivery.Latency, delivery.ResponseExcerpt, delivery.Error = attempt.StatusCode, attempt.Latency, attempt.Excerpt, attempt.Failure
	return delivery, nil
}

// claim takes a delivery slot for subject, or refuses: one delivery at a time each, and at most
// maxTestsInFlight on the server, so the endpoint cannot be made to hold open connections without
// bound however many requests ask at once.
func (s *TestSender) claim(subject string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.inFlight[subject]:
		return nil, apierror.New(apierror.InvalidState, "a test webhook of yours is still under way: wait for its answer")
	case len(s.inFlight) >= maxTestsInFlight:
		return nil, apierror.New(apierror.ServiceUnavailable, "too many test webhooks are under way: try again in a few seconds")
	}
	if s.inFlight == nil {
		s.inFlight = map[string]bool{}
	}
	s.inFlight[subject] = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.inFlight, subject)
	}, nil
}

// testURL checks a test event's destination before anything is resolved or dialled. The address
// it leads to is checked as it is dialled.
func testURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, apierror.ForParam(apierror.MissingField, "url", "url is required")
	}
	if len(raw) > maxTestURL {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", fmt.Sprintf("url is longer than %d characters", maxTestURL))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", "url must be an absolute http or https URL with a host")
	}
	if u.User != nil {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", "url must not hold a user name or password")
	}
	u.Fragment, u.RawFragment = "", "" // never sent
	return u, nil
}

// testEvent is the event sent, as Paygate's webhooks are.
type testEvent struct {
	ID        string        `json:"id"`
	Type      string        `json:"type"`
	CreatedAt time.Time     `json:"created_at"`
	Livemode  bool          `json:"livemode"`
	Data      testEventData `json:"data"`
}

type testEventData struct {
	Object any `json:"object"`
}

// testPayment is a payment in the REST shape; its IDs, metadata and description say it is a test.
type testPayment struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Amount            json.Number       `json:"amount"`
	Currency          string            `json:"currency"`
	Status            string            `json:"status"`
	PaymentMethod     string            `json:"payment_method"`
	Customer          testCustomer      `json:"customer"`
	Card              testCard          `json:"card"`
	Provider          string            `json:"provider"`
	ProviderPaymentID *string           `json:"provider_payment_id"`
	AmountRefunded    json.Number       `json:"amount_refunded"`
	FailureCode       *string           `json:"failure_code"`
	FailureMessage    *string           `json:"failure_message"`
	Description       string            `json:"description"`
	Metadata          map[string]string `json:"metadata"`
	DisputedAt        *time.Time        `json:"disputed_at"`
	DisputeReason     *string           `json:"dispute_reason"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
}

type testCustomer struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

type testCard struct {
	Brand       string `json:"brand"`
	Last4       string `json:"last4"`
	ExpMonth    int    `json:"exp_month"`
	ExpYear     int    `json:"exp_year"`
	Fingerprint string `json:"fingerprint"`
}

// testRefund is a refund in the REST shape.
type testRefund struct {
	ID          string      `json:"id"`
	Object      string      `json:"object"`
	PaymentID   string      `json:"payment_id"`
	Amount      json.Number `json:"amount"`
	Currency    string      `json:"currency"`
	Status      string      `json:"status"`
	Reason      *string     `json:"reason"`
	FailureCode *string     `json:"failure_code"`
	CreatedAt   time.Time   `json:"created_at"`
}

// testObject is the sample object an event of eventType carries: a payment of 10.00 USD through
// providerName, or a refund of all of it.
func testObject(eventType, providerName string, at time.Time) any {
	// Amounts are JSON numbers with the currency's decimals, as in Paygate's REST answers.
	amount := json.Number(money.Amount{Minor: 1000, Currency: "USD"}.String())
	p := testPayment{
		ID: prefixid.New("pay_test"), Object: "payment", Amount: amount, Currency: "USD",
		Status: string(state.PaymentSucceeded), PaymentMethod: "credit_card",
		Customer: testCustomer{Email: "test@example.com", Name: "Test Customer"},
		Card: testCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: at.Year() + 1,
			Fingerprint: "test_fingerprint"},
		Provider: providerName, AmountRefunded: json.Number(money.Amount{Currency: "USD"}.String()),
		Description: "Paygate test webhook", Metadata: map[string]string{"paygate_test": "true"},
		CreatedAt: at, UpdatedAt: at,
	}
	refund := testRefund{ID: prefixid.New("re_test"), Object: "refund", PaymentID: p.ID, Amount: amount, Currency: "USD",
		Status: string(state.RefundSucceeded), Reason: new("requested_by_customer"), CreatedAt: at}
	switch eventType {
	case "payment.failed":
		p.Status = string(state.PaymentFailed)
		p.FailureCode, p.FailureMessage = new("card_declined"), new("The card was declined.")
	case "payment.refunded":
		p.Status, p.AmountRefunded = string(state.PaymentRefunded), amount
	case "dispute.created":
		p.DisputedAt, p.DisputeReason = &at, new("fraudulent")
	case "refund.succeeded":
		return refund
	case "refund.failed":
		refund.Status, refund.FailureCode = string(state.RefundFailed), new("refund_declined")
		return refund
	}
	return p
}
