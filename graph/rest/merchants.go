package rest

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/web"
)

type createMerchantRequest struct {
	Name string `json:"name"`
}

type updateMerchantRequest struct {
	Name   *string `json:"name"`
	Status *string `json:"status"`
}

type merchantJSON struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"`
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

func merchantOf(m *ent.Merchant) merchantJSON {
	return merchantJSON{ID: m.ID, Object: "merchant", Name: m.Name, Status: m.Status, CreatedAt: m.CreatedAt.UTC()}
}

// CreateMerchant is POST /api/v1/merchants: {name}.
func (h *Handlers) CreateMerchant(w http.ResponseWriter, r *http.Request) {
	var req createMerchantRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.Name == "" {
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "name", "name is required"), nil)
		return
	}
	m, err := h.mutation.CreateMerchant(r.Context(), model.CreateMerchantInput{Name: req.Name})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusCreated, merchantOf(m))
}

// ListMerchants is GET /api/v1/merchants?limit=&starting_after=&ending_before=: oldest first (by
// id).
func (h *Handlers) ListMerchants(w http.ResponseWriter, r *http.Request) {
	p, err := readListPage(r, h.merchantCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	after, before := p.ids()
	merchants, err := h.query.Merchants(r.Context(), p.first, after, p.last, before)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	list := make([]merchantJSON, len(merchants.Merchants))
	for i, m := range merchants.Merchants {
		list[i] = merchantOf(m)
	}
	web.WriteList(w, list, merchants.HasMore)
}

// UpdateMerchant is PATCH /api/v1/merchants/{id}: {name?, status?}.
func (h *Handlers) UpdateMerchant(w http.ResponseWriter, r *http.Request) {
	var req updateMerchantRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	m, err := h.mutation.UpdateMerchant(r.Context(), r.PathValue("id"), auth.MerchantChange{Name: req.Name, Status: req.Status})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, merchantOf(m))
}
