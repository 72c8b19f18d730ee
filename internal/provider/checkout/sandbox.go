package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Sandbox answers as Checkout.com's sandbox does, for the requests the adapter sends: it charges
// the test cards with their outcomes, takes refunds to settle later, and replays an answer to a
// repeated Cko-Idempotency-Key. It keeps its state in Paygate's database, so every server sees one
// Checkout.com.
//
//	4242424242424242  approved (10000)
//	4000000000000002  declined, 20005 (do not honour)
//	4000000000009995  declined, 20051 (insufficient funds)
//	4000000000000069  declined, 20054 (expired card)
//	4000000000000119  503: the acquirer could not be reached, nothing was done
//
// Its switches make it answer 503 (Outage), 500 (Fault) or late (Latency).
//
// With SendWebhooks it sends Checkout.com's events, signed, about the answers it keeps:
// payment_approved or payment_declined for a payment; a replayed answer sends nothing again.
// Refunds are told of as they settle (SendRefundSettled).
type Sandbox struct {
	provider.SandboxSwitches

	store    *sandboxstore.Store
	webhooks *provider.WebhookSender
}

// NewSandbox returns the sandbox over its state in client's database.
func NewSandbox(client *ent.Client, now func() time.Time) *Sandbox {
	return &Sandbox{store: sandboxstore.New(client, "checkout", now)}
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
	answer, replayed, reused, err := s.store.Answer(r.Context(), r.Header.Get("Cko-Idempotency-Key"), r.URL.Path+"\n"+string(body), func(ctx context.Context, tx *ent.Tx) (sandboxstore.Answer, error) {
		if isRefund {
			return s.refund(ctx, tx, paymentID, body)
		}
		return s.pay(ctx, tx, body)
	})
	switch {
	case err != nil:
		w.WriteHeader(http.StatusInternalServerError)
		return
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

// pay requests a payment.
func (s *Sandbox) pay(ctx context.Context, tx *ent.Tx, body []byte) (sandboxstore.Answer, error) {
	var req paymentRequest
	switch {
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case req.Amount < 1:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("amount_invalid")), nil
	case len(req.Currency) != 3:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("currency_invalid")), nil
	case req.Source.Type != "card" || req.Source.Number == "":
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("card_number_invalid")), nil
	}
	code, listed := testCards[req.Source.Number]
	if listed && code == "" {
		return sandboxstore.Answer{Status: http.StatusServiceUnavailable}, nil
	}
	payment := paymentAnswer{ID: prefixid.New("pay"), ActionID: prefixid.New("act"), Amount: req.Amount, Currency: req.Currency,
		Approved: true, Status: statusCaptured, ResponseCode: codeApproved, ResponseSummary: "Approved", Reference: req.Reference}
	event := eventPaymentApproved
	if listed {
		event, payment.Approved, payment.Status, payment.ResponseCode, payment.ResponseSummary = eventPaymentDeclined, false, "Declined", code, "Declined"
	}
	answer := sandboxstore.JSON(http.StatusCreated, payment)
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: payment.ID, Kind: sandboxobject.KindCharge, Reference: req.Reference,
		Amount: req.Amount, Currency: req.Currency, Status: payment.Status, Body: answer.Body}); err != nil {
		return sandboxstore.Answer{}, err
	}
	return answer, s.emitOnCommit(tx, event, s.paymentEventOf(payment))
}

// refund takes a refund of a captured payment, to settle later.
func (s *Sandbox) refund(ctx context.Context, tx *ent.Tx, paymentID string, body []byte) (sandboxstore.Answer, error) {
	var req refundRequest
	payment, err := s.store.GetIn(ctx, tx, sandboxobject.KindCharge, paymentID)
	switch {
	case errors.Is(err, sandboxstore.ErrNotFound):
		return sandboxstore.Answer{Status: http.StatusNotFound}, nil
	case err != nil:
		return sandboxstore.Answer{}, err
	case json.Unmarshal(body, &req) != nil:
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("request_malformed")), nil
	case req.Amount == 0:
		req.Amount = payment.Amount - payment.Refunded
	}
	taken := false
	if req.Amount >= 1 {
		if taken, err = s.store.TakeRefund(ctx, tx, paymentID, statusCaptured, req.Amount); err != nil {
			return sandboxstore.Answer{}, err
		}
	}
	if !taken {
		return sandboxstore.JSON(http.StatusUnprocessableEntity, invalid("refund_amount_exceeds_balance")), nil
	}
	refund := refundAnswer{ActionID: prefixid.New("act"), Reference: req.Reference}
	answer := sandboxstore.JSON(http.StatusAccepted, refund)
	err = s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.ActionID, Kind: sandboxobject.KindRefund, Reference: req.Reference,
		ChargeID: paymentID, Amount: req.Amount, Currency: payment.Currency, Status: "Pending", Body: answer.Body})
	return answer, err
}
