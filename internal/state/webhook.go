package state

import (
	"io"
	"slices"
)

// WebhookStatus is where a received provider event is in its processing. Stored and served over
// REST in lower case and served over GraphQL in upper case.
type WebhookStatus string

const (
	// WebhookReceived: verified and stored, waiting for the worker (or requeued by a retry).
	WebhookReceived WebhookStatus = "received"
	// WebhookProcessed: applied to the payment it is about.
	WebhookProcessed WebhookStatus = "processed"
	// WebhookIgnored: nothing to apply (an unknown payment, an event type Paygate does not act
	// on, an event that would move a payment backwards); the reason is kept.
	WebhookIgnored WebhookStatus = "ignored"
	// WebhookFailed: processing failed; it is tried again at next_attempt_at.
	WebhookFailed WebhookStatus = "failed"
	// WebhookDead: processing failed as often as the retry policy allows; only a manual retry
	// brings it back.
	WebhookDead WebhookStatus = "dead"
)

// Values lists every webhook status; ent uses it for the column's allowed values.
func (WebhookStatus) Values() []string {
	return []string{string(WebhookReceived), string(WebhookProcessed), string(WebhookIgnored),
		string(WebhookFailed), string(WebhookDead)}
}

// MarshalGQL writes the GraphQL enum name.
func (s WebhookStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *WebhookStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "webhook status")
	*s = WebhookStatus(value)
	return err
}

// webhookMoves is an event's lifecycle: processed or ignored for good; failed tried again until
// dead; a failed or dead event requeued by hand.
var webhookMoves = map[WebhookStatus][]WebhookStatus{
	WebhookReceived: {WebhookProcessed, WebhookIgnored, WebhookFailed, WebhookDead},
	WebhookFailed:   {WebhookProcessed, WebhookIgnored, WebhookFailed, WebhookDead, WebhookReceived},
	WebhookDead:     {WebhookReceived},
}

// CanMoveTo reports whether an event in status s may move to next.
func (s WebhookStatus) CanMoveTo(next WebhookStatus) bool {
	return slices.Contains(webhookMoves[s], next)
}

// Due reports whether an event in status s waits for the worker.
func (s WebhookStatus) Due() bool { return s == WebhookReceived || s == WebhookFailed }
