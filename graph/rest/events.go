package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/web"
)

// ListEvents is GET /api/v1/events: the events of the last 30 days, newest first, of one type or
// all, paged as every list is.
func (h *Handlers) ListEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := knownParams(q, "limit", "starting_after", "ending_before", "type"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	where := &ent.EventWhereInput{}
	if eventType := q.Get("type"); eventType != "" {
		if !slices.Contains(event.Types, eventType) {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "type", fmt.Sprintf("type must be one of %s", strings.Join(event.Types, ", "))), nil)
			return
		}
		where.Type = &eventType
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, h.merchantEventCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.Events(r.Context(), page.after, page.first, page.before, page.last, outbound.EventsNewestFirst, where)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]json.RawMessage, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, edge.Node.Body)
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

// GetEvent is GET /api/v1/events/{id}: the event as it was delivered.
func (h *Handlers) GetEvent(w http.ResponseWriter, r *http.Request) {
	e, err := h.query.Event(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, json.RawMessage(e.Body))
}

// webhookEndpointJSON is the REST shape of a webhook endpoint; secret only in the answers that
// make one.
type webhookEndpointJSON struct {
	ID             string               `json:"id"`
	Object         string               `json:"object"`
	URL            string               `json:"url"`
	Events         []string             `json:"events"`
	Description    *string              `json:"description"`
	Status         state.EndpointStatus `json:"status"`
	DisabledReason *string              `json:"disabled_reason"`
	FailingSince   *time.Time           `json:"failing_since"`
	Secret         string               `json:"secret,omitempty"`
	CreatedAt      time.Time            `json:"created_at"`
	UpdatedAt      time.Time            `json:"updated_at"`
}

func webhookEndpointOf(e *ent.WebhookEndpoint, secret string) webhookEndpointJSON {
	return webhookEndpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, Events: e.Events, Description: e.Description,
		Status: e.Status, DisabledReason: e.DisabledReason, FailingSince: utcOrNil(e.FailingSince), Secret: secret,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
}

type createWebhookEndpointRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
}

// CreateWebhookEndpoint is POST /api/v1/webhook-endpoints: 201 with the endpoint and its secret,
// shown this once.
func (h *Handlers) CreateWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	var req createWebhookEndpointRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	made, err := h.mutation.CreateWebhookEndpoint(r.Context(), model.CreateWebhookEndpointInput{URL: req.URL, Events: req.Events, Description: req.Description})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusCreated, webhookEndpointOf(made.Endpoint, made.Secret))
}

// ListWebhookEndpoints is GET /api/v1/webhook-endpoints, newest first.
func (h *Handlers) ListWebhookEndpoints(w http.ResponseWriter, r *http.Request) {
	if err := knownParams(r.URL.Query(), "limit", "starting_after", "ending_before"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, h.endpointCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.WebhookEndpoints(r.Context(), page.after, page.first, page.before, page.last, outbound.EndpointsNewestFirst)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]webhookEndpointJSON, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, webhookEndpointOf(edge.Node, ""))
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

// GetWebhookEndpoint is GET /api/v1/webhook-endpoints/{id}.
func (h *Handlers) GetWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	found, err := h.query.WebhookEndpoint(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, webhookEndpointOf(found, ""))
}

type updateWebhookEndpointRequest struct {
	URL         *string               `json:"url"`
	Events      []string              `json:"events"`
	Description *string               `json:"description"`
	Status      *state.EndpointStatus `json:"status"`
}

// UpdateWebhookEndpoint is PATCH /api/v1/webhook-endpoints/{id}: what the body names changes.
func (h *Handlers) UpdateWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	var req updateWebhookEndpointRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.Status != nil && !slices.Contains(req.Status.Values(), string(*req.Status)) {
		web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "status", "status must be enabled or disabled"), nil)
		return
	}
	updated, err := h.mutation.UpdateWebhookEndpoint(r.Context(), r.PathValue("id"),
		model.UpdateWebhookEndpointInput{URL: req.URL, Events: req.Events, Description: req.Description, Status: req.Status})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, webhookEndpointOf(updated, ""))
}

// DeleteWebhookEndpoint is DELETE /api/v1/webhook-endpoints/{id}: {id, object, deleted: true}.
func (h *Handlers) DeleteWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	deleted, err := h.mutation.DeleteWebhookEndpoint(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"id": deleted.ID, "object": "webhook_endpoint", "deleted": true})
}

