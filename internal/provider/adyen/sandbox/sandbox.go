// Package sandbox is Adyen's built-in stand-in: it answers the requests the Adyen adapter sends
// (payments, their details once the shopper authenticated, and their refunds, captures and
// cancellations) as Adyen's test environment does, serves the page shoppers authenticate on, and
// sends its standard notifications.
package sandbox

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Sandbox answers as Adyen's test environment does, for the requests the adapter sends, and
// replays an answer to a repeated Idempotency-Key. It keeps its state in Paygate's database, so
// every server sees one Adyen. Like Adyen, it answers no look-ups.
//
//	POST /v71/payments                 authorises a test card, with its outcome, and captures it
//	                                   at once; with additionalData.manualCapture "true" it holds
//	                                   the authorisation instead
//	POST /v71/payments/details         tells what became of a payment that redirected the
//	                                   shopper, given the redirectResult they came back with
//	POST .../{pspReference}/refunds    takes a refund of a payment captured, to settle later
//	POST .../{pspReference}/captures   captures all or part of an authorisation held, releasing
//	                                   the rest: refunds take no more than was captured
//	POST .../{pspReference}/cancels    voids an authorisation held
//
// A capture or cancellation of a payment that is no authorisation held (captured at once or
// already, cancelled, refused), or a capture above the authorisation, is refused at once, 422 in
// Adyen's error shape; of the captures and cancellations of one authorisation, through any server,
// one is taken. (Adyen may instead take such a request and refuse it later by a notification of
// success false, which the adapter reads as well.)
//
// The test cards' outcomes:
//
//	4242424242424242  Authorised
//	4000000000000002  Refused, reason 2 (Refused)
//	4000000000009995  Refused, reason 12 (Not enough balance)
//	4000000000000069  Refused, reason 6 (Expired Card)
//	4000000000000119  Error, reason 4 (Acquirer Error)
//	4000002760003184  RedirectShopper; once the shopper authenticated, Authorised, or when they
//	                  failed to, Refused, reason 11 (3D Not Authenticated)
//	4000008400001629  RedirectShopper; then Refused, reason 2 (Refused), or 11 when they failed
//
// The last two redirect only a payment that asks for 3-D Secure, by a returnUrl or browserInfo;
// one that asks for none is Refused at once, reason 38 (Authentication required), as Adyen
// refuses a payment whose issuer wants the authentication that was not performed. A payment that
// redirects the shopper (3-D Secure 2 by redirect: it must come with a returnUrl, channel Web and
// browserInfo, or is refused 422) is answered with its resultCode and the action of a redirect by
// GET to its challenge page, pages + "/challenge/{id}", and no pspReference, as Adyen gives it once
// the payment is decided. The page's form decides the payment, once, through any server; sends
// the AUTHORISATION notification; and sends the browser back to the returnUrl with a
// redirectResult, which /payments/details alone reads, for that payment alone. A payment awaiting
// the shopper is no authorisation held: it cannot be captured or cancelled.
//
// Settle settles the refunds received SettleAfter ago or longer: each succeeds, but a refund of
// 13.13 (1313 minor units, provider.FailingRefundMinor) fails, as a REFUND notification with
// success false would say, and its amount can be refunded again.
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency), or lose its answers
// (LoseAnswers), on every endpoint of the API; the challenge page is the shopper's, and stays up.
//
// With SendWebhooks it sends Adyen's notifications, signed, about the answers it keeps:
// AUTHORISATION, success true or false, for a payment decided (at once, or by its challenge
// page); CAPTURE for a capture and CANCELLATION for
// a cancellation, success true, each with the authorisation's pspReference as originalReference
// and its own as pspReference; a replayed answer sends nothing again. Refunds are notified as
// they settle (SendRefundSettled).
type Sandbox struct {
	provider.SandboxSwitches

	// SettleAfter is how long a refund stays received on the sandbox's clock; 0 means
	// provider.DefaultSettleAfter.
	SettleAfter time.Duration
	// Settled, when set, hears of each refund this server settled, once it is committed; among
	// the servers over one database each refund is heard of once (Adyen's REFUND notification
	// tells the same). A server stopped between the two loses it.
	Settled func(ctx context.Context, refund provider.SettledRefund)

	// SandboxWebhooks adds no header: Adyen signs inside the body (additionalData.hmacSignature).
	provider.SandboxWebhooks

	store *sandboxstore.Store
	// signItem is the hmacSignature of a notification item (its JSON).
	signItem func(item []byte) (string, error)
	// pagesURL is where the shopper's browser reaches the sandbox's pages, served by pages.
	pagesURL string
	pages    *http.ServeMux
}

