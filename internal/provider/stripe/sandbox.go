package stripe

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Sandbox answers as Stripe's test mode does, for the requests the adapter sends: it charges the
// test cards with their test outcomes, refunds, and replays an answer to a repeated
// Idempotency-Key. It keeps its state in memory.
//
//	4242424242424242  succeeds
//	4000000000000002  card_declined (decline_code generic_decline)
//	4000000000009995  card_declined (decline_code insufficient_funds)
//	4000000000000069  expired_card
//	4000000000000119  processing_error
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency), so that failover,
// unknown outcomes and timeouts can be shown.
type Sandbox struct {
	provider.SandboxSwitches

	answers provider.SandboxAnswers
	// intents and charged are read and written under the answers' lock.
	intents map[string]*stripego.PaymentIntent
	charged map[string]int64 // refunded so far, by intent
}

// NewSandbox returns an empty sandbox.
func NewSandbox() *Sandbox {
	return &Sandbox{intents: map[string]*stripego.PaymentIntent{}, charged: map[string]int64{}}
}

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	switch {
	case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || len(r.Header.Get("Authorization")) == len("Bearer "):
		writeError(w, http.StatusUnauthorized, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "You did not provide an API key."})
		return
	case s.Outage.Load():
		writeError(w, http.StatusServiceUnavailable, stripego.Error{Type: stripego.ErrorTypeAPI, Msg: "Stripe is temporarily unavailable."})
		return
	case s.Fault.Load():
		writeError(w, http.StatusInternalServerError, stripego.Error{Type: stripego.ErrorTypeAPI, Msg: "An unknown error occurred."})
		return
	case r.Method != http.MethodPost || (r.URL.Path != "/v1/payment_intents" && r.URL.Path != "/v1/refunds"):
		writeError(w, http.StatusNotFound, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "Unrecognized request URL."})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "Invalid request body."})
		return
	}
	key, request := r.Header.Get("Idempotency-Key"), r.URL.Path+"?"+r.PostForm.Encode()
	answer, replayed, reused := s.answers.Answer(key, request, func() (int, []byte) {
		if r.URL.Path == "/v1/payment_intents" {
			return s.intent(r)
		}
		return s.refund(r)
	})
	switch {
	case reused:
		writeError(w, http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeIdempotency,
			Msg: "Keys for idempotent requests can only be used with the same parameters they were first used with."})
		return
	case replayed:
		w.Header().Set("Idempotent-Replayed", "true")
	}
	provider.WriteAnswer(w, answer.Status, answer.Body)
}

// testCards are the outcomes of Stripe's test cards: error code and decline code.
var testCards = map[string][2]string{
	"4000000000000002": {"card_declined", "generic_decline"},
	"4000000000009995": {"card_declined", "insufficient_funds"},
	"4000000000000069": {"expired_card", "expired_card"},
	"4000000000000119": {"processing_error", ""},
}

// intent creates and confirms a PaymentIntent, under the answers' lock.
func (s *Sandbox) intent(r *http.Request) (int, []byte) {
	amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
	currency := r.PostForm.Get("currency")
	number := r.PostForm.Get("payment_method_data[card][number]")
	switch {
	case err != nil || amount < 1:
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "amount", Msg: "Invalid positive integer"})
	case len(currency) != 3 || currency != strings.ToLower(currency):
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "currency", Msg: "Invalid currency"})
	case r.PostForm.Get("confirm") != "true" || number == "":
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "This sandbox confirms card PaymentIntents only."})
	}
	intent := &stripego.PaymentIntent{
		ID: prefixid.New("pi"), Object: "payment_intent", Amount: amount, Currency: stripego.Currency(currency),
		Created: time.Now().Unix(), Metadata: map[string]string{"paygate_id": r.PostForm.Get("metadata[paygate_id]")},
		Status: stripego.PaymentIntentStatusSucceeded, AmountReceived: amount,
	}
	if outcome, declined := testCards[number]; declined {
		intent.Status, intent.AmountReceived = stripego.PaymentIntentStatusRequiresPaymentMethod, 0
		s.intents[intent.ID] = intent
		return errorBody(http.StatusPaymentRequired, stripego.Error{Type: stripego.ErrorTypeCard, Code: stripego.ErrorCode(outcome[0]),
			DeclineCode: stripego.DeclineCode(outcome[1]), Msg: "Your card was declined.", PaymentIntent: intent})
	}
	s.intents[intent.ID] = intent
	return provider.EncodeJSON(http.StatusOK, intent)
}

// refund refunds part or all of a succeeded PaymentIntent, under the answers' lock.
func (s *Sandbox) refund(r *http.Request) (int, []byte) {
	intent, ok := s.intents[r.PostForm.Get("payment_intent")]
	if !ok {
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "payment_intent", Msg: "No such payment_intent"})
	}
	amount := intent.AmountReceived - s.charged[intent.ID]
	if text := r.PostForm.Get("amount"); text != "" {
		var err error
		if amount, err = strconv.ParseInt(text, 10, 64); err != nil || amount < 1 {
			return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "amount", Msg: "Invalid positive integer"})
		}
	}
	if intent.Status != stripego.PaymentIntentStatusSucceeded || amount > intent.AmountReceived-s.charged[intent.ID] {
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: "charge_already_refunded",
			Msg: "The refund amount is more than what is left of the charge."})
	}
	s.charged[intent.ID] += amount
	return provider.EncodeJSON(http.StatusOK, &stripego.Refund{ID: prefixid.New("re"), Object: "refund", Amount: amount, Currency: intent.Currency,
		PaymentIntent: &stripego.PaymentIntent{ID: intent.ID}, Status: stripego.RefundStatusSucceeded, Created: time.Now().Unix()})
}

func errorBody(status int, e stripego.Error) (int, []byte) {
	return provider.EncodeJSON(status, map[string]any{"error": e})
}

func writeError(w http.ResponseWriter, status int, e stripego.Error) {
	status, body := errorBody(status, e)
	provider.WriteAnswer(w, status, body)
}
