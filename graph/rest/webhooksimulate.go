package rest

import (
	"net/http"

	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/web"
)

// simulateRequest is POST /api/v1/webhooks/simulate's body.
type simulateRequest struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
	Type      string `json:"type"`
}

// simulatedEvent is the answer: the event is on its way to /webhooks/{provider}.
type simulatedEvent struct {
	Provider  string `json:"provider"`
	PaymentID string `json:"payment_id"`
	Type      string `json:"type"`
}

// SimulateEvent is POST /api/v1/webhooks/simulate: the payment's provider's sandbox sends the
// event, signed; it is accepted (202) here and processed when it arrives.
func (h *Handlers) SimulateEvent(w http.ResponseWriter, r *http.Request) {
	var req simulateRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	simulated, err := h.mutation.SimulateEvent(r.Context(), inbound.SimulateInput{Provider: req.Provider, PaymentID: req.PaymentID, Type: req.Type})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusAccepted, simulatedEvent{Provider: simulated.Provider, PaymentID: simulated.PaymentID, Type: simulated.Type})
}