// New returns the sandbox over its state in client's database, on the clock now, signing its
// notifications' items with signItem, its pages reached by the shopper's browser at pagesURL.
func New(client *ent.Client, now func() time.Time, signItem func(item []byte) (string, error), pagesURL string) *Sandbox {
	s := &Sandbox{store: sandboxstore.New(client, "adyen", now), signItem: signItem, pagesURL: pagesURL, pages: http.NewServeMux(),
		SandboxWebhooks: provider.NewSandboxWebhooks(func([]byte, time.Time) http.Header { return nil })}
	s.pages.Handle(challengePath+"{id}", provider.Challenge{Provider: "Adyen", Describe: s.describeChallenge, Finish: s.finishChallenge})
	return s
}

// The statuses of a payment in the sandbox's store, beside its resultCode: resultAuthorised is a
// payment captured (at once, or by a capture), the only one refunds take from.
const (
	// statusAwaitingCapture is an authorisation made to capture manually, held until it is
	// captured or cancelled; Adyen shows it Authorised.
	statusAwaitingCapture = "AwaitingCapture"
	// statusCancelled is a payment's status once cancelled after it was authorised.
	statusCancelled = "Cancelled"
)

// The statuses of a refund in the sandbox's store: Adyen shows only the first.
const (
	refundReceived = "received"
	refundSettled  = "settled"
	refundFailed   = "failed"
)

// modificationReceived is the status of a capture or cancellation in Adyen's answer: taken, to be
// confirmed by notification.
const modificationReceived = "received"

// refundFailedReason is the reason the sandbox gives a refund it fails.
const refundFailedReason = "Refund failed"

// refusedByIssuer is the plain refusal of the declined test card, and of the card declined once
// its shopper authenticated.
var refusedByIssuer = [3]string{resultRefused, "2", "Refused"}

// testCards are the result and refusal reason of the test cards.
var testCards = map[string][3]string{
	"4000000000000002": refusedByIssuer,
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

// Adyen's refusals, as the sandbox answers them.
var (
	unparsable     = sandboxstore.JSON(http.StatusBadRequest, adyenError{400, "702", "Structure could not be parsed", "validation"})
	unknownPayment = sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "167", "Original pspReference required for this operation", "validation"})
	invalidAmount  = sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"})
	notCapturable  = sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "000", "Payment cannot be captured: it is no authorisation awaiting capture", "validation"})
	notCancellable = sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "000", "Payment cannot be cancelled: it is no authorisation awaiting capture", "validation"})
)

func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, challengePath) {
		s.pages.ServeHTTP(w, r)
		return
	}
	s.serveAPI(w, r)
}

// serveAPI answers the requests of Adyen's Checkout API, misbehaving as the switches say.
func (s *Sandbox) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.Delay(r) {
		return
	}
	run, known := s.route(r.URL.Path)
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
	case r.Method != http.MethodPost || !known:
		provider.WriteJSON(w, http.StatusNotFound, adyenError{404, "000", "Not Found", "validation"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		provider.WriteJSON(w, http.StatusBadRequest, adyenError{400, "702", "Unreadable body", "validation"})
		return
	}
	answer, replayed, reused, err := s.store.Answer(r.Context(), r.Header.Get("Idempotency-Key"), r.URL.Path+"\n"+string(body), func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		return run(ctx, tx, body)
	})
	switch {
	case err != nil:
		provider.WriteJSON(w, http.StatusInternalServerError, adyenError{500, "901", "Internal error", "internal"})
		return
	case reused:
		provider.WriteJSON(w, http.StatusUnprocessableEntity, adyenError{422, "704", "request already processed or in progress", "validation"})
		return
	case replayed:
		w.Header().Set("Idempotency-Key-Replayed", "true")
	}
	s.Deliver(w, answer.Status, answer.Body)
}

// answerer answers a request's body within the transaction that keeps its answer.
type answerer func(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error)

