package rest

import (
	"net/http"

	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/web"
)

type testWebhookRequest struct {
	EndpointID *string `json:"endpoint_id"`
	URL        *string `json:"url"`
	Type       *string `json:"type"`
	Secret     *string `json:"secret"`
}

// testWebhookJSON is what came of a test event; status_code is null when no answer came, and
// error says why.
type testWebhookJSON struct {
	EventID string `json:"event_id"`
	// DeliveryID is the delivery in the endpoint's log, when the event went to an endpoint.
	DeliveryID      *string `json:"delivery_id"`
	StatusCode      *int    `json:"status_code"`
	LatencyMS       int     `json:"latency_ms"`
	ResponseExcerpt string  `json:"response_excerpt"`
	Secret          *string `json:"secret"`
	Error           *string `json:"error"`
}

// SendTestWebhook is POST /api/v1/webhooks/test: one signed test event to the webhook endpoint or
// the url given. An endpoint that could not be reached is a 200 saying so; only a refused request
// is a 4xx.
func (h *Handlers) SendTestWebhook(w http.ResponseWriter, r *http.Request) {
	var req testWebhookRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	d, err := h.mutation.SendTestWebhook(r.Context(), model.SendTestWebhookInput{EndpointID: req.EndpointID, URL: req.URL, Type: req.Type, Secret: req.Secret})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, testWebhookJSON{EventID: d.EventID, DeliveryID: d.DeliveryID, StatusCode: d.StatusCode, LatencyMS: d.LatencyMs,
		ResponseExcerpt: d.ResponseExcerpt, Secret: d.Secret, Error: d.Error})
}
