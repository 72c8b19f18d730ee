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
// test cards with their test outcomes, or with capture_method=manual authorises them
// (requires_capture) for a capture (POST /v1/payment_intents/{id}/capture, of part or all of the
// amount) or a cancellation (POST /v1/payment_intents/{id}/cancel) to follow, refunds what was
// charged or captured at once, replays an answer to a repeated Idempotency-Key, and answers the
// adapter's look-ups (a search of PaymentIntents by metadata['paygate_id'], a refund by id, a
// PaymentIntent's refunds) from what it stored. It keeps its state in Paygate's database, so
// every server sees one Stripe: an authorisation is captured or canceled once, whichever server
// is asked.
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
// payment_intent.succeeded or payment_intent.payment_failed for a charge,
// payment_intent.amount_capturable_updated for an authorisation, payment_intent.succeeded for its
// capture and payment_intent.canceled for its cancellation, charge.refunded for a refund; a
// replayed answer sends nothing again.
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
	}
	run := s.poster(r.URL.Path)
	if r.Method != http.MethodPost || run == nil {
		writeError(w, http.StatusNotFound, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "Unrecognized request URL."})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Msg: "Invalid request body."})
		return
	}
	key, request := r.Header.Get("Idempotency-Key"), r.URL.Path+"?"+r.PostForm.Encode()
	answer, replayed, reused, err := s.store.Answer(r.Context(), key, request, func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		return run(ctx, tx, r)
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

// poster is what answers a POST to path, nil for a path the sandbox does not serve.
func (s *Sandbox) poster(path string) func(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	switch path {
	case "/v1/payment_intents":
		return s.intent
	case "/v1/refunds":
		return s.refund
	}
	rest, ofIntent := strings.CutPrefix(path, "/v1/payment_intents/")
	id, action, _ := strings.Cut(rest, "/")
	switch {
	case !ofIntent || id == "":
		return nil
	case action == "capture":
		return func(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
			return s.capture(ctx, tx, r, id)
		}
	case action == "cancel":
		return func(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
			return s.cancel(ctx, tx, r, id)
		}
	}
	return nil
}

// testCards are the outcomes of Stripe's test cards: error code and decline code.
var testCards = map[string][2]string{
	"4000000000000002": {"card_declined", "generic_decline"},
	"4000000000009995": {"card_declined", "insufficient_funds"},
	"4000000000000069": {"expired_card", "expired_card"},
	"4000000000000119": {"processing_error", ""},
}

// intent creates and confirms a PaymentIntent: charged at once, or, with capture_method=manual,
// authorised to be captured later.
func (s *Sandbox) intent(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
	currency := r.PostForm.Get("currency")
	number := r.PostForm.Get("payment_method_data[card][number]")
	captureMethod := stripego.PaymentIntentCaptureMethod(r.PostForm.Get("capture_method"))
	switch captureMethod {
	case "":
		captureMethod = stripego.PaymentIntentCaptureMethodAutomaticAsync // Stripe's default since API version 2024-04-10
	case stripego.PaymentIntentCaptureMethodAutomatic, stripego.PaymentIntentCaptureMethodAutomaticAsync, stripego.PaymentIntentCaptureMethodManual:
	default:
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "capture_method",
			Msg: "Invalid capture_method: must be one of automatic, automatic_async, or manual"}), nil
	}
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
		CaptureMethod: captureMethod, Status: stripego.PaymentIntentStatusSucceeded, AmountReceived: amount,
	}
	event := stripego.EventTypePaymentIntentSucceeded
	outcome, declined := testCards[number]
	switch {
	case declined:
		event, intent.Status, intent.AmountReceived = stripego.EventTypePaymentIntentPaymentFailed, stripego.PaymentIntentStatusRequiresPaymentMethod, 0
		intent.LastPaymentError = &stripego.Error{Type: stripego.ErrorTypeCard, Code: stripego.ErrorCode(outcome[0]),
			DeclineCode: stripego.DeclineCode(outcome[1]), Msg: "Your card was declined."}
	case captureMethod == stripego.PaymentIntentCaptureMethodManual:
		event, intent.Status = stripego.EventTypePaymentIntentAmountCapturableUpdated, stripego.PaymentIntentStatusRequiresCapture
		intent.AmountReceived, intent.AmountCapturable = 0, amount
	}
	body, err := json.Marshal(struct {
		*stripego.PaymentIntent
		LatestCharge string `json:"latest_charge"` // by id, as Stripe shows it unexpanded
	}{intent, chargeID(intent.ID)})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	// An authorisation is stored as requires_capture, a status refunds do not take from.
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: intent.ID, Kind: sandboxobject.KindCharge, Reference: intent.Metadata["paygate_id"],
		Amount: amount, Currency: currency, Status: string(intent.Status), Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.emitOnCommit(tx, event, body, r.Header.Get("Idempotency-Key")); err != nil {
		return sandboxstore.Answer{}, err
	}
	if declined {
		return intentError(http.StatusPaymentRequired, *intent.LastPaymentError, body), nil
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: body}, nil
}

