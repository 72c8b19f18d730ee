package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/outbound"
)

// SandboxSwitches make a provider sandbox misbehave, so that failover and timeouts can be shown.
type SandboxSwitches struct {
	// Outage makes the sandbox answer every request 503: it is down and does nothing.
	Outage atomic.Bool
	// Fault makes it answer every request 500, which a client cannot tell from a failure after
	// the work was done.
	Fault atomic.Bool
	// Latency delays every answer (nanoseconds).
	Latency atomic.Int64
	// LoseAnswers makes the sandbox act on each request and then lose its answer: the client
	// gets 502, as from a proxy that lost the connection, though the charge or refund was made.
	LoseAnswers atomic.Bool
}

// Deliver writes the sandbox's answer to a request it acted on, unless LoseAnswers is on.
func (s *SandboxSwitches) Deliver(w http.ResponseWriter, status int, body []byte) {
	if s.LoseAnswers.Load() {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	WriteAnswer(w, status, body)
}

// Delay waits out the latency before r is answered. It reports false when the client went away
// first, and there is no one left to answer.
func (s *SandboxSwitches) Delay(r *http.Request) bool {
	latency := time.Duration(s.Latency.Load())
	if latency <= 0 {
		return true
	}
	select {
	case <-time.After(latency):
		return true
	case <-r.Context().Done():
		return false
	}
}

// WriteAnswer writes a sandbox's JSON answer.
func WriteAnswer(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// WriteJSON writes v as a sandbox's JSON answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, nil
	}
	WriteAnswer(w, status, body)
}

// FailingRefundMinor is the refund amount (13.13 in any currency) that the sandboxes which settle
// refunds later (Adyen, Checkout.com) settle as failed, so that a refused refund can be shown.
const FailingRefundMinor = 1313

// DefaultSettleAfter is how long those sandboxes hold a refund before settling it.
const DefaultSettleAfter = 2 * time.Second

// SettledRefund is a refund a sandbox settled, with what its provider's webhook would tell of it.
type SettledRefund struct {
	ProviderRefundID  string // the provider's id for the refund: a pspReference, an action id
	RefundID          string // Paygate's id for the refund, sent as its reference
	ProviderPaymentID string // the charge it gives back
	Amount            money.Amount
	Succeeded         bool
	// ResponseCode and Reason are the provider's code and words for the outcome (Checkout.com's
	// response_code and response_summary; Adyen's reason, with no code).
	ResponseCode string
	Reason       string
	SettledAt    time.Time
}

// Settler is a sandbox that settles later what it took for later.
type Settler interface {
	// Settle settles what is due and returns how many it settled.
	Settle(ctx context.Context) (settled int, err error)
}

// Simulation is an event a sandbox can be told to bring about for one of its payments, as
// happens at a real provider outside Paygate's requests, so that Paygate's handling of the
// webhook that follows can be shown.
type Simulation string

const (
	// SimulateRefund refunds what is left of the payment at the provider (from its dashboard,
	// not through Paygate).
	SimulateRefund Simulation = "refund"
	// SimulateDispute opens a dispute (chargeback) of the whole payment.
	SimulateDispute Simulation = "dispute"
	// SimulateLateFailure fails the payment after it was approved.
	SimulateLateFailure Simulation = "late_failure"
)

// ErrCannotSimulate means the payment is in no state for the simulated event (declined, failed,
// nothing left to refund), or the event is unknown.
var ErrCannotSimulate = errors.New("the sandbox cannot simulate that for this payment")

// Switches are the switches themselves, for a sandbox that embeds them.
func (s *SandboxSwitches) Switches() *SandboxSwitches { return s }

// SandboxWebhooks delivers a sandbox's webhooks, each signed by sign as its provider signs them
// (a sign that adds no header for a provider that signs inside the body, as Adyen does).
type SandboxWebhooks struct {
	sign   outbound.WebhookSigner
	sender *outbound.WebhookSender
}

// NewSandboxWebhooks returns the webhooks of a sandbox that signs with sign.
func NewSandboxWebhooks(sign outbound.WebhookSigner) SandboxWebhooks {
	return SandboxWebhooks{sign: sign}
}

// SendWebhooks makes the sandbox deliver its webhooks as config says, until ctx ends. Call it
// before the sandbox serves.
func (w *SandboxWebhooks) SendWebhooks(ctx context.Context, config outbound.WebhookConfig) error {
	sender, err := outbound.NewWebhookSender(ctx, config, w.sign)
	if err != nil {
		return fmt.Errorf("sandbox webhooks: %w", err)
	}
	w.sender = sender
	return nil
}