// route is what answers a request to path: /v71/payments, /v71/payments/details, or a
// modification of the payment it names (/v71/payments/{pspReference}/refunds, captures or
// cancels).
func (s *Sandbox) route(path string) (answerer, bool) {
	switch path {
	case "/v71/payments":
		return s.pay, true
	case "/v71/payments/details":
		return s.details, true
	}
	rest, found := strings.CutPrefix(path, "/v71/payments/")
	reference, modification, _ := strings.Cut(rest, "/")
	var modify func(ctx context.Context, tx *ent.Tx, reference string, body []byte) (sandboxstore.Answer, error)
	switch modification {
	case "refunds":
		modify = s.refund
	case "captures":
		modify = s.capture
	case "cancels":
		modify = s.cancel
	}
	if !found || reference == "" || modify == nil {
		return nil, false
	}
	return func(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
		return modify(ctx, tx, reference, body)
	}, true
}

// pay authorises a card payment, and captures it unless asked to capture it manually.
func (s *Sandbox) pay(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return unparsable, nil
	case req.Amount.Value < 1 || len(req.Amount.Currency) != 3:
		return invalidAmount, nil
	case req.MerchantAccount == "":
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "901", "Invalid Merchant Account", "security"}), nil
	case req.PaymentMethod.Type != "scheme" || req.PaymentMethod.Number == "" || len(req.PaymentMethod.ExpiryMonth) != 2:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "101", "Invalid card number", "validation"}), nil
	case provider.AsksAuthentication(req.PaymentMethod.Number) && asksAuthentication(req):
		return s.redirectShopper(ctx, tx, req)
	}
	payment := paymentAnswer{PSPReference: pspReference(), ResultCode: resultAuthorised, MerchantReference: req.Reference, Amount: req.Amount}
	outcome, listed := testCards[req.PaymentMethod.Number]
	if provider.AsksAuthentication(req.PaymentMethod.Number) {
		outcome, listed = authenticationRequired, true // the issuer wants 3-D Secure, which was not asked for
	}
	if listed {
		payment.ResultCode, payment.RefusalReasonCode, payment.RefusalReason = outcome[0], outcome[1], outcome[2]
	}
	status := payment.ResultCode
	if status == resultAuthorised && req.AdditionalData["manualCapture"] == "true" {
		status = statusAwaitingCapture
	}
	stored := storedPayment{paymentAnswer: payment, MerchantAccount: req.MerchantAccount}
	body, err := json.Marshal(stored)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.PSPReference, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount.Value, Currency: req.Amount.Currency, Status: status, Body: body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	return sandboxstore.JSON(http.StatusOK, payment), s.notifyOnCommit(tx, authorisation(stored))
}

// refund takes a refund of a captured payment, to settle later.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, reference string, body []byte) (sandboxstore.Answer, error) {
	var req refundRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return unknownPayment, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return unparsable, nil
	case req.Amount.Value < 1 || req.Amount.Currency != payment.Currency:
		return invalidAmount, nil
	}
	if taken, err := s.store.TakeRefund(ctx, tx, reference, resultAuthorised, req.Amount.Value); err != nil || !taken {
		return invalidAmount, err
	}
	refund := refundAnswer{MerchantAccount: req.MerchantAccount, PaymentPSPReference: reference,
		PSPReference: pspReference(), Reference: req.Reference, Status: refundReceived, Amount: req.Amount}
	answer := sandboxstore.JSON(http.StatusCreated, refund)
	err = s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.PSPReference, Kind: sandboxobject.KindRefund, Reference: req.Reference,
		ChargeID: reference, Amount: req.Amount.Value, Currency: req.Amount.Currency, Status: refund.Status, Body: answer.Body})
	return answer, err
}

