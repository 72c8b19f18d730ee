package loadtest

import (
	"crypto/rand"
	"net/http"
	"strconv"
)

// StripeStandIn answers Stripe's create-PaymentIntent call with a confirmed, succeeded intent and
// keeps nothing: no database, no webhooks, no state between calls. Pointed at by Paygate
// (PAYGATE_STRIPE_BASE_URL) and the bare handler (-stripe) alike, it gives both the same
// provider round trip while costing the machine almost nothing, so that what a run measures is
// Paygate and the bare handler, not a provider sharing their cores and their database. Any other
// call is answered 404.
func StripeStandIn() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
		if err != nil || amount <= 0 || r.PostForm.Get("currency") == "" {
			http.Error(w, "amount and currency are required", http.StatusBadRequest)
			return
		}
		captureMethod := "automatic"
		if r.PostForm.Get("capture_method") == "manual" {
			captureMethod = "manual"
		}
		received := amount
		if captureMethod == "manual" {
			received = 0
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "pi_" + rand.Text(), "object": "payment_intent", "status": map[string]string{"automatic": "succeeded", "manual": "requires_capture"}[captureMethod],
			"amount": amount, "amount_received": received, "currency": r.PostForm.Get("currency"), "capture_method": captureMethod,
			"metadata": map[string]string{"paygate_id": r.PostForm.Get("metadata[paygate_id]")},
		})
	})
	return mux
}
