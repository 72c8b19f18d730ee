// Package sandbox is Stripe's built-in stand-in: it answers the requests the Stripe adapter
// sends as Stripe's test mode does, and sends Stripe's webhooks.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Sandbox answers as Stripe's test mode does, for the requests the adapter sends: it charges the
// test cards with their test outcomes, refunds at once, replays an answer to a repeated
// Idempotency-Key, and answers the adapter's look-ups (a search of PaymentIntents by
// metadata['paygate_id'], a refund by id, a PaymentIntent's refunds) from what it stored. It
// keeps its state in Paygate's database, so every server sees one Stripe.
//
//	4242424242424242  succeeds
//	4000000000000002  card_declined (decline_code generic_decline)
//	4000000000009995  card_declined (decline_code insufficient_funds)
//	4000000000000069  expired_card
//	4000000000000119  processing_error
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency), so that failover,
// unknown outcomes and timeouts can be shown.
//
// With SendWebhooks it sends Stripe's events, signed, about the answers it keeps:
// payment_intent.succeeded or payment_intent.payment_failed for a charge, charge.refunded for a
// refund; a replayed answer sends nothing again.
type Sandbox struct {
	provider.SandboxSwitches

	provider.SandboxWebhooks

	store *sandboxstore.Store
}

// New returns the sandbox over its state in client's database, signing its webhooks with sign.
func New(client *ent.Client, now func() time.Time, sign outbound.WebhookSigner) *Sandbox {
	return &Sandbox{store: sandboxstore.New(client, "stripe", now), SandboxWebhooks: provider.NewSandboxWebhooks(sign)}
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
	case r.Method == http.MethodGet && (r.URL.Path == "/v1/payment_intents/search" || r.URL.Path == "/v1/refunds" ||
		strings.HasPrefix(r.URL.Path, "/v1/refunds/")):
		s.lookUp(w, r)
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
	answer, replayed, reused, err := s.store.Answer(r.Context(), key, request, func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		if r.URL.Path == "/v1/payment_intents" {
			return s.intent(ctx, tx, r)
		}
		return s.refund(ctx, tx, r)
	})
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, stripego.Error{Type: stripego.ErrorTypeAPI, Msg: "An unknown error occurred."})
		return
	case reused:
		writeError(w, http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeIdempotency,
			Msg: "Keys for idempotent requests can only be used with the same parameters they were first used with."})
		return
	case replayed:
		w.Header().Set("Idempotent-Replayed", "true")
	}
	s.Deliver(w, answer.Status, answer.Body)
}

// testCards are the outcomes of Stripe's test cards: error code and decline code.
var testCards = map[string][2]string{
	"4000000000000002": {"card_declined", "generic_decline"},
	"4000000000009995": {"card_declined", "insufficient_funds"},
	"4000000000000069": {"expired_card", "expired_card"},
	"4000000000000119": {"processing_error", ""},
}

// intent creates and confirms a PaymentIntent.
func (s *Sandbox) intent(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
	currency := r.PostForm.Get("currency")
	number := r.PostForm.Get("payment_method_data[card][number]")
	switch {
	case err != nil || amount < 1:
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "amount", Msg: "Invalid positive integer"}), nil
	case len(currency) != 3 || currency != strings.ToLower(currency):
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "currency", Msg: "Invalid currency"}), nil
	case r.PostForm.Get("confirm") != "true" || number == "":
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "This sandbox confirms card PaymentIntents only."}), nil
	}
	intent := &stripego.PaymentIntent{
		ID: prefixid.New("pi"), Object: "payment_intent", Amount: amount, Currency: stripego.Currency(currency),
		Created: s.store.Now().Unix(), Metadata: map[string]string{"paygate_id": r.PostForm.Get("metadata[paygate_id]")},
		Status: stripego.PaymentIntentStatusSucceeded, AmountReceived: amount,
	}
	event := stripego.EventTypePaymentIntentSucceeded
	outcome, declined := testCards[number]
	if declined {
		event, intent.Status, intent.AmountReceived = stripego.EventTypePaymentIntentPaymentFailed, stripego.PaymentIntentStatusRequiresPaymentMethod, 0
		intent.LastPaymentError = &stripego.Error{Type: stripego.ErrorTypeCard, Code: stripego.ErrorCode(outcome[0]),
			DeclineCode: stripego.DeclineCode(outcome[1]), Msg: "Your card was declined."}
	}
	body, err := json.Marshal(intent)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: intent.ID, Kind: sandboxobject.KindCharge, Reference: intent.Metadata["paygate_id"],
		Amount: amount, Currency: currency, Status: string(intent.Status), Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.emitOnCommit(tx, event, body, r.Header.Get("Idempotency-Key")); err != nil {
		return sandboxstore.Answer{}, err
	}
	if declined {
		decline := *intent.LastPaymentError
		decline.PaymentIntent = intent
		return errorBody(http.StatusPaymentRequired, decline), nil
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: body}, nil
}

