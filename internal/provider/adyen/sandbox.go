package adyen

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"

	"github.com/paygate/paygate/internal/provider"
)

// Sandbox answers as Adyen's test environment does, for the requests the adapter sends: it
// authorises the test cards with their outcomes, takes refunds to settle later, and replays an
// answer to a repeated Idempotency-Key. It keeps its state in memory.
//
//	4242424242424242  Authorised
//	4000000000000002  Refused, reason 2 (Refused)
//	4000000000009995  Refused, reason 12 (Not enough balance)
//	4000000000000069  Refused, reason 6 (Expired Card)
//	4000000000000119  Error, reason 4 (Acquirer Error)
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency).
type Sandbox struct {
	provider.SandboxSwitches

	answers provider.SandboxAnswers
	// payments and refunded are read and written under the answers' lock.
	payments map[string]paymentAnswer
	refunded map[string]int64 // asked back so far, by pspReference
}

// NewSandbox returns an empty sandbox.
func NewSandbox() *Sandbox {
	return &Sandbox{payments: map[string]paymentAnswer{}, refunded: map[string]int64{}}
}

// testCards are the result and refusal reason of the test cards.
var testCards = map[string][3]string{
	"4000000000000002": {resultRefused, "2", "Refused"},
	"4000000000009995": {resultRefused, reasonNotEnoughBalance, "Not enough balance"},
	"4000000000000069": {resultRefused, reasonExpiredCard, "Expired Card"},
	"4000000000000119": {resultError, "4", "Acquirer Error"},
}

// adyenError is Adyen's answer to a request it refuses.
type adyenError struct {
	Status    int    `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	ErrorType string `json:"errorType"`
}

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	reference, isRefund := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v71/payments/"), "/refunds")
	isRefund = isRefund && strings.HasPrefix(r.URL.Path, "/v71/payments/")
	switch {
	case r.Header.Get("X-API-Key") == "":
		provider.WriteJSON(w, http.StatusUnauthorized, adyenError{401, "000", "HTTP Status Response - Unauthorized", "security"})
		return
	case s.Outage.Load():
		provider.WriteJSON(w, http.StatusServiceUnavailable, adyenError{503, "000", "Service Unavailable", "internal"})
		return
	case s.Fault.Load():
		provider.WriteJSON(w, http.StatusInternalServerError, adyenError{500, "901", "Internal error", "internal"})
		return
	case r.Method != http.MethodPost || (r.URL.Path != "/v71/payments" && !isRefund):
		provider.WriteJSON(w, http.StatusNotFound, adyenError{404, "000", "Not Found", "validation"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		provider.WriteJSON(w, http.StatusBadRequest, adyenError{400, "702", "Unreadable body", "validation"})
		return
	}
	answer, replayed, reused := s.answers.Answer(r.Header.Get("Idempotency-Key"), r.URL.Path+"\n"+string(body), func() (int, []byte) {
		if isRefund {
			return s.refund(reference, body)
		}
		return s.pay(body)
	})
	switch {
	case reused:
		provider.WriteJSON(w, http.StatusUnprocessableEntity, adyenError{422, "704", "request already processed or in progress", "validation"})
		return
	case replayed:
		w.Header().Set("Idempotency-Key-Replayed", "true")
	}
	provider.WriteAnswer(w, answer.Status, answer.Body)
}

// pay authorises a card payment, under the answers' lock.
func (s *Sandbox) pay(body []byte) (int, []byte) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return provider.EncodeJSON(http.StatusBadRequest, adyenError{400, "702", "Structure could not be parsed", "validation"})
	case req.Amount.Value < 1 || len(req.Amount.Currency) != 3:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"})
	case req.MerchantAccount == "":
		return provider.EncodeJSON(http.StatusUnprocessableEntity, adyenError{422, "901", "Invalid Merchant Account", "security"})
	case req.PaymentMethod.Type != "scheme" || req.PaymentMethod.Number == "" || len(req.PaymentMethod.ExpiryMonth) != 2:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, adyenError{422, "101", "Invalid card number", "validation"})
	}
	payment := paymentAnswer{PSPReference: pspReference(), ResultCode: resultAuthorised, MerchantReference: req.Reference, Amount: req.Amount}
	if outcome, listed := testCards[req.PaymentMethod.Number]; listed {
		payment.ResultCode, payment.RefusalReasonCode, payment.RefusalReason = outcome[0], outcome[1], outcome[2]
	}
	s.payments[payment.PSPReference] = payment
	return provider.EncodeJSON(http.StatusOK, payment)
}

// refund takes a refund of an authorised payment, under the answers' lock.
func (s *Sandbox) refund(reference string, body []byte) (int, []byte) {
	var req refundRequest
	payment, ok := s.payments[reference]
	switch {
	case !ok:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, adyenError{422, "167", "Original pspReference required for this operation", "validation"})
	case json.Unmarshal(body, &req) != nil:
		return provider.EncodeJSON(http.StatusBadRequest, adyenError{400, "702", "Structure could not be parsed", "validation"})
	case payment.ResultCode != resultAuthorised || req.Amount.Value < 1 || req.Amount.Currency != payment.Amount.Currency ||
		req.Amount.Value > payment.Amount.Value-s.refunded[reference]:
		return provider.EncodeJSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"})
	}
	s.refunded[reference] += req.Amount.Value
	return provider.EncodeJSON(http.StatusCreated, refundAnswer{MerchantAccount: req.MerchantAccount, PaymentPSPReference: reference,
		PSPReference: pspReference(), Reference: req.Reference, Status: "received", Amount: req.Amount})
}

// pspReference is a new Adyen reference: 16 characters.
func pspReference() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(9e15))
	return n.Add(n, big.NewInt(1e15)).String()
}
