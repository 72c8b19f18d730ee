package rest

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/web"
)

type alertJSON struct {
	ID             string     `json:"id"`
	Object         string     `json:"object"`
	Rule           string     `json:"rule"`
	Subject        string     `json:"subject"`
	Severity       string     `json:"severity"`
	Status         string     `json:"status"`
	Message        string     `json:"message"`
	OpenedAt       time.Time  `json:"opened_at"`
	AcknowledgedBy *string    `json:"acknowledged_by"`
	AcknowledgedAt *time.Time `json:"acknowledged_at"`
	ResolvedBy     *string    `json:"resolved_by"`
	ResolvedAt     *time.Time `json:"resolved_at"`
}

func alertOf(a *ent.Alert) alertJSON {
	return alertJSON{ID: a.ID, Object: "alert", Rule: a.Rule, Subject: a.Subject, Severity: string(a.Severity), Status: string(a.Status),
		Message: a.Message, OpenedAt: a.OpenedAt.UTC(), AcknowledgedBy: a.AcknowledgedBy, AcknowledgedAt: utc(a.AcknowledgedAt),
		ResolvedBy: a.ResolvedBy, ResolvedAt: utc(a.ResolvedAt)}
}

// ListAlerts is GET /api/v1/monitoring/alerts?status=&limit=&starting_after=&ending_before=:
// newest first.
func (h *Handlers) ListAlerts(w http.ResponseWriter, r *http.Request) {
	if err := knownParams(r.URL.Query(), "limit", "starting_after", "ending_before", "status"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	where := &ent.AlertWhereInput{}
	if status := r.URL.Query().Get("status"); status != "" {
		s := state.AlertStatus(status)
		if !slices.Contains(s.Values(), status) {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "status", "status must be open, acknowledged or resolved"), nil)
			return
		}
		where.Status = &s
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, h.alertCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.Alerts(r.Context(), page.after, page.first, page.before, page.last, alerting.NewestFirst, where)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]alertJSON, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, alertOf(edge.Node))
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

// AcknowledgeAlert is POST /api/v1/monitoring/alerts/{id}/acknowledge.
func (h *Handlers) AcknowledgeAlert(w http.ResponseWriter, r *http.Request) {
	h.changeAlert(w, r, h.mutation.AcknowledgeAlert)
}

// ResolveAlert is POST /api/v1/monitoring/alerts/{id}/resolve.
func (h *Handlers) ResolveAlert(w http.ResponseWriter, r *http.Request) {
	h.changeAlert(w, r, h.mutation.ResolveAlert)
}

func (h *Handlers) changeAlert(w http.ResponseWriter, r *http.Request, change func(ctx context.Context, id string) (*ent.Alert, error)) {
	if err := decodeOptional(r, &struct{}{}); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	changed, err := change(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, alertOf(changed))
}
