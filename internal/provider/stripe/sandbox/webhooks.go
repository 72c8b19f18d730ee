package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	stripego "github.com/stripe/stripe-go/v84"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// event is a Stripe event as its webhooks carry it.
type event struct {
	ID              string             `json:"id"`
	Object          string             `json:"object"`
	APIVersion      string             `json:"api_version"`
	Created         int64              `json:"created"`
	Data            eventData          `json:"data"`
	Livemode        bool               `json:"livemode"`
	PendingWebhooks int                `json:"pending_webhooks"`
	Request         eventRequest       `json:"request"`
	Type            stripego.EventType `json:"type"`
}

type eventData struct {
	Object json.RawMessage `json:"object"`
}

// eventRequest is the API request that caused the event; null for one that no request caused
// (a refund in the dashboard, a dispute).
type eventRequest struct {
	ID             *string `json:"id"`
	IdempotencyKey *string `json:"idempotency_key"`
}

// emitOnCommit sends the event of kind about object (its JSON) once tx commits; key is the
// idempotency key of the request that caused it, "" for none.
func (s *Sandbox) emitOnCommit(tx *ent.Tx, kind stripego.EventType, object []byte, key string) error {
	id, body, err := s.event(kind, object, key)
	if err == nil {
		sandboxstore.OnCommit(tx, func() { s.SendWebhook(id, body) })
	}
	return err
}

func (s *Sandbox) event(kind stripego.EventType, object []byte, key string) (string, []byte, error) {
	e := event{ID: prefixid.New("evt"), Object: "event", APIVersion: stripego.APIVersion, Created: s.store.Now().Unix(),
		Data: eventData{Object: object}, PendingWebhooks: 1, Type: kind}
	if key != "" {
		e.Request.IdempotencyKey = &key
	}
	body, err := json.Marshal(e)
	return e.ID, body, err
}

// charge is the Charge of a PaymentIntent as Stripe's events show it, other objects by id.
type charge struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         int64             `json:"amount"`
	AmountCaptured int64             `json:"amount_captured"`
	AmountRefunded int64             `json:"amount_refunded"`
	Captured       bool              `json:"captured"`
	Created        int64             `json:"created"`
	Currency       string            `json:"currency"`
	Disputed       bool              `json:"disputed"`
	Livemode       bool              `json:"livemode"`
	Metadata       map[string]string `json:"metadata"`
	Paid           bool              `json:"paid"`
	PaymentIntent  string            `json:"payment_intent"`
	Refunded       bool              `json:"refunded"`
	Refunds        refundList        `json:"refunds"`
	Status         string            `json:"status"`
}

type refundList struct {
	Object     string   `json:"object"`
	Data       []refund `json:"data"`
	HasMore    bool     `json:"has_more"`
	TotalCount int      `json:"total_count"`
	URL        string   `json:"url"`
}

type refund struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Charge        string            `json:"charge"`
	Created       int64             `json:"created"`
	Currency      string            `json:"currency"`
	Metadata      map[string]string `json:"metadata"`
	PaymentIntent string            `json:"payment_intent"`
	Status        string            `json:"status"`
}

type dispute struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	Charge             string            `json:"charge"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	IsChargeRefundable bool              `json:"is_charge_refundable"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	PaymentIntent      string            `json:"payment_intent"`
	Reason             string            `json:"reason"`
	Status             string            `json:"status"`
}

// chargeID is the id of the Charge of a PaymentIntent: the sandbox makes one charge per intent.
func chargeID(intentID string) string { return "ch_" + strings.TrimPrefix(intentID, "pi_") }

// metadata is the metadata Paygate sent with an object: its id, if Paygate made it.
func metadata(paygateID string) map[string]string {
	if paygateID == "" {
		return map[string]string{}
	}
	return map[string]string{"paygate_id": paygateID}
}

// chargeOf is the Charge of intent, with its refunds newest first.
func chargeOf(intent *ent.SandboxObject, refunds []*ent.SandboxObject) charge {
	c := charge{ID: chargeID(intent.ID), Object: "charge", Amount: intent.Amount, AmountCaptured: charged(intent),
		AmountRefunded: intent.Refunded, Captured: true, Created: intent.CreatedAt.Unix(), Currency: intent.Currency,
		Metadata: metadata(intent.Reference), Paid: true, PaymentIntent: intent.ID, Refunded: intent.Refunded == charged(intent),
		Status:  "succeeded",
		Refunds: refundList{Object: "list", Data: []refund{}, TotalCount: len(refunds), URL: "/v1/charges/" + chargeID(intent.ID) + "/refunds"}}
	for _, r := range refunds {
		c.Refunds.Data = append(c.Refunds.Data, refund{ID: r.ID, Object: "refund", Amount: r.Amount, Charge: c.ID,
			Created: r.CreatedAt.Unix(), Currency: r.Currency, Metadata: metadata(r.Reference), PaymentIntent: intent.ID, Status: r.Status})
	}
	return c
}