// RotateWebhookEndpointSecret is POST /api/v1/webhook-endpoints/{id}/rotate-secret: the endpoint
// with its new secret, shown this once; the old one signs beside it for 24 hours.
func (h *Handlers) RotateWebhookEndpointSecret(w http.ResponseWriter, r *http.Request) {
	if err := decodeOptional(r, &struct{}{}); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	rotated, err := h.mutation.RotateWebhookEndpointSecret(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, webhookEndpointOf(rotated.Endpoint, rotated.Secret))
}

// webhookDeliveryJSON is the REST shape of a delivery of an event to an endpoint.
type webhookDeliveryJSON struct {
	ID             string               `json:"id"`
	Object         string               `json:"object"`
	EndpointID     string               `json:"endpoint_id"`
	EventID        string               `json:"event_id"`
	Type           string               `json:"type"`
	Status         state.DeliveryStatus `json:"status"`
	Attempts       int                  `json:"attempts"`
	LastStatusCode *int                 `json:"last_status_code"`
	LastError      *string              `json:"last_error"`
	LatencyMS      *int64               `json:"latency_ms"`
	NextAttemptAt  *time.Time           `json:"next_attempt_at"`
	DeliveredAt    *time.Time           `json:"delivered_at"`
	CreatedAt      time.Time            `json:"created_at"`
	// AttemptLog is only on a delivery read by its id.
	AttemptLog []deliveryAttemptJSON `json:"attempt_log,omitzero"`
}

// deliveryAttemptJSON is one try at a delivery: what the endpoint answered (null when nothing
// came), how long it took, and why it failed.
type deliveryAttemptJSON struct {
	At         time.Time `json:"at"`
	StatusCode *int      `json:"status_code"`
	LatencyMS  int64     `json:"latency_ms"`
	Error      *string   `json:"error"`
}

func webhookDeliveryOf(d *ent.WebhookDelivery) webhookDeliveryJSON {
	return webhookDeliveryJSON{ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, Type: d.Type,
		Status: d.Status, Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, LastError: d.LastError, LatencyMS: d.LatencyMs,
		NextAttemptAt: utcOrNil(d.NextAttemptAt), DeliveredAt: utcOrNil(d.DeliveredAt), CreatedAt: d.CreatedAt.UTC()}
}

// ListWebhookDeliveries is GET /api/v1/webhook-endpoints/{id}/deliveries: the endpoint's
// deliveries, newest first, of one status or all.
func (h *Handlers) ListWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := knownParams(q, "limit", "starting_after", "ending_before", "status"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	var status *state.DeliveryStatus
	if text := q.Get("status"); text != "" {
		s := state.DeliveryStatus(text)
		if !slices.Contains(s.Values(), text) {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "status", "status must be one of "+strings.Join(s.Values(), ", ")), nil)
			return
		}
		status = &s
	}
	endpointID := r.PathValue("id")
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, func(ctx context.Context, id, param string) (*ent.Cursor, error) {
		return h.deliveryCursorAt(ctx, endpointID, id, param)
	})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.WebhookDeliveries(r.Context(), endpointID, status, page.after, page.first, page.before, page.last)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]webhookDeliveryJSON, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, webhookDeliveryOf(edge.Node))
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

// GetWebhookDelivery is GET /api/v1/webhook-endpoints/{id}/deliveries/{delivery}: the delivery
// with every try at it, oldest first.
func (h *Handlers) GetWebhookDelivery(w http.ResponseWriter, r *http.Request) {
	d, err := h.delivery(r.Context(), r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, withAttempts(d))
}

// RetryWebhookDelivery is POST /api/v1/webhook-endpoints/{id}/deliveries/{delivery}/retry: the
// delivery sent again now, answered as it now is.
func (h *Handlers) RetryWebhookDelivery(w http.ResponseWriter, r *http.Request) {
	if err := decodeOptional(r, &struct{}{}); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	d, err := h.mutation.RetryWebhookDelivery(r.Context(), r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, withAttempts(d))
}

// withAttempts is delivery d with its attempt log, as loaded with it.
func withAttempts(d *ent.WebhookDelivery) webhookDeliveryJSON {
	body := webhookDeliveryOf(d)
	body.AttemptLog = []deliveryAttemptJSON{}
	for _, a := range d.Edges.AttemptLog {
		body.AttemptLog = append(body.AttemptLog, deliveryAttemptJSON{At: a.At.UTC(), StatusCode: a.StatusCode, LatencyMS: a.LatencyMs, Error: a.Error})
	}
	return body
}
