package rest

import (
	"net/http"

	"github.com/paygate/paygate/internal/web"
)

// ProviderStatus serves GET /api/v1/monitoring/providers: how each provider is doing.
func (h *Handlers) ProviderStatus(w http.ResponseWriter, r *http.Request) {
	statuses, err := h.query.ProviderStatus(r.Context())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, statuses)
}
