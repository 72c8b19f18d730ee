// Package sandbox is Adyen's built-in stand-in: it answers the requests the Adyen adapter sends
// as Adyen's test environment does, and sends its standard notifications.
package sandbox

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Sandbox answers as Adyen's test environment does, for the requests the adapter sends: it
// authorises the test cards with their outcomes, takes refunds to settle later, and replays an
// answer to a repeated Idempotency-Key. It keeps its state in Paygate's database, so every server
// sees one Adyen. Like Adyen, it answers no look-ups.
//
//	4242424242424242  Authorised
//	4000000000000002  Refused, reason 2 (Refused)
//	4000000000009995  Refused, reason 12 (Not enough balance)
//	4000000000000069  Refused, reason 6 (Expired Card)
//	4000000000000119  Error, reason 4 (Acquirer Error)
//
// Settle settles the refunds received SettleAfter ago or longer: each succeeds, but a refund of
// 13.13 (1313 minor units, provider.FailingRefundMinor) fails, as a REFUND notification with
// success false would say, and its amount can be refunded again.
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency).
//
// With SendWebhooks it sends Adyen's notifications, signed, about the answers it keeps:
// AUTHORISATION, success true or false, for a payment; a replayed answer sends nothing again.
// Refunds are notified as they settle (SendRefundSettled).
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
}

// New returns the sandbox over its state in client's database, on the clock now, signing its
// notifications' items with signItem.
func New(client *ent.Client, now func() time.Time, signItem func(item []byte) (string, error)) *Sandbox {
	return &Sandbox{store: sandboxstore.New(client, "adyen", now), signItem: signItem,
		SandboxWebhooks: provider.NewSandboxWebhooks(func([]byte, time.Time) http.Header { return nil })}
}

// The statuses of a refund in the sandbox's store: Adyen shows only the first.
const (
	refundReceived = "received"
	refundSettled  = "settled"
	refundFailed   = "failed"
)

// refundFailedReason is the reason the sandbox gives a refund it fails.
const refundFailedReason = "Refund failed"

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
	answer, replayed, reused, err := s.store.Answer(r.Context(), r.Header.Get("Idempotency-Key"), r.URL.Path+"\n"+string(body), func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		if isRefund {
			return s.refund(ctx, tx, reference, body)
		}
		return s.pay(ctx, tx, body)
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

// pay authorises a card payment.
func (s *Sandbox) pay(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusBadRequest, adyenError{400, "702", "Structure could not be parsed", "validation"}), nil
	case req.Amount.Value < 1 || len(req.Amount.Currency) != 3:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"}), nil
	case req.MerchantAccount == "":
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "901", "Invalid Merchant Account", "security"}), nil
	case req.PaymentMethod.Type != "scheme" || req.PaymentMethod.Number == "" || len(req.PaymentMethod.ExpiryMonth) != 2:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "101", "Invalid card number", "validation"}), nil
	}
	payment := paymentAnswer{PSPReference: pspReference(), ResultCode: resultAuthorised, MerchantReference: req.Reference, Amount: req.Amount}
	if outcome, listed := testCards[req.PaymentMethod.Number]; listed {
		payment.ResultCode, payment.RefusalReasonCode, payment.RefusalReason = outcome[0], outcome[1], outcome[2]
	}
	answer := sandboxstore.JSON(http.StatusOK, payment)
	stored, err := json.Marshal(storedPayment{paymentAnswer: payment, MerchantAccount: req.MerchantAccount})
	if err != nil {
		return sandboxstore.Answer{}, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.PSPReference, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount.Value, Currency: req.Amount.Currency, Status: payment.ResultCode, Body: stored}); err != nil {
		return sandboxstore.Answer{}, err
	}
	return answer, s.notifyOnCommit(tx, notificationRequestItem{Amount: req.Amount, EventCode: eventAuthorisation,
		MerchantAccountCode: req.MerchantAccount, MerchantReference: req.Reference, PSPReference: payment.PSPReference,
		Reason: payment.RefusalReason, Success: strconv.FormatBool(payment.ResultCode == resultAuthorised)})
}

// refund takes a refund of an authorised payment, to settle later.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, reference string, body []byte) (sandboxstore.Answer, error) {
	var req refundRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, reference)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "167", "Original pspReference required for this operation", "validation"}), nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusBadRequest, adyenError{400, "702", "Structure could not be parsed", "validation"}), nil
	case req.Amount.Value < 1 || req.Amount.Currency != payment.Currency:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"}), nil
	}
	if taken, err := s.store.TakeRefund(ctx, tx, reference, resultAuthorised, req.Amount.Value); err != nil || !taken {
		return sandboxstore.JSON(http.StatusUnprocessableEntity, adyenError{422, "137", "Invalid amount specified", "validation"}), err
	}
	refund := refundAnswer{MerchantAccount: req.MerchantAccount, PaymentPSPReference: reference,
		PSPReference: pspReference(), Reference: req.Reference, Status: refundReceived, Amount: req.Amount}
	answer := sandboxstore.JSON(http.StatusCreated, refund)
	err = s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.PSPReference, Kind: sandboxobject.KindRefund, Reference: req.Reference,
		ChargeID: reference, Amount: req.Amount.Value, Currency: req.Amount.Currency, Status: refund.Status, Body: answer.Body})
	return answer, err
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

// pspReference is a new Adyen reference: 16 characters.
func pspReference() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(9e15))
	return n.Add(n, big.NewInt(1e15)).String()
}