// takeRefund refunds amount of the PaymentIntent, if that much is left of it, for Paygate's
// refund paygateID ("" for a refund made at Stripe) asked with key; once tx commits, it sends
// charge.refunded. It returns the refund's JSON, or nil when not that much is left.
func (s *Sandbox) takeRefund(ctx context.Context, tx *ent.Tx, intent *ent.SandboxObject, amount int64, paygateID, key string) ([]byte, error) {
	if amount < 1 {
		return nil, nil
	}
	taken, err := s.store.TakeRefund(ctx, tx, intent.ID, string(stripego.PaymentIntentStatusSucceeded), amount)
	if err != nil || !taken {
		return nil, err
	}
	r := &stripego.Refund{ID: prefixid.New("re"), Object: "refund", Amount: amount, Currency: stripego.Currency(intent.Currency),
		PaymentIntent: &stripego.PaymentIntent{ID: intent.ID}, Status: stripego.RefundStatusSucceeded, Created: s.store.Now().Unix(),
		Metadata: metadata(paygateID)}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: r.ID, Kind: sandboxobject.KindRefund, Reference: paygateID,
		ChargeID: intent.ID, Amount: amount, Currency: intent.Currency, Status: string(r.Status), Body: body}); err != nil {
		return nil, err
	}
	// Read again: the refunded total now, whatever other refunds took before this one.
	if intent, err = s.store.GetIn(ctx, tx, sandboxobject.KindCharge, intent.ID); err != nil {
		return nil, err
	}
	refunds, err := s.store.RefundsIn(ctx, tx, intent.ID)
	if err != nil {
		return nil, err
	}
	object, err := json.Marshal(chargeOf(intent, refunds))
	if err != nil {
		return nil, err
	}
	return body, s.emitOnCommit(tx, stripego.EventTypeChargeRefunded, object, key)
}

// Simulate brings about kind for the payment Paygate made under paymentReference, as it would
// happen at Stripe outside Paygate's requests, and sends its event: a refund of what is left, made
// in the dashboard (charge.refunded); a dispute of the whole payment (charge.dispute.created); a
// late failure (payment_intent.payment_failed), after which the payment refunds nothing.
func (s *Sandbox) Simulate(ctx context.Context, kind provider.Simulation, paymentReference string) error {
	intent, err := s.store.ChargeByReference(ctx, paymentReference)
	if err != nil {
		return fmt.Errorf("stripe sandbox: payment %s: %w", paymentReference, err)
	}
	cannot := fmt.Errorf("%w: %s of payment intent %s (%s)", provider.ErrCannotSimulate, kind, intent.ID, intent.Status)
	if intent.Status != string(stripego.PaymentIntentStatusSucceeded) {
		return cannot
	}
	switch kind {
	case provider.SimulateRefund:
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			body, err := s.takeRefund(ctx, tx, intent, charged(intent)-intent.Refunded, "", "")
			if err == nil && body == nil {
				return cannot
			}
			return err
		})
	case provider.SimulateDispute:
		object, err := json.Marshal(dispute{ID: prefixid.New("dp"), Object: "dispute", Amount: charged(intent), Charge: chargeID(intent.ID),
			Created: s.store.Now().Unix(), Currency: intent.Currency, Metadata: map[string]string{}, PaymentIntent: intent.ID,
			Reason: string(stripego.DisputeReasonFraudulent), Status: string(stripego.DisputeStatusNeedsResponse)})
		if err != nil {
			return err
		}
		id, body, err := s.event(stripego.EventTypeChargeDisputeCreated, object, "")
		if err == nil {
			s.SendWebhook(id, body)
		}
		return err
	case provider.SimulateLateFailure:
		failed := string(stripego.PaymentIntentStatusRequiresPaymentMethod)
		object, err := reshape(intent.Body, map[string]any{"status": failed, "amount_received": 0, "last_payment_error": genericDecline})
		if err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			moved, err := s.store.SetStatus(ctx, tx, intent.ID, intent.Status, failed, object)
			if err != nil {
				return err
			}
			if !moved {
				return cannot
			}
			return s.emitOnCommit(tx, stripego.EventTypePaymentIntentPaymentFailed, object, "")
		})
	}
	return fmt.Errorf("%w: unknown simulation %q", provider.ErrCannotSimulate, kind)
}

// reshape is the JSON object body with fields set to new values.
func reshape(body []byte, fields map[string]any) ([]byte, error) {
	var object map[string]json.RawMessage
	if err := json.Unmarshal(body, &object); err != nil {
		return nil, err
	}
	for name, value := range fields {
		raw, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		object[name] = raw
	}
	return json.Marshal(object)
}
