package rest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/settings/settingsstore"
	"github.com/paygate/paygate/internal/web"
)

// GetConfig is GET /api/v1/admin/config: the document in force, in the shape PUT takes back.
func (h *Handlers) GetConfig(w http.ResponseWriter, r *http.Request) {
	doc, err := h.query.Config(r.Context())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, doc)
}

// configRequest is the document PUT sends: the one GET answers, edited. Its sections are
// pointers so that one left out is refused rather than read as all zeros.
type configRequest struct {
	Version        *int                         `json:"version"`
	Routing        *settings.Routing            `json:"routing"`
	Providers      map[string]settings.Provider `json:"providers"`
	CircuitBreaker *settings.CircuitBreaker     `json:"circuit_breaker"`
	WebhookRetry   *settings.WebhookRetry       `json:"webhook_retry"`
	RateLimits     *settings.RateLimits         `json:"rate_limits"`
	Alerts         *settings.AlertThresholds    `json:"alerts"`
	Capture        *settings.Capture            `json:"capture"`
	// GET answers who wrote the version read and when; a client sends them back with the rest
	// of the document, and they are ignored (the new version's are the server's to say), but
	// bounded as everything a client sends is.
	UpdatedAt string `json:"updated_at"`
	UpdatedBy string `json:"updated_by"`
}

// UpdateConfig is PUT /api/v1/admin/config: the whole document, with the version it was read at.
func (h *Handlers) UpdateConfig(w http.ResponseWriter, r *http.Request) {
	var req configRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.Version == nil {
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "version", "version is required: the version of the document read"), nil)
		return
	}
	if err := cmp.Or(checkTimeText("updated_at", req.UpdatedAt), checkID("updated_by", req.UpdatedBy)); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	input := model.ConfigInput{
		Version:        *req.Version,
		Routing:        req.Routing,
		CircuitBreaker: req.CircuitBreaker,
		WebhookRetry:   req.WebhookRetry,
		RateLimits:     req.RateLimits,
		Alerts:         req.Alerts,
		Capture:        req.Capture,
	}
	if req.Providers != nil { // nil is refused as missing by the resolver
		input.Providers = []*model.ProviderSettingsInput{}
		for _, name := range slices.Sorted(maps.Keys(req.Providers)) {
			provider := req.Providers[name]
			input.Providers = append(input.Providers, &model.ProviderSettingsInput{Name: name, Enabled: provider.Enabled, TimeoutMs: provider.TimeoutMS})
		}
	}
	doc, err := h.mutation.UpdateConfig(r.Context(), input)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, doc)
}

// configChangeJSON is one entry of the configuration's history; previous is null for the first.
type configChangeJSON struct {
	Version   int                `json:"version"`
	ChangedBy string             `json:"changed_by"`
	ChangedAt time.Time          `json:"changed_at"`
	Document  settings.Document  `json:"document"`
	Previous  *settings.Document `json:"previous"`
}

var historyParams = []string{"limit", "before"}

// ConfigHistory is GET /api/v1/admin/config/history: versions newest first, limit of them (1-100,
// default 20), older than version before when it is given; has_more says an older one exists.
func (h *Handlers) ConfigHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := knownParams(q, historyParams...); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	limit := settingsstore.DefaultHistoryPage
	if text := q.Get("limit"); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 || n > settingsstore.MaxHistoryPage {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "limit", fmt.Sprintf("limit must be a whole number from 1 to %d", settingsstore.MaxHistoryPage)), nil)
			return
		}
		limit = n
	}
	var before *int
	if text := q.Get("before"); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "before", "before must be a version number"), nil)
			return
		}
		before = &n // the store says which versions there may be
	}
	changes, err := h.query.ConfigHistory(r.Context(), &limit, before)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]configChangeJSON, 0, len(changes))
	for _, c := range changes {
		data = append(data, configChangeJSON{Version: c.Version, ChangedBy: c.ChangedBy, ChangedAt: c.ChangedAt, Document: c.Document, Previous: c.Previous})
	}
	// Versions are numbered without gaps, so an older one exists when the oldest here replaced one.
	hasMore := len(changes) > 0 && changes[len(changes)-1].Previous != nil
	web.WriteList(w, data, hasMore)
}