// capture captures part or all of an authorised PaymentIntent (all when amount_to_capture is not
// given), releasing the rest; once tx commits it sends payment_intent.succeeded.
func (s *Sandbox) capture(ctx context.Context, tx *ent.Tx, r *http.Request, id string) (sandboxstore.Answer, error) {
	intent, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return noSuchIntent(id), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	amount := intent.Amount
	if text := r.PostForm.Get("amount_to_capture"); text != "" {
		if amount, err = strconv.ParseInt(text, 10, 64); err != nil || amount < 1 {
			return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "amount_to_capture", Msg: "Invalid positive integer"}), nil
		}
	}
	switch {
	case intent.Status != string(stripego.PaymentIntentStatusRequiresCapture):
		return cannotCapture(intent), nil
	case amount > intent.Amount:
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodeAmountTooLarge,
			Param: "amount_to_capture", Msg: "The payment could not be captured because the requested capture amount is greater than the authorized amount."}), nil
	}
	body, err := reshape(intent.Body, map[string]any{"status": stripego.PaymentIntentStatusSucceeded, "amount_received": amount, "amount_capturable": 0})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	// The move is conditional: of captures and cancellations of one authorisation at once, on any
	// server, one is taken, and the others find it no longer requires_capture.
	captured, err := s.store.Capture(ctx, tx, id, string(stripego.PaymentIntentStatusRequiresCapture),
		string(stripego.PaymentIntentStatusSucceeded), amount, body)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if !captured {
		if intent, err = s.store.GetIn(ctx, tx, sandboxobject.KindCharge, id); err != nil {
			return sandboxstore.Answer{}, err
		}
		return cannotCapture(intent), nil
	}
	if err := s.emitOnCommit(tx, stripego.EventTypePaymentIntentSucceeded, body, r.Header.Get("Idempotency-Key")); err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: body}, nil
}

// cancelable are the statuses from which the sandbox's PaymentIntents can be canceled: an
// authorisation, and a declined or failed charge. Stripe cancels no succeeded one: it is refunded.
var cancelable = map[string]bool{
	string(stripego.PaymentIntentStatusRequiresCapture):       true,
	string(stripego.PaymentIntentStatusRequiresPaymentMethod): true,
}

// cancellationReasons are the reasons Stripe takes for a cancellation.
var cancellationReasons = map[string]bool{
	string(stripego.PaymentIntentCancellationReasonDuplicate):           true,
	string(stripego.PaymentIntentCancellationReasonFraudulent):          true,
	string(stripego.PaymentIntentCancellationReasonRequestedByCustomer): true,
	string(stripego.PaymentIntentCancellationReasonAbandoned):           true,
}