// SendsWebhooks reports whether the sandbox delivers its webhooks anywhere.
func (w *SandboxWebhooks) SendsWebhooks() bool { return w.sender != nil }

// SendWebhook delivers one webhook, the event id, in the background.
func (w *SandboxWebhooks) SendWebhook(id string, body []byte) { w.sender.Send(id, body) }

// WaitForWebhooks returns once the webhooks under way have been delivered or given up.
func (w *SandboxWebhooks) WaitForWebhooks() { w.sender.Wait() }

// ApprovedCard is the test card every sandbox approves at once, as Stripe's test card of that
// number does: what a load test or a first try charges, never a real card.
const ApprovedCard = "4242424242424242"

// The test cards that make a sandbox ask the shopper to authenticate (3-D Secure) first, as
// Stripe's test cards of those numbers do at every provider here.
const (
	// AuthenticateThenApprove is approved once the shopper completes the authentication.
	AuthenticateThenApprove = "4000002760003184"
	// AuthenticateThenDecline is declined (card_declined) even once the shopper completes it.
	AuthenticateThenDecline = "4000008400001629"
)

// AsksAuthentication reports whether the sandboxes ask the shopper of card number to
// authenticate before they decide.
func AsksAuthentication(number string) bool {
	return number == AuthenticateThenApprove || number == AuthenticateThenDecline
}

// ErrNoChallenge means a sandbox has no authentication waiting for the shopper under the id: no
// such charge, or one decided already.
var ErrNoChallenge = errors.New("no authentication is waiting under this id")

// Challenge is a sandbox's authentication page for the charge under {id}, as a provider's
// 3-D Secure page stands between the shopper and the charge. GET shows the page: what is paid and
// one form whose buttons send outcome=complete or outcome=fail by POST to the page's own URL.
// POST records the outcome through Finish and sends the browser on (303) to where Finish says:
// the charge's return URL, with what its provider adds to it.
type Challenge struct {
	// Provider names the provider on the page.
	Provider string
	// Describe says what the shopper is asked to pay, or fails with ErrNoChallenge.
	Describe func(ctx context.Context, id string) (string, error)
	// Finish records that the shopper completed the authentication, or failed it, and returns
	// the address to send the browser to; or fails with ErrNoChallenge.
	Finish func(ctx context.Context, id string, completed bool) (returnTo string, err error)
}

// maxChallengeForm bounds what the challenge page reads of a submission: one short field.
const maxChallengeForm = 1 << 10

var challengePage = template.Must(template.New("challenge").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Provider}} sandbox: authenticate the payment</title></head>
<body>
<h1>{{.Provider}} sandbox: 3-D Secure</h1>
<p>{{.Description}}</p>
<p>This page stands in for the card issuer's authentication. Nothing real is charged.</p>
<form method="post">
<button type="submit" name="outcome" value="complete" id="complete">Complete authentication</button>
<button type="submit" name="outcome" value="fail" id="fail">Fail authentication</button>
</form>
</body>
</html>
`))

// ServeHTTP serves the page (GET) and its form (POST).
func (c Challenge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		description, err := c.Describe(r.Context(), id)
		if err != nil {
			challengeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		challengePage.Execute(w, struct{ Provider, Description string }{c.Provider, description})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, maxChallengeForm)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read", http.StatusBadRequest)
			return
		}
		var completed bool
		switch r.PostForm.Get("outcome") {
		case "complete":
			completed = true
		case "fail":
		default:
			http.Error(w, "outcome must be complete or fail", http.StatusBadRequest)
			return
		}
		returnTo, err := c.Finish(r.Context(), id, completed)
		if err != nil {
			challengeError(w, err)
			return
		}
		http.Redirect(w, r, returnTo, http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func challengeError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNoChallenge) {
		http.Error(w, "no authentication is waiting here: it was finished, or never asked for", http.StatusNotFound)
		return
	}
	http.Error(w, "the sandbox failed", http.StatusInternalServerError)
}

// WithQuery is address with values added to its query, as a provider sends the browser back to
// a return URL.
func WithQuery(address string, values url.Values) (string, error) {
	u, err := url.Parse(address)
	if err != nil {
		return "", err
	}
	query := u.Query()
	for key, vs := range values {
		for _, v := range vs {
			query.Add(key, v)
		}
	}
	u.RawQuery = query.Encode()
	return u.String(), nil
}
