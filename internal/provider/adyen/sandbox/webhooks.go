package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/sandboxobject"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandboxstore"
)

// Event codes of the notifications the sandbox sends.
const (
	eventAuthorisation = "AUTHORISATION"
	eventRefund        = "REFUND"
	eventRefundFailed  = "REFUND_FAILED"
	eventCapture       = "CAPTURE"
	eventCancellation  = "CANCELLATION"
	eventChargeback    = "CHARGEBACK"
)

// notification is Adyen's standard webhook: here one item, one event.
type notification struct {
	Live              string             `json:"live"`
	NotificationItems []notificationItem `json:"notificationItems"`
}

type notificationItem struct {
	Item notificationRequestItem `json:"NotificationRequestItem"`
}

type notificationRequestItem struct {
	AdditionalData      map[string]string `json:"additionalData"`
	Amount              amount            `json:"amount"`
	EventCode           string            `json:"eventCode"`
	EventDate           string            `json:"eventDate"`
	MerchantAccountCode string            `json:"merchantAccountCode"`
	MerchantReference   string            `json:"merchantReference"`
	OriginalReference   string            `json:"originalReference,omitempty"`
	PSPReference        string            `json:"pspReference"`
	Reason              string            `json:"reason,omitempty"`
	Success             string            `json:"success"`
}

// notification signs item, dated now, into its notification. Its id, for the logs, is what a
// receiver dedupes Adyen's notifications on: the pspReference and the event code.
func (s *Sandbox) notification(item notificationRequestItem) (string, []byte, error) {
	// Adyen's date: ISO 8601 with a numeric offset.
	item.EventDate = s.store.Now().Format("2006-01-02T15:04:05-07:00")
	if item.AdditionalData == nil {
		item.AdditionalData = map[string]string{}
	}
	unsigned, err := json.Marshal(item)
	if err != nil {
		return "", nil, err
	}
	if item.AdditionalData["hmacSignature"], err = s.signItem(unsigned); err != nil {
		return "", nil, err
	}
	body, err := json.Marshal(notification{Live: "false", NotificationItems: []notificationItem{{Item: item}}})
	return item.PSPReference + " " + item.EventCode, body, err
}

// notify sends item's notification now.
func (s *Sandbox) notify(item notificationRequestItem) error {
	id, body, err := s.notification(item)
	if err == nil {
		s.SendWebhook(id, body)
	}
	return err
}

// notifyOnCommit sends item's notification once tx commits.
func (s *Sandbox) notifyOnCommit(tx *ent.Tx, item notificationRequestItem) error {
	id, body, err := s.notification(item)
	if err == nil {
		sandboxstore.OnCommit(tx, func() { s.SendWebhook(id, body) })
	}
	return err
}

// SettledRefund is a refund the sandbox took, as it settles.
type SettledRefund struct {
	PSPReference        string // the refund's
	PaymentPSPReference string // the refunded payment's
	MerchantAccount     string
	Reference           string // Paygate's refund id, sent with the refund
	Amount              int64
	Currency            string
	Succeeded           bool
}

// SendRefundSettled sends the notification of a refund that settled: REFUND when it went
// through; REFUND_FAILED when the card scheme rejected it, whose success is "true" as Adyen sends
// it (the failure is the event), so a receiver must read the event code.
func (s *Sandbox) SendRefundSettled(r SettledRefund) error {
	item := notificationRequestItem{Amount: amount{Value: r.Amount, Currency: r.Currency}, EventCode: eventRefund,
		MerchantAccountCode: r.MerchantAccount, MerchantReference: r.Reference, OriginalReference: r.PaymentPSPReference,
		PSPReference: r.PSPReference, Success: "true"}
	if !r.Succeeded {
		item.EventCode, item.Reason = eventRefundFailed, "Refund rejected by the card scheme"
	}
	return s.notify(item)
}

// storedPayment is a payment as the sandbox keeps it: its answer, the merchant account its
// notifications name, and for a payment that redirected the shopper, its authentication.
type storedPayment struct {
	paymentAnswer
	MerchantAccount string          `json:"merchantAccount"`
	Authentication  *authentication `json:"authentication,omitempty"`
}