// cancel voids a PaymentIntent, releasing what it holds; once tx commits it sends
// payment_intent.canceled.
func (s *Sandbox) cancel(ctx context.Context, tx *ent.Tx, r *http.Request, id string) (sandboxstore.Answer, error) {
	intent, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return noSuchIntent(id), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	var reason any // null when none was given
	if text := r.PostForm.Get("cancellation_reason"); text != "" {
		if !cancellationReasons[text] {
			return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "cancellation_reason",
				Msg: "Invalid cancellation_reason: must be one of duplicate, fraudulent, requested_by_customer, or abandoned"}), nil
		}
		reason = text
	}
	if !cancelable[intent.Status] {
		return cannotCancel(intent), nil
	}
	body, err := reshape(intent.Body, map[string]any{"status": stripego.PaymentIntentStatusCanceled, "amount_capturable": 0,
		"cancellation_reason": reason, "canceled_at": s.store.Now().Unix()})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	// Conditional, as a capture is: the one of them taken first stands.
	canceled, err := s.store.SetStatus(ctx, tx, id, intent.Status, string(stripego.PaymentIntentStatusCanceled), body)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if !canceled {
		if intent, err = s.store.GetIn(ctx, tx, sandboxobject.KindCharge, id); err != nil {
			return sandboxstore.Answer{}, err
		}
		return cannotCancel(intent), nil
	}
	if err := s.emitOnCommit(tx, stripego.EventTypePaymentIntentCanceled, body, r.Header.Get("Idempotency-Key")); err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: body}, nil
}

// cannotCapture is Stripe's refusal to capture a PaymentIntent that holds no authorisation.
func cannotCapture(intent *ent.SandboxObject) sandboxstore.Answer {
	return unexpectedState(intent, "This PaymentIntent could not be captured because it has a status of "+intent.Status+
		". Only a PaymentIntent with one of the following statuses may be captured: requires_capture.")
}

// cannotCancel is Stripe's refusal to cancel a PaymentIntent that succeeded or was canceled.
func cannotCancel(intent *ent.SandboxObject) sandboxstore.Answer {
	return unexpectedState(intent, "You cannot cancel this PaymentIntent because it has a status of "+intent.Status+
		". Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, "+
		"requires_confirmation, requires_action, processing.")
}

// unexpectedState is Stripe's refusal of an action the PaymentIntent's status does not allow: it
// did nothing, and shows the intent as it stands.
func unexpectedState(intent *ent.SandboxObject, message string) sandboxstore.Answer {
	return intentError(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodePaymentIntentUnexpectedState,
		DocURL: "https://stripe.com/docs/error-codes/payment-intent-unexpected-state", Msg: message}, intent.Body)
}

func noSuchIntent(id string) sandboxstore.Answer {
	return errorBody(http.StatusNotFound, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Code: stripego.ErrorCodeResourceMissing,
		Param: "intent", Msg: "No such payment_intent: '" + id + "'"})
}

// refund refunds part or all of a succeeded PaymentIntent.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	intent, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, r.PostForm.Get("payment_intent"))
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "payment_intent", Msg: "No such payment_intent"}), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	amount := charged(intent) - intent.Refunded
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

// charged is what was charged of a PaymentIntent: what was captured of one authorised first.
func charged(intent *ent.SandboxObject) int64 {
	if intent.Captured != nil {
		return *intent.Captured
	}
	return intent.Amount
}

func errorBody(status int, e stripego.Error) sandboxstore.Answer {
	return sandboxstore.JSON(status, map[string]any{"error": e})
}

// intentError is the answer of an error about a PaymentIntent, which carries the intent (its
// JSON) as it stands.
func intentError(status int, e stripego.Error, intent []byte) sandboxstore.Answer {
	return sandboxstore.JSON(status, map[string]any{"error": struct {
		stripego.Error
		PaymentIntent json.RawMessage `json:"payment_intent"`
	}{e, intent}})
}

func writeError(w http.ResponseWriter, status int, e stripego.Error) {
	answer := errorBody(status, e)
	provider.WriteAnswer(w, answer.Status, answer.Body)
}
