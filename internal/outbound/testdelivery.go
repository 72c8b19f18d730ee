package outbound

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	events "github.com/paygate/paygate/internal/event"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/prefixid"
)

// Bounds of a test delivery.
const (
	// MaxURL is the longest URL a webhook is sent to.
	MaxURL = 2048
	// maxTestsInFlight bounds the test deliveries under way on this server, whoever asked them.
	maxTestsInFlight = 16
)

// TestWebhookRequest asks for one signed test event, to a webhook endpoint or to a URL.
type TestWebhookRequest struct {
	// EndpointID names a webhook endpoint: the event is signed with its secrets and becomes one
	// of its deliveries, in its log and retried as every delivery is. URL and Secret are then
	// left empty.
	EndpointID string
	URL        string
	// Type is one of the event types Paygate sends; "" for payment.succeeded.
	Type string
	// Secret is the signing secret the URL verifies with (whsec_ and the base64 of 24 to 64
	// bytes, as Standard Webhooks secrets are); "" to have Paygate make one.
	Secret string
}

// TestDelivery is what came of a test event. A delivery that got no answer is no error: Error
// says what happened, as the merchant asked to know.
type TestDelivery struct {
	EventID string
	// DeliveryID is the delivery in the endpoint's log, when the event went to an endpoint.
	DeliveryID string
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

// TestSender sends merchants signed test events, so that they can check they receive and verify
// Paygate's webhooks: signed, sent and, to an endpoint, logged and retried by the deliveries' own
// code, so what a merchant tests is what it will receive.
type TestSender struct {
	Deliveries *Deliveries
	// Sample is the object a test event of a type shows, in the shape of a real one.
	Sample func(eventType string, at time.Time) any

	mu sync.Mutex
	// inFlight holds the users with a delivery under way: one each, so that no one holds
	// more than one of the server's maxTestsInFlight.
	inFlight map[string]bool
}

// Send sends one signed test event as req asks and reports what came back.
func (s *TestSender) Send(ctx context.Context, req TestWebhookRequest) (TestDelivery, error) {
	if err := auth.Authorize(ctx, auth.SendTestWebhook); err != nil {
		return TestDelivery{}, err
	}
	eventType := cmp.Or(req.Type, events.PaymentSucceeded)
	if !slices.Contains(events.Types, eventType) {
		return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "type", "type must be one of "+strings.Join(events.Types, ", "))
	}
	var endpoint *ent.WebhookEndpoint
	var secrets []string
	delivery := TestDelivery{EventID: prefixid.New("evt_test")}
	at := s.Deliveries.Now().UTC().Truncate(time.Second)
	if req.EndpointID != "" {
		if req.URL != "" || req.Secret != "" {
			return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "endpoint_id", "give an endpoint, or a url and its secret, not both")
		}
		var err error
		if endpoint, err = s.Deliveries.Client.WebhookEndpoint.Get(ctx, req.EndpointID); ent.IsNotFound(err) {
			return TestDelivery{}, apierror.ForParam(apierror.NotFound, "endpoint_id", "no webhook endpoint has the id "+req.EndpointID)
		} else if err != nil {
			return TestDelivery{}, err
		}
	} else {
		target, err := webhookURL(req.URL)
		if err != nil {
			return TestDelivery{}, err
		}
		secret := req.Secret
		if secret == "" {
			secret = NewSigningSecret()
			delivery.Secret = secret
		} else if err := CheckSigningSecret(secret); err != nil {
			return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "secret", "secret must be as Standard Webhooks secrets are: "+err.Error())
		}
		endpoint, secrets = &ent.WebhookEndpoint{URL: target.String()}, []string{secret}
	}
	p, _ := auth.PrincipalFrom(ctx) // the operation has a scope, so there is a principal
	// A slot is the user's, whichever of their keys or sessions asks: one user with many keys
	// takes one.
	release, err := s.claim(p.UserID)
	if err != nil {
		return TestDelivery{}, err
	}
	defer release()

	body, err := events.NewBody(delivery.EventID, eventType, at, s.Sample(eventType, at))
	if err != nil {
		return TestDelivery{}, err
	}
	var sent Attempt
	if secrets != nil {
		sent, err = s.Deliveries.post(ctx, endpoint.URL, secrets, delivery.EventID, body)
	} else {
		delivery.DeliveryID, sent, err = s.Deliveries.Test(ctx, endpoint, delivery.EventID, eventType, body)
	}
	if err != nil {
		return TestDelivery{}, err
	}
	if sent.Refused != "" && secrets != nil {
		return TestDelivery{}, apierror.ForParam(apierror.InvalidRequest, "url",
			"url leads to "+sent.Refused+" address, where test webhooks are not sent")
	}
	delivery.StatusCode, delivery.Latency, delivery.ResponseExcerpt, delivery.Error = sent.StatusCode, sent.Latency, sent.Excerpt, sent.Failure
	if sent.Refused != "" {
		delivery.Error = sent.String()
	}
	return delivery, nil
}

// claim takes a delivery slot for a user, or refuses: one delivery at a time each, and at most
// maxTestsInFlight on the server, so the endpoint cannot be made to hold open connections without
// bound however many requests ask at once.
func (s *TestSender) claim(userID string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.inFlight[userID]:
		return nil, apierror.New(apierror.InvalidState, "a test webhook of yours is still under way: wait for its answer")
	case len(s.inFlight) >= maxTestsInFlight:
		return nil, apierror.New(apierror.ServiceUnavailable, "too many test webhooks are under way: try again in a few seconds")
	}
	if s.inFlight == nil {
		s.inFlight = map[string]bool{}
	}
	s.inFlight[userID] = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.inFlight, userID)
	}, nil
}
