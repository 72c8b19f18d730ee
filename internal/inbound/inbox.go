// Package inbound takes the payment providers' webhooks: it verifies each delivery, stores its
// events once, and applies them to payments in the background, durably; it keeps them for people
// to read and retry.
package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tracing"
)

// Bounds of what is stored of an event, as the columns hold them.
const (
	maxEventID   = 300
	maxEventType = 100
)

// Inbox takes the providers' webhook deliveries: it verifies each, stores its events once, and
// leaves them to the Worker, so a delivery is acknowledged as soon as it is safely kept.
type Inbox struct {
	Client *ent.Client
	// Sources are the providers whose webhooks it takes, by the name in /webhooks/{provider}.
	Sources map[string]Source
	Now     func() time.Time
	Logger  *slog.Logger
	// SignatureRefused is told of each delivery refused for its signature.
	SignatureRefused func(provider string)
	// Stored is told after a delivery's new events were stored, so the worker takes them at once.
	Stored func()
	// Observe, when set, is told of each new event stored, with its status (received).
	Observe func(provider, status string)
}

// Source is a provider whose webhooks the inbox takes.
type Source struct {
	// Verifier checks its deliveries; with none (its webhook secret unset), every delivery is
	// refused.
	Verifier provider.WebhookVerifier
	// Acknowledgement is the body it expects back ("" for none).
	Acknowledgement string
}

// Receipt is what a delivery came to.
type Receipt struct {
	// Stored counts the events stored; Duplicates those already stored by an earlier delivery.
	Stored, Duplicates int
	// Answer is the body the provider expects back.
	Answer string
}

// Receive verifies body, delivered to /webhooks/{providerName} with header, and stores each of
// its events once: a delivery sent again is acknowledged and not stored again. Refusals are API
// errors: 404 for an unknown provider, 401 invalid_signature, 400 for a body that is not the
// provider's notification. The body of a refused delivery is neither stored nor logged.
func (in *Inbox) Receive(ctx context.Context, providerName string, header http.Header, body []byte) (Receipt, error) {
	events, err := in.verify(ctx, providerName, header, body)
	switch {
	case errors.Is(err, provider.ErrInvalidSignature), errors.Is(err, provider.ErrWebhooksNotConfigured):
		if in.SignatureRefused != nil {
			in.SignatureRefused(providerName)
		}
		in.Logger.WarnContext(ctx, "webhook refused: signature", "provider", providerName, "reason", err.Error(), "bytes", len(body))
		return Receipt{}, apierror.New(apierror.InvalidSignature, "the webhook signature is missing or does not match")
	case errors.Is(err, provider.ErrMalformed):
		in.Logger.WarnContext(ctx, "webhook refused: not the provider's shape", "provider", providerName, "bytes", len(body))
		return Receipt{}, apierror.New(apierror.InvalidRequest, "the body is not a "+providerName+" notification")
	case err != nil:
		return Receipt{}, err
	}
	receipt := Receipt{Answer: in.Sources[providerName].Acknowledgement}
	now := in.Now().UTC()
	for _, event := range events {
		err := in.Client.WebhookEvent.Create().
			SetProvider(providerName).
			SetEventID(event.ID).
			SetType(event.Type).
			SetStatus(state.WebhookReceived).
			SetPayload(event.Payload).
			SetNextAttemptAt(now).
			SetReceivedAt(now).
			SetNillableTraceParent(tracing.Cause(ctx)).
			Exec(ctx)
		switch {
		case ent.IsConstraintError(err):
			receipt.Duplicates++
		case err != nil:
			return receipt, fmt.Errorf("storing %s event %s: %w", providerName, event.ID, err)
		default:
			receipt.Stored++
		}
	}
	if receipt.Stored > 0 && in.Stored != nil {
		in.Stored()
	}
	for range receipt.Stored {
		if in.Observe != nil {
			in.Observe(providerName, string(state.WebhookReceived))
		}
	}
	return receipt, nil
}

// verify checks the delivery with its provider's scheme and returns its events.
func (in *Inbox) verify(ctx context.Context, providerName string, header http.Header, body []byte) ([]provider.WebhookEvent, error) {
	source, known := in.Sources[providerName]
	if !known {
		return nil, apierror.ForParam(apierror.NotFound, "provider", "no provider is named "+providerName)
	}
	if source.Verifier == nil {
		return nil, fmt.Errorf("%w: %s", provider.ErrWebhooksNotConfigured, providerName)
	}
	events, err := source.Verifier.Verify(ctx, header, body)
	if err != nil {
		return nil, err
	}
	for _, event := range events {
		if !storableText(event.ID, maxEventID) || !storableText(event.Type, maxEventType) {
			return nil, provider.ErrMalformed
		}
	}
	return events, nil
}

// storableText reports whether s fits a text column of at most most bytes: valid UTF-8 without
// control characters, NUL above all, which PostgreSQL's text refuses.
func storableText(s string, most int) bool {
	return len(s) <= most && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// Retention is how long an event is kept after it was received: longer than Adyen goes on
// retrying a delivery (30 days), so a late retry is still known as a duplicate.
const Retention = 35 * 24 * time.Hour

// Forget deletes the events received more than Retention ago that are done with (processed or
// ignored), with their attempts, and returns how many. Dead events stay until a person retries
// them: each is something Paygate never applied.
func (in *Inbox) Forget(ctx context.Context) (int, error) {
	return in.Client.WebhookEvent.Delete().Where(
		webhookevent.ReceivedAtLT(in.Now().Add(-Retention)),
		webhookevent.StatusIn(state.WebhookProcessed, state.WebhookIgnored),
	).Exec(ctx)
}
