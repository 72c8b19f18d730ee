package rest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/web"
)

// webhookEventJSON is the REST shape of a stored webhook event; its payload is never served.
type webhookEventJSON struct {
	ID       string              `json:"id"`
	Object   string              `json:"object"`
	Provider string              `json:"provider"`
	EventID  string              `json:"event_id"`
	Type     string              `json:"type"`
	Status   state.WebhookStatus `json:"status"`
	// Attempts counts the tries since the event was received or last retried; AttemptLog lists
	// every try, retries or not.
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastError     *string    `json:"last_error"`
	IgnoredReason *string    `json:"ignored_reason"`
	PaymentID     *string    `json:"payment_id"`
	ReceivedAt    time.Time  `json:"received_at"`
	ProcessedAt   *time.Time `json:"processed_at"`
	// AttemptLog is only on an event read by its id: [] before any attempt.
	AttemptLog []webhookAttemptJSON `json:"attempt_log,omitzero"`
}

// webhookAttemptJSON is one try at processing an event: when, where it left the event, and the
// error, if it failed.
type webhookAttemptJSON struct {
	At         time.Time           `json:"at"`
	Status     state.WebhookStatus `json:"status"`
	Error      *string             `json:"error"`
	DurationMS int64               `json:"duration_ms"`
}

func webhookEventOf(e *ent.WebhookEvent) webhookEventJSON {
	return webhookEventJSON{
		ID:            e.ID,
		Object:        "webhook_event",
		Provider:      e.Provider,
		EventID:       e.EventID,
		Type:          e.Type,
		Status:        e.Status,
		Attempts:      e.Attempts,
		NextAttemptAt: utcOrNil(e.NextAttemptAt),
		LastError:     e.LastError,
		IgnoredReason: e.IgnoredReason,
		PaymentID:     e.PaymentID,
		ReceivedAt:    e.ReceivedAt.UTC(),
		ProcessedAt:   utcOrNil(e.ProcessedAt),
	}
}

// webhookLogParams are the query parameters of GET /api/v1/webhooks/logs.
var webhookLogParams = []string{"limit", "starting_after", "ending_before", "provider", "status", "type", "created_gte", "created_lte"}

// webhookLogFilter reads the filter parameters into the GraphQL twin's where input; created_gte
// and created_lte bound when the event was received.
func webhookLogFilter(q url.Values, providers []string) (*ent.WebhookEventWhereInput, error) {
	if err := knownParams(q, webhookLogParams...); err != nil {
		return nil, err
	}
	where := &ent.WebhookEventWhereInput{}
	if provider := q.Get("provider"); provider != "" {
		if !slices.Contains(providers, provider) {
			return nil, apierror.ForParam(apierror.InvalidRequest, "provider", "provider must be one of "+strings.Join(providers, ", "))
		}
		where.Provider = &provider
	}
	if text := q.Get("status"); text != "" {
		status := state.WebhookStatus(text)
		if !slices.Contains(status.Values(), text) {
			return nil, apierror.ForParam(apierror.InvalidRequest, "status", "status must be one of "+strings.Join(status.Values(), ", "))
		}
		where.Status = &status
	}
	if eventType := q.Get("type"); eventType != "" {
		if utf8.RuneCountInString(eventType) > paging.MaxFilterText {
			return nil, apierror.ForParam(apierror.InvalidRequest, "type", fmt.Sprintf("type is longer than %d characters", paging.MaxFilterText))
		}
		where.Type = &eventType
	}
	for param, into := range map[string]**time.Time{"created_gte": &where.ReceivedAtGTE, "created_lte": &where.ReceivedAtLTE} {
		if text := q.Get(param); text != "" {
			t, err := readTime(param, text)
			if err != nil {
				return nil, err
			}
			*into = &t
		}
	}
	return where, nil
}

// ListWebhookEvents (GET /api/v1/webhooks/logs) pages the stored events newest first, as
// payments are paged: limit, starting_after or ending_before (event ids), has_more.
func (h *Handlers) ListWebhookEvents(w http.ResponseWriter, r *http.Request) {
	where, err := webhookLogFilter(r.URL.Query(), h.providers)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, h.eventCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.WebhookEvents(r.Context(), page.after, page.first, page.before, page.last, inbound.NewestFirst, where)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]webhookEventJSON, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, webhookEventOf(edge.Node))
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

// GetWebhookEvent is GET /api/v1/webhooks/logs/{id}: the event with its attempt_log, oldest
// first.
func (h *Handlers) GetWebhookEvent(w http.ResponseWriter, r *http.Request) {
	event, err := h.query.WebhookEvent(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	attempts, err := h.webhookEvent.AttemptLog(r.Context(), event)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	body := webhookEventOf(event)
	body.AttemptLog = make([]webhookAttemptJSON, 0, len(attempts))
	for _, a := range attempts {
		body.AttemptLog = append(body.AttemptLog, webhookAttemptJSON{At: a.At.UTC(), Status: a.Status, Error: a.Error, DurationMS: a.DurationMs})
	}
	web.WriteJSON(w, http.StatusOK, body)
}

// RetryWebhookEvent is POST /api/v1/webhooks/logs/{id}/retry: a failed or dead event requeued,
// answered as it now is. The body, if any, is an empty object.
func (h *Handlers) RetryWebhookEvent(w http.ResponseWriter, r *http.Request) {
	if err := decodeOptional(r, &struct{}{}); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	event, err := h.mutation.RetryWebhookEvent(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, webhookEventOf(event))
}

// WebhookMetrics is GET /api/v1/webhooks/metrics: each provider's webhook figures.
func (h *Handlers) WebhookMetrics(w http.ResponseWriter, r *http.Request) {
	metrics, err := h.query.WebhookMetrics(r.Context())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, metrics)
}