// capture captures all or part of an authorisation held, releasing the rest.
func (s *Sandbox) capture(ctx context.Context, tx *ent.Tx, reference string, body []byte) (sandboxstore.Answer, error) {
	var req captureRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return unknownPayment, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return unparsable, nil
	case req.Amount.Value < 1 || req.Amount.Value > payment.Amount || req.Amount.Currency != payment.Currency:
		return invalidAmount, nil
	}
	var stored storedPayment
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return sandboxstore.Answer{}, err
	}
	// A conditional move, so that of the captures and cancellations of one authorisation sent at
	// once, through any server, one is taken.
	if captured, err := s.store.Capture(ctx, tx, reference, statusAwaitingCapture, resultAuthorised, req.Amount.Value, payment.Body); err != nil || !captured {
		return notCapturable, err
	}
	capture := captureAnswer{Amount: req.Amount, MerchantAccount: req.MerchantAccount, PaymentPSPReference: reference,
		PSPReference: pspReference(), Reference: req.Reference, Status: modificationReceived}
	return sandboxstore.JSON(http.StatusCreated, capture), s.notifyOnCommit(tx, notificationRequestItem{Amount: req.Amount, EventCode: eventCapture,
		MerchantAccountCode: stored.MerchantAccount, MerchantReference: req.Reference, OriginalReference: reference,
		PSPReference: capture.PSPReference, Success: "true"})
}

// cancel voids an authorisation held.
func (s *Sandbox) cancel(ctx context.Context, tx *ent.Tx, reference string, body []byte) (sandboxstore.Answer, error) {
	var req cancelRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return unknownPayment, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return unparsable, nil
	}
	var stored storedPayment
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return sandboxstore.Answer{}, err
	}
	stored.ResultCode = statusCancelled
	cancelled, err := json.Marshal(stored)
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	// Conditional, as a capture is: one of them is taken.
	if moved, err := s.store.SetStatus(ctx, tx, reference, statusAwaitingCapture, statusCancelled, cancelled); err != nil || !moved {
		return notCancellable, err
	}
	cancellation := cancelAnswer{MerchantAccount: req.MerchantAccount, PaymentPSPReference: reference, PSPReference: pspReference(),
		Reference: req.Reference, Status: modificationReceived}
	return sandboxstore.JSON(http.StatusCreated, cancellation), s.notifyOnCommit(tx, notificationRequestItem{
		Amount: amount{Value: payment.Amount, Currency: payment.Currency}, EventCode: eventCancellation, MerchantAccountCode: stored.MerchantAccount,
		MerchantReference: req.Reference, OriginalReference: reference, PSPReference: cancellation.PSPReference, Success: "true"})
}

// Settle settles the refunds received SettleAfter ago or longer, and tells Settled of each.
func (s *Sandbox) Settle(ctx context.Context) (int, error) {
	settled, err := s.store.SettleDue(ctx, refundReceived, cmp.Or(s.SettleAfter, provider.DefaultSettleAfter),
		func(refund *ent.SandboxObject, _ time.Time) sandboxstore.Settlement {
			if refund.Amount == provider.FailingRefundMinor {
				return sandboxstore.Settlement{Status: refundFailed, Failed: true}
			}
			return sandboxstore.Settlement{Status: refundSettled}
		})
	var sendErr error
	for _, done := range settled {
		if s.Settled != nil {
			report := provider.SettledRefund{ProviderRefundID: done.Refund.ID, RefundID: done.Refund.Reference,
				ProviderPaymentID: *done.Refund.ChargeID, Amount: money.Amount{Minor: done.Refund.Amount, Currency: done.Refund.Currency},
				Succeeded: !done.Settlement.Failed, SettledAt: done.At}
			if done.Settlement.Failed {
				report.Reason = refundFailedReason
			}
			s.Settled(ctx, report)
		}
		if s.SendsWebhooks() {
			var taken refundAnswer
			if err := json.Unmarshal(done.Refund.Body, &taken); err != nil {
				sendErr = errors.Join(sendErr, err)
				continue
			}
			sendErr = errors.Join(sendErr, s.SendRefundSettled(SettledRefund{PSPReference: done.Refund.ID, PaymentPSPReference: *done.Refund.ChargeID,
				MerchantAccount: taken.MerchantAccount, Reference: done.Refund.Reference, Amount: done.Refund.Amount,
				Currency: done.Refund.Currency, Succeeded: !done.Settlement.Failed}))
		}
	}
	return len(settled), errors.Join(err, sendErr)
}

// pspReference is a new Adyen reference: 16 upper-case letters and digits, as Adyen's are, each
// carrying 5 random bits (rand.Text's alphabet), so that no reference can be guessed from another.
func pspReference() string {
	return rand.Text()[:16]
}
