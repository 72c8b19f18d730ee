// Package sandbox is Stripe's built-in stand-in: it answers the requests the Stripe adapter
// sends as Stripe's test mode does, and sends Stripe's webhooks.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/card"
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
//	4000002760003184  asks the shopper to authenticate (3-D Secure), then succeeds
//	4000008400001629  asks the shopper to authenticate, then card_declined (generic_decline)
//
// A card that asks for authentication leaves its PaymentIntent requires_action, charging nothing
// yet: with a return_url, its next_action redirects the shopper to the sandbox's challenge page
// (GET /challenge/{id}), whose form decides the intent as Stripe does once its 3-D Secure page is
// done with, and sends the browser back to the return_url with payment_intent,
// payment_intent_client_secret and redirect_status; without one, its next_action is
// use_stripe_sdk, which only Stripe.js takes, and it has no challenge page: only a cancellation
// moves it. The adapter reads the intent then by GET /v1/payment_intents/{id}. (Stripe refuses,
// 400, a confirmation without a return_url whose automatic_payment_methods allow redirects, as
// they do unless allow_redirects is never; the sandbox takes it either way, for clients that
// send neither, such as the load test's.)
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency), so that failover,
// unknown outcomes and timeouts can be shown. They apply to the API, not to the challenge page.
//
// With SendWebhooks it sends Stripe's events, signed, about the answers it keeps:
// payment_intent.succeeded or payment_intent.payment_failed for a charge,
// payment_intent.amount_capturable_updated for an authorisation, payment_intent.succeeded for its
// capture and payment_intent.canceled for its cancellation, charge.refunded for a refund; a
// replayed answer sends nothing again. A charge that asks for authentication is told of by
// payment_intent.requires_action, and then, once the shopper is done, as any other charge.
type Sandbox struct {
	provider.SandboxSwitches

	provider.SandboxWebhooks

	store *sandboxstore.Store
	// pages is the address at which the shopper's browser reaches the challenge pages.
	pages string
	// counting is how Stripe counts amounts, for the challenge page to show them.
	counting provider.Counting
	mux      *http.ServeMux
}

// New returns the sandbox over its state in client's database, signing its webhooks with sign,
// its challenge pages reached by the browser at pages, and showing amounts as counting reads them.
func New(client *ent.Client, now func() time.Time, sign outbound.WebhookSigner, pages string, counting provider.Counting) *Sandbox {
	s := &Sandbox{store: sandboxstore.New(client, "stripe", now), SandboxWebhooks: provider.NewSandboxWebhooks(sign), pages: pages, counting: counting,
		mux: http.NewServeMux()}
	s.mux.Handle("/challenge/{id}", provider.Challenge{Provider: "Stripe", Describe: s.describeChallenge, Finish: s.finishChallenge})
	s.mux.HandleFunc("/", s.serveAPI)
	return s
}