// refund refunds part or all of a succeeded PaymentIntent.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	intent, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, r.PostForm.Get("payment_intent"))
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "payment_intent", Msg: "No such payment_intent"}), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	amount := intent.Amount - intent.Refunded
	if text := r.PostForm.Get("amount"); text != "" {
		if amount, err = strconv.ParseInt(text, 10, 64); err != nil || amount < 1 {
			return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "amount", Msg: "Invalid positive integer"}), nil
		}
	}
	body, err := s.takeRefund(ctx, tx, intent, amount, r.PostForm.Get("metadata[paygate_id]"), r.Header.Get("Idempotency-Key"))
	switch {
	case err != nil:
		return sandboxstore.Answer{}, err
	case body == nil:
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: "charge_already_refunded",
			Msg: "The refund amount is more than what is left of the charge."}), nil
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: body}, nil
}

// lookUp answers a GET: a search of PaymentIntents, a refund, or a PaymentIntent's refunds.
func (s *Sandbox) lookUp(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	limit, err := strconv.Atoi(query.Get("limit"))
	switch {
	case query.Get("limit") == "":
		limit = 10
	case err != nil || limit < 1 || limit > 100:
		writeError(w, http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "limit",
			Msg: "Invalid integer: limit must be between 1 and 100."})
		return
	}
	var answer sandboxstore.Answer
	switch {
	case r.URL.Path == "/v1/payment_intents/search":
		answer, err = s.search(r.Context(), query.Get("query"), limit)
	case r.URL.Path == "/v1/refunds":
		answer, err = s.refunds(r.Context(), query.Get("payment_intent"), limit)
	default:
		answer, err = s.getRefund(r.Context(), strings.TrimPrefix(r.URL.Path, "/v1/refunds/"))
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, stripego.Error{Type: stripego.ErrorTypeAPI, Msg: "An unknown error occurred."})
		return
	}
	provider.WriteAnswer(w, answer.Status, answer.Body)
}

// list is a page of objects as Stripe's list and search answers hold them.
type list struct {
	Object  string            `json:"object"`
	URL     string            `json:"url"`
	HasMore bool              `json:"has_more"`
	Data    []json.RawMessage `json:"data"`
}

// page is the list of the objects' bodies; one more than limit says there are more.
func page(object, url string, objects []*ent.SandboxObject, limit int) list {
	l := list{Object: object, URL: url, HasMore: len(objects) > limit, Data: []json.RawMessage{}}
	for _, o := range objects[:min(len(objects), limit)] {
		l.Data = append(l.Data, o.Body)
	}
	return l
}

// searchByPaygateID is the one search query the sandbox knows: metadata['paygate_id']:'<id>'.
const searchByPaygateID = "metadata['paygate_id']:'"

// search finds the PaymentIntents made for a Paygate payment, newest first.
func (s *Sandbox) search(ctx context.Context, query string, limit int) (sandboxstore.Answer, error) {
	value, known := strings.CutPrefix(query, searchByPaygateID)
	value, closed := strings.CutSuffix(value, "'")
	reference := strings.ReplaceAll(value, `\'`, "'")
	if !known || !closed || len(query) > 500 || strings.Count(reference, "'") != strings.Count(value, `\'`) {
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "query",
			Msg: "This sandbox searches by metadata['paygate_id'] only."}), nil
	}
	intents, err := s.store.ByReference(ctx, sandboxobject.KindCharge, reference, 0, limit+1)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusOK, page("search_result", "/v1/payment_intents/search", intents, limit)), nil
}

// refunds lists a PaymentIntent's refunds, newest first.
func (s *Sandbox) refunds(ctx context.Context, intentID string, limit int) (sandboxstore.Answer, error) {
	if _, err := s.store.Get(ctx, sandboxobject.KindCharge, intentID); errors.Is(err, sandboxstore.ErrNotFound) {
		return errorBody(http.StatusNotFound, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodeResourceMissing,
			Param: "payment_intent", Msg: "No such payment_intent: '" + intentID + "'"}), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	refunds, err := s.store.Refunds(ctx, intentID, limit+1)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusOK, page("list", "/v1/refunds", refunds, limit)), nil
}

// getRefund answers a refund as it stands.
func (s *Sandbox) getRefund(ctx context.Context, id string) (sandboxstore.Answer, error) {
	refund, err := s.store.Get(ctx, sandboxobject.KindRefund, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return errorBody(http.StatusNotFound, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodeResourceMissing,
			Param: "id", Msg: "No such refund: '" + id + "'"}), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: refund.Body}, nil
}

func errorBody(status int, e stripego.Error) sandboxstore.Answer {
	return sandboxstore.JSON(status, map[string]any{"error": e})
}

func writeError(w http.ResponseWriter, status int, e stripego.Error) {
	answer := errorBody(status, e)
	provider.WriteAnswer(w, answer.Status, answer.Body)
}
