// Package event writes what happens to payments and refunds as events that merchants are told
// of, each in the transaction of the change it tells of, and reads them back for the API.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tracing"
)

// The event types.
const (
	PaymentSucceeded = "payment.succeeded"
	PaymentFailed    = "payment.failed"
	// PaymentProcessing: the payment's outcome is not known yet (its provider's answer was lost,
	// or the provider confirms a capture later).
	PaymentProcessing      = "payment.processing"
	PaymentRequiresAction  = "payment.requires_action"
	PaymentRequiresCapture = "payment.requires_capture"
	PaymentCanceled        = "payment.canceled"
	// PaymentRefunded: a refund of the payment succeeded, in part or in full.
	PaymentRefunded = "payment.refunded"
	// PaymentReversed: a payment's provider approved it after it was canceled while it waited for
	// its shopper (who authenticated after all), and Paygate voided or refunded that approval
	// there. The payment stays canceled; its reversal_status says voided or refunded.
	PaymentReversed = "payment.reversed"
	// PaymentReversalFailed: Paygate could not void or refund such an approval (the provider
	// refused, or could not be reached for too long): the shopper's money may still be taken, and
	// an alert is raised. The payment's reversal_status is failed, reversal_failure_message says why.
	PaymentReversalFailed = "payment.reversal_failed"
	RefundSucceeded       = "refund.succeeded"
	RefundFailed          = "refund.failed"
	DisputeCreated        = "dispute.created"
)

// Types lists every event type, in the order the documentation gives them.
var Types = []string{PaymentSucceeded, PaymentFailed, PaymentProcessing, PaymentRequiresAction, PaymentRequiresCapture,
	PaymentCanceled, PaymentRefunded, PaymentReversed, PaymentReversalFailed, RefundSucceeded, RefundFailed, DisputeCreated}

// ShowsRefund reports whether an event of eventType shows a refund; the others show a payment.
func ShowsRefund(eventType string) bool { return strings.HasPrefix(eventType, "refund.") }

// Retention is how long events are kept, so a merchant that missed deliveries can catch up.
const Retention = 30 * 24 * time.Hour

// Body is an event as it is delivered and served: what happened (type), when, and the payment or
// refund as it was then.
type Body struct {
	ID        string    `json:"id"`
	Object    string    `json:"object"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      Data      `json:"data"`
}

// Data holds the object an event shows.
type Data struct {
	Object any `json:"object"`
}

// NewBody is the body of event id of type eventType at at, showing object.
func NewBody(id, eventType string, at time.Time, object any) ([]byte, error) {
	return json.Marshal(Body{ID: id, Object: "event", Type: eventType, CreatedAt: at.UTC(), Data: Data{Object: object}})
}

// Recorder writes events. A nil Recorder writes them too, and wakes no one.
type Recorder struct {
	// Written, when set, is called once a transaction that wrote an event has committed, so the
	// deliveries start at once rather than at the dispatcher's next round.
	Written func()
}

// Record writes an event of eventType showing object, whose id is objectID, within tx: it exists
// if and only if the change it tells of is committed. It is the object's merchant's.
func (r *Recorder) Record(ctx context.Context, tx *ent.Tx, merchantID, eventType, objectID string, object any, at time.Time) error {
	create, err := r.Create(ctx, tx.Event, merchantID, eventType, objectID, object, at)
	if err != nil {
		return err
	}
	if err := create.Exec(ctx); err != nil {
		return fmt.Errorf("recording event %s: %w", eventType, err)
	}
	if r != nil && r.Written != nil {
		tx.OnCommit(func(next ent.Committer) ent.Committer {
			return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
				err := next.Commit(ctx, tx)
				if err == nil {
					r.Wrote()
				}
				return err
			})
		})
	}
	return nil
}

// Create is the create of the event Record writes, on events, for a caller that sends it in a
// transaction of its own making (database.DB.ExecChecked) and calls Wrote once that committed.
func (r *Recorder) Create(ctx context.Context, events *ent.EventClient, merchantID, eventType, objectID string, object any, at time.Time) (*ent.EventCreate, error) {
	id := prefixid.New("evt")
	at = at.UTC().Truncate(time.Microsecond) // as the database keeps it
	body, err := NewBody(id, eventType, at, object)
	if err != nil {
		return nil, err
	}
	return events.Create().SetID(id).SetMerchantID(merchantID).SetType(eventType).SetObjectID(objectID).SetBody(body).
		SetNillableTraceParent(tracing.Cause(ctx)).SetCreatedAt(at), nil
}

// Wrote tells Written, when set, that a transaction that wrote events made by Create committed.
func (r *Recorder) Wrote() {
	if r != nil && r.Written != nil {
		r.Written()
	}
}

// PaymentEventOf is the event a payment's move into status to tells of; none for pending, which a
// payment is only born in.
func PaymentEventOf(to state.PaymentStatus) (string, bool) {
	switch to {
	case state.PaymentSucceeded:
		return PaymentSucceeded, true
	case state.PaymentFailed:
		return PaymentFailed, true
	case state.PaymentProcessing:
		return PaymentProcessing, true
	case state.PaymentRequiresAction:
		return PaymentRequiresAction, true
	case state.PaymentRequiresCapture:
		return PaymentRequiresCapture, true
	case state.PaymentCanceled:
		return PaymentCanceled, true
	case state.PaymentPartiallyRefunded, state.PaymentRefunded:
		return PaymentRefunded, true
	}
	return "", false
}

// CheckTypes checks a list of event types an endpoint subscribes to: known types, or ["*"] for
// all of them. It returns the list without repeats.
func CheckTypes(types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, apierror.ForParam(apierror.MissingField, "events", `events must list at least one event type, or be ["*"] for all`)
	}
	if len(types) > len(Types) {
		return nil, apierror.ForParam(apierror.InvalidRequest, "events", fmt.Sprintf("events names each of the %d event types at most once", len(Types)))
	}
	var kept []string
	for _, t := range types {
		switch {
		case t == "*" && len(types) == 1:
		case t == "*":
			return nil, apierror.ForParam(apierror.InvalidRequest, "events", `"*" subscribes to every event type and stands alone`)
		case !slices.Contains(Types, t):
			return nil, apierror.ForParam(apierror.InvalidRequest, "events", fmt.Sprintf("unknown event type %.60q; known: %s", t, strings.Join(Types, ", ")))
		}
		if !slices.Contains(kept, t) {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// Subscribed reports whether an endpoint subscribed to types is sent an event of eventType.
func Subscribed(types []string, eventType string) bool {
	return slices.Contains(types, "*") || slices.Contains(types, eventType)
}

// DataOf is the data of an event's body: {"object": ...}.
func DataOf(e *ent.Event) (json.RawMessage, error) {
	var body struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(e.Body, &body); err != nil {
		return nil, err
	}
	return body.Data, nil
}