// ServeHTTP serves the challenge pages, and Stripe's API at every other path.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Sandbox) serveAPI(w http.ResponseWriter, r *http.Request) {
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
	case r.Method == http.MethodGet && (strings.HasPrefix(r.URL.Path, "/v1/payment_intents/") || r.URL.Path == "/v1/refunds" ||
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

// genericDecline is the error of a card its issuer declined without saying why.
var genericDecline = stripego.Error{Type: stripego.ErrorTypeCard, Code: stripego.ErrorCodeCardDeclined,
	DeclineCode: stripego.DeclineCodeGenericDecline, Msg: "Your card was declined."}

// intent creates and confirms a PaymentIntent: charged at once, or, with capture_method=manual,
// authorised to be captured later; or, for a card that asks for it, waiting for the shopper to
// authenticate.
func (s *Sandbox) intent(ctx context.Context, tx *ent.Tx, r *http.Request) (sandboxstore.Answer, error) {
	amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
	currency := r.PostForm.Get("currency")
	number := r.PostForm.Get("payment_method_data[card][number]")
	returnURL := r.PostForm.Get("return_url")
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
	case returnURL != "" && !provider.WebAddress(returnURL):
		return errorBody(http.StatusBadRequest, stripego.Error{Type: stripego.ErrorTypeInvalidRequest, Param: "return_url", Msg: "Not a valid URL"}), nil
	}
	id := prefixid.New("pi")
	intent := &stripego.PaymentIntent{
		ID: id, Object: "payment_intent", Amount: amount, Currency: stripego.Currency(currency), ClientSecret: id + "_secret_" + rand.Text(),
		Created: s.store.Now().Unix(), Metadata: map[string]string{"paygate_id": r.PostForm.Get("metadata[paygate_id]")},
		CaptureMethod: captureMethod, Status: stripego.PaymentIntentStatusSucceeded, AmountReceived: amount,
	}
	charge, method := chargeID(id), cardMethod(r.PostForm)
	latestCharge := &charge
	event := stripego.EventTypePaymentIntentSucceeded
	outcome, declined := testCards[number]
	switch {
	case provider.AsksAuthentication(number):
		// Nothing is charged before the shopper authenticates.
		event, intent.Status, intent.AmountReceived, latestCharge = stripego.EventTypePaymentIntentRequiresAction, stripego.PaymentIntentStatusRequiresAction, 0, nil
		intent.NextAction = s.authentication(id, returnURL)
	case declined:
		// Stripe takes a declined card off the intent, which then requires another.
		event, intent.Status, intent.AmountReceived, method = stripego.EventTypePaymentIntentPaymentFailed, stripego.PaymentIntentStatusRequiresPaymentMethod, 0, nil
		intent.LastPaymentError = &stripego.Error{Type: stripego.ErrorTypeCard, Code: stripego.ErrorCode(outcome[0]),
			DeclineCode: stripego.DeclineCode(outcome[1]), Msg: "Your card was declined."}
	case captureMethod == stripego.PaymentIntentCaptureMethodManual:
		event, intent.Status = stripego.EventTypePaymentIntentAmountCapturableUpdated, stripego.PaymentIntentStatusRequiresCapture
		intent.AmountReceived, intent.AmountCapturable = 0, amount
	}
	body, err := json.Marshal(struct {
		*stripego.PaymentIntent
		LatestCharge  *string        `json:"latest_charge"` // by id, as Stripe shows it unexpanded; null while nothing is charged
		PaymentMethod *paymentMethod `json:"payment_method"`
	}{intent, latestCharge, method})
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

// authentication is the next action of a PaymentIntent whose card asks the shopper to
// authenticate: a redirect to its challenge page, which sends the browser back to returnURL; with
// no returnURL, Stripe.js's own (use_stripe_sdk), which nothing but Stripe.js takes.
func (s *Sandbox) authentication(id, returnURL string) *stripego.PaymentIntentNextAction {
	if returnURL == "" {
		return &stripego.PaymentIntentNextAction{Type: stripego.PaymentIntentNextActionTypeUseStripeSDK,
			UseStripeSDK: &stripego.PaymentIntentNextActionUseStripeSDK{}}
	}
	return &stripego.PaymentIntentNextAction{Type: stripego.PaymentIntentNextActionTypeRedirectToURL,
		RedirectToURL: &stripego.PaymentIntentNextActionRedirectToURL{URL: s.pages + "/challenge/" + id, ReturnURL: returnURL}}
}

// paymentMethod is a card's PaymentMethod as Stripe shows it expanded (expand[]=payment_method):
// its last four digits, which the sandbox keeps instead of the number, say how a card that asks
// for authentication answers once the shopper is done.
type paymentMethod struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Card     paymentMethodCard `json:"card"`
	Livemode bool              `json:"livemode"`
	Type     string            `json:"type"`
}

type paymentMethodCard struct {
	Brand    string `json:"brand"`
	ExpMonth int64  `json:"exp_month"`
	ExpYear  int64  `json:"exp_year"`
	Last4    string `json:"last4"`
}

// cardMethod is the PaymentMethod made of the card in a confirmation's payment_method_data.
func cardMethod(form url.Values) *paymentMethod {
	number := form.Get("payment_method_data[card][number]")
	expMonth, _ := strconv.ParseInt(form.Get("payment_method_data[card][exp_month]"), 10, 64)
	expYear, _ := strconv.ParseInt(form.Get("payment_method_data[card][exp_year]"), 10, 64)
	return &paymentMethod{ID: prefixid.New("pm"), Object: "payment_method", Type: "card",
		Card: paymentMethodCard{Brand: card.BrandOf(number), ExpMonth: expMonth, ExpYear: expYear, Last4: lastFour(number)}}
}

func lastFour(number string) string { return number[max(len(number)-4, 0):] }

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
// authorisation, a declined or failed charge, and one waiting for the shopper to authenticate,
// whose page then no longer takes them. Stripe cancels no succeeded one: it is refunded.
var cancelable = map[string]bool{
	string(stripego.PaymentIntentStatusRequiresCapture):       true,
	string(stripego.PaymentIntentStatusRequiresPaymentMethod): true,
	string(stripego.PaymentIntentStatusRequiresAction):        true,
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
		"cancellation_reason": reason, "canceled_at": s.store.Now().Unix(), "next_action": nil})
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

// lookUp answers a GET: a search of PaymentIntents, a PaymentIntent, a refund, or a
// PaymentIntent's refunds.
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
	case strings.HasPrefix(r.URL.Path, "/v1/payment_intents/"):
		answer, err = s.getIntent(r.Context(), strings.TrimPrefix(r.URL.Path, "/v1/payment_intents/"))
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

// getIntent answers a PaymentIntent as it stands.
func (s *Sandbox) getIntent(ctx context.Context, id string) (sandboxstore.Answer, error) {
	intent, err := s.store.Get(ctx, sandboxobject.KindCharge, id)
	if errors.Is(err, sandboxstore.ErrNotFound) {
		return noSuchIntent(id), nil
	} else if err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.Answer{Status: http.StatusOK, Body: intent.Body}, nil
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
