package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Types of the events the sandbox sends.
const (
	eventPaymentApproved       = "payment_approved"
	eventPaymentCaptured       = "payment_captured"
	eventPaymentVoided         = "payment_voided"
	eventPaymentDeclined       = "payment_declined"
	eventPaymentRefunded       = "payment_refunded"
	eventPaymentRefundDeclined = "payment_refund_declined"
	eventDisputeReceived       = "dispute_received"

	// A payment waiting for the shopper to authenticate, and one declined as they did not.
	eventPaymentPending              = "payment_pending"
	eventPaymentAuthenticationFailed = "payment_authentication_failed"
)

// codeDeclined is Checkout.com's generic decline (do not honour).
const codeDeclined = "20005"

// event is a Checkout.com event as its webhooks carry it.
type event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedOn string `json:"created_on"`
	Data      any    `json:"data"`
}

// paymentEvent is the data of an event about a payment or one of its actions.
type paymentEvent struct {
	ID              string            `json:"id"`
	ActionID        string            `json:"action_id"`
	Amount          int64             `json:"amount"`
	Currency        string            `json:"currency"`
	Reference       string            `json:"reference,omitempty"`
	ResponseCode    string            `json:"response_code"`
	ResponseSummary string            `json:"response_summary"`
	ProcessedOn     string            `json:"processed_on"`
	Metadata        map[string]string `json:"metadata"`
}

type disputeEvent struct {
	ID                 string `json:"id"`
	Category           string `json:"category"`
	Status             string `json:"status"`
	Amount             int64  `json:"amount"`
	Currency           string `json:"currency"`
	ReasonCode         string `json:"reason_code"`
	PaymentID          string `json:"payment_id"`
	PaymentReference   string `json:"payment_reference,omitempty"`
	EvidenceRequiredBy string `json:"evidence_required_by"`
	ReceivedOn         string `json:"received_on"`
}

// event builds the event of kind about data, dated now.
func (s *Sandbox) event(kind string, data any) (string, []byte, error) {
	e := event{ID: prefixid.New("evt"), Type: kind, CreatedOn: s.timestamp(), Data: data}
	body, err := json.Marshal(e)
	return e.ID, body, err
}

// timestamp is the time now as Checkout.com writes it.
func (s *Sandbox) timestamp() string { return s.store.Now().UTC().Format(time.RFC3339) }

// emit sends the event of kind about data now.
func (s *Sandbox) emit(kind string, data any) error {
	id, body, err := s.event(kind, data)
	if err == nil {
		s.SendWebhook(id, body)
	}
	return err
}

// emitOnCommit sends the event of kind about data once tx commits.
func (s *Sandbox) emitOnCommit(tx *ent.Tx, kind string, data any) error {
	id, body, err := s.event(kind, data)
	if err == nil {
		sandboxstore.OnCommit(tx, func() { s.SendWebhook(id, body) })
	}
	return err
}

// paymentEventOf is the event data of a payment's answer.
func (s *Sandbox) paymentEventOf(p paymentAnswer) paymentEvent {
	return paymentEvent{ID: p.ID, ActionID: p.ActionID, Amount: p.Amount, Currency: p.Currency, Reference: p.Reference,
		ResponseCode: p.ResponseCode, ResponseSummary: p.ResponseSummary, ProcessedOn: s.timestamp(), Metadata: map[string]string{}}
}

// actionEventOf is the event data of an action taken of amount on the payment charge: a capture,
// a void.
func (s *Sandbox) actionEventOf(charge *ent.SandboxObject, taken actionAnswer, amount int64) paymentEvent {
	return paymentEvent{ID: charge.ID, ActionID: taken.ActionID, Amount: amount, Currency: charge.Currency, Reference: taken.Reference,
		ResponseCode: codeApproved, ResponseSummary: "Approved", ProcessedOn: s.timestamp(), Metadata: map[string]string{}}
}

// SettledRefund is a refund the sandbox took, as it settles.
type SettledRefund struct {
	PaymentID string // the refunded payment's id
	ActionID  string // the refund's action id
	Reference string // Paygate's refund id, sent with the refund
	Amount    int64
	Currency  string
	Succeeded bool
}

