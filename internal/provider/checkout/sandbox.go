package checkout

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Sandbox answers as Checkout.com's sandbox does, for the requests the adapter sends: it charges
// the test cards with their outcomes, takes refunds to settle later, and replays an answer to a
// repeated Cko-Idempotency-Key. It keeps its state in memory.
//
//	4242424242424242  approved (10000)
//	4000000000000002  declined, 20005 (do not honour)
//	4000000000009995  declined, 20051 (insufficient funds)
//	4000000000000069  declined, 20054 (expired card)
//	4000000000000119  503: the acquirer could not be reached, nothing was done
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency).
type Sandbox struct {
	provider.SandboxSwitches

	answers provider.SandboxAnswers
	// payments and refunded are read and written under the answers' lock.
	payments map[string]paymentAnswer
	refunded map[string]int64 // asked back so far, by payment
}

// NewSandbox returns an empty sandbox.
func NewSandbox() *Sandbox {
	return &Sandbox{payments: map[string]paymentAnswer{}, refunded: map[string]int64{}}
}

// testCards are the response codes of the test cards; an empty code is an acquirer failure.
var testCards = map[string]string{
	"4000000000000002": "20005",
	"4000000000009995": codeInsufficientFunds,
	"4000000000000069": codeExpiredCard,
	"4000000000000119": "",
}

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	paymentID, isRefund := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/payments/"), "/refunds")
	isRefund = isRefund && strings.HasPrefix(r.URL.Path, "/payments/")
	switch {
	case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || len(r.Header.Get("Authorization")) == len("Bearer "):
		w.WriteHeader(http.StatusUnauthorized)
		return
	case s.Outage.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case s.Fault.Load():
		w.WriteHeader(http.StatusInternalServerError)
		return
	case r.Method != http.MethodPost || (r.URL.Path != "/payments" && !isRefund):
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer, replayed, reused := s.answers.Answer(r.Header.Get("Cko-Idempotency-Key"), r.URL.Path+"\n"+string(body), func() (int, []byte) {
		if isRefund {
			return s.refund(paymentID, body)
		}
		return s.pay(body)
	})
	switch {
	case reused:
		provider.WriteJSON(w, http.StatusConflict, invalid("idempotency_key_reused"))
		return
	case replayed:
		w.Header().Set("Cko-Idempotent-Replayed", "true")
	}
	provider.WriteAnswer(w, answer.Status, answer.Body)
}

// invalid is Checkout.com's answer to a request it refuses.
func invalid(codes ...string) map[string]any {
	return map[string]any{"request_id": prefixid.New("req"), "error_type": "request_invalid", "error_codes": codes}
}

// pay requests a payment, under the answers' lock.
func (s *Sandbox) pay(body []byte) (int, []byte) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("request_malformed"))
	case req.Amount < 1:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("amount_invalid"))
	case len(req.Currency) != 3:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("currency_invalid"))
	case req.Source.Type != "card" || req.Source.Number == "":
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("card_number_invalid"))
	}
	code, listed := testCards[req.Source.Number]
	if listed && code == "" {
		return http.StatusServiceUnavailable, nil
	}
	payment := paymentAnswer{ID: prefixid.New("pay"), ActionID: prefixid.New("act"), Amount: req.Amount, Currency: req.Currency,
		Approved: true, Status: "Captured", ResponseCode: codeApproved, ResponseSummary: "Approved", Reference: req.Reference}
	if listed {
		payment.Approved, payment.Status, payment.ResponseCode, payment.ResponseSummary = false, "Declined", code, "Declined"
	}
	s.payments[payment.ID] = payment
	return provider.EncodeJSON(http.StatusCreated, payment)
}

// refund takes a refund of a captured payment, under the answers' lock.
func (s *Sandbox) refund(paymentID string, body []byte) (int, []byte) {
	var req refundRequest
	payment, ok := s.payments[paymentID]
	switch {
	case !ok:
		return http.StatusNotFound, nil
	case json.Unmarshal(body, &req) != nil:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("request_malformed"))
	case req.Amount == 0:
		req.Amount = payment.Amount - s.refunded[paymentID]
	}
	if !payment.Approved || req.Amount < 1 || req.Amount > payment.Amount-s.refunded[paymentID] {
		return provider.EncodeJSON(http.StatusUnprocessableEntity, invalid("refund_amount_exceeds_balance"))
	}
	s.refunded[paymentID] += req.Amount
	return provider.EncodeJSON(http.StatusAccepted, refundAnswer{ActionID: prefixid.New("act"), Reference: req.Reference})
}