// authorisation is the AUTHORISATION notification of a payment decided: success true when
// authorised, false with its refusal reason when refused.
func authorisation(p storedPayment) notificationRequestItem {
	return notificationRequestItem{Amount: p.Amount, EventCode: eventAuthorisation, MerchantAccountCode: p.MerchantAccount,
		MerchantReference: p.MerchantReference, PSPReference: p.PSPReference, Reason: p.RefusalReason,
		Success: strconv.FormatBool(p.ResultCode == resultAuthorised)}
}

// Simulate brings about kind for the payment Paygate made under paymentReference, as it would
// happen at Adyen outside Paygate's requests, and sends its notification: a refund of what is
// left, made in the Customer Area (REFUND); a chargeback of all the payment charged (CHARGEBACK);
// a late failure, the authorisation cancelled (CANCELLATION), after which the payment refunds
// nothing. An authorisation still held is none of these.
func (s *Sandbox) Simulate(ctx context.Context, kind provider.Simulation, paymentReference string) error {
	payment, err := s.store.ChargeByReference(ctx, paymentReference)
	if err != nil {
		return fmt.Errorf("adyen sandbox: payment %s: %w", paymentReference, err)
	}
	cannot := fmt.Errorf("%w: %s of payment %s (%s)", provider.ErrCannotSimulate, kind, payment.ID, payment.Status)
	var stored storedPayment
	if err := json.Unmarshal(payment.Body, &stored); err != nil {
		return err
	}
	if payment.Status != resultAuthorised {
		return cannot
	}
	// A payment captured manually charged what was captured of its authorisation.
	charged := payment.Amount
	if payment.Captured != nil {
		charged = *payment.Captured
	}
	item := notificationRequestItem{Amount: amount{Value: charged, Currency: payment.Currency}, MerchantAccountCode: stored.MerchantAccount,
		MerchantReference: payment.Reference, OriginalReference: payment.ID, PSPReference: pspReference(), Success: "true"}
	switch kind {
	case provider.SimulateRefund:
		item.EventCode, item.Amount.Value = eventRefund, charged-payment.Refunded
		refund := refundAnswer{MerchantAccount: stored.MerchantAccount, PaymentPSPReference: payment.ID, PSPReference: item.PSPReference,
			Status: "received", Amount: item.Amount}
		body, err := json.Marshal(refund)
		if err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			if item.Amount.Value < 1 {
				return cannot
			}
			taken, err := s.store.TakeRefund(ctx, tx, payment.ID, resultAuthorised, item.Amount.Value)
			if err != nil {
				return err
			}
			if !taken {
				return cannot
			}
			// Settled at once: the notification says so.
			if err := s.store.Create(ctx, tx, sandboxstore.Object{ID: refund.PSPReference, Kind: sandboxobject.KindRefund,
				ChargeID: payment.ID, Amount: item.Amount.Value, Currency: payment.Currency, Status: "settled", Body: body}); err != nil {
				return err
			}
			return s.notifyOnCommit(tx, item)
		})
	case provider.SimulateDispute:
		item.EventCode, item.Reason = eventChargeback, "Other Fraud-Card Absent Environment"
		item.AdditionalData = map[string]string{"chargebackReasonCode": "10.4", "chargebackSchemeCode": "visa"}
		return s.notify(item)
	case provider.SimulateLateFailure:
		item.EventCode = eventCancellation
		stored.ResultCode = statusCancelled
		body, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		return s.store.InTx(ctx, func(tx *ent.Tx) error {
			moved, err := s.store.SetStatus(ctx, tx, payment.ID, resultAuthorised, statusCancelled, body)
			if err != nil {
				return err
			}
			if !moved {
				return cannot
			}
			return s.notifyOnCommit(tx, item)
		})
	}
	return fmt.Errorf("%w: unknown simulation %q", provider.ErrCannotSimulate, kind)
}