// SendRefundSettled sends the event of a refund that settled: payment_refunded when it went
// through, payment_refund_declined when it did not.
func (s *Sandbox) SendRefundSettled(r SettledRefund) error {
	data := paymentEvent{ID: r.PaymentID, ActionID: r.ActionID, Amount: r.Amount, Currency: r.Currency, Reference: r.Reference,
		ResponseCode: codeApproved, ResponseSummary: "Approved", ProcessedOn: s.timestamp(), Metadata: map[string]string{}}
	kind := eventPaymentRefunded
	if !r.Succeeded {
		kind, data.ResponseCode, data.ResponseSummary = eventPaymentRefundDeclined, codeDeclined, "Declined - Do Not Honour"
	}
	return s.emit(kind, data)
}

// Simulate brings about kind for the payment Paygate made under paymentReference, as it would
// happen at Checkout.com outside Paygate's requests, and sends its event: a refund of what is
// left, made in the Dashboard (payment_refunded); a dispute of all that was captured
// (dispute_received); a late failure (payment_declined), after which the payment refunds nothing.
// The payment must be captured.
func (s *Sandbox) Simulate(ctx context.Context, kind provider.Simulation, paymentReference string) error {
	payment, err := s.store.ChargeByReference(ctx, paymentReference)
	if err != nil {
		return fmt.Errorf("checkout sandbox: payment %s: %w", paymentReference, err)
	}
	cannot := fmt.Errorf("%w: %s of payment %s (%s)", provider.ErrCannotSimulate, kind, payment.ID, payment.Status)
	var stored storedPayment
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return err
	}
	if payment.Status != statusCaptured {
		return cannot
	}
	switch kind {
	case provider.SimulateRefund:
		rest := capturedOf(payment) - payment.Refunded
		refund := actionAnswer{ActionID: prefixid.New("act")}
		body, err := json.Marshal(refund)
		if err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			if rest < 1 {
				return cannot
			}
			taken, err := s.store.TakeRefund(ctx, tx, payment.ID, statusCaptured, rest)
			if err != nil {
				return err
			}
			if !taken {
				return cannot
			}
			// Settled at once: the event says so.
			if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.ActionID, Kind: sandboxobject.KindRefund, ChargeID: payment.ID,
				Amount: rest, Currency: payment.Currency, Status: "Refunded", Body: body}); err != nil {
				return err
			}
			return s.emitOnCommit(tx, eventPaymentRefunded, paymentEvent{ID: payment.ID, ActionID: refund.ActionID, Amount: rest,
				Currency: payment.Currency, ResponseCode: codeApproved, ResponseSummary: "Approved", ProcessedOn: s.timestamp(), Metadata: map[string]string{}})
		})
	case provider.SimulateDispute:
		return s.emit(eventDisputeReceived, disputeEvent{ID: prefixid.New("dsp"), Category: "fraudulent", Status: "evidence_required",
			Amount: capturedOf(payment), Currency: payment.Currency, ReasonCode: "10.4", PaymentID: payment.ID, PaymentReference: payment.Reference,
			EvidenceRequiredBy: s.store.Now().AddDate(0, 0, 7).UTC().Format(time.RFC3339), ReceivedOn: s.timestamp()})
	case provider.SimulateLateFailure:
		stored.Approved, stored.Status, stored.ResponseCode, stored.ResponseSummary = false, statusDeclined, codeDeclined, "Declined - Do Not Honour"
		stored.ActionID = prefixid.New("act")
		body, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			moved, err := s.store.SetStatus(ctx, tx, payment.ID, statusCaptured, stored.Status, body)
			if err != nil {
				return err
			}
			if !moved {
				return cannot
			}
			return s.emitOnCommit(tx, eventPaymentDeclined, s.paymentEventOf(stored.paymentAnswer))
		})
	}
	return fmt.Errorf("%w: unknown simulation %q", provider.ErrCannotSimulate, kind)
}
