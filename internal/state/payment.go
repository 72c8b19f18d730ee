// Package state holds the lifecycle of each resource: its status values and the moves between them.
package state

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// PaymentStatus is stored and served over REST in lower case and served over GraphQL in upper case.
type PaymentStatus string

const (
	PaymentPending    PaymentStatus = "pending"
	PaymentProcessing PaymentStatus = "processing"
	// PaymentRequiresAction: the shopper must authenticate (3-D Secure) before the card is
	// charged.
	PaymentRequiresAction PaymentStatus = "requires_action"
	// PaymentRequiresCapture: the amount is authorised and held on the card, to be captured or
	// canceled (manual capture).
	PaymentRequiresCapture   PaymentStatus = "requires_capture"
	PaymentSucceeded         PaymentStatus = "succeeded"
	PaymentFailed            PaymentStatus = "failed"
	PaymentCanceled          PaymentStatus = "canceled"
	PaymentPartiallyRefunded PaymentStatus = "partially_refunded"
	PaymentRefunded          PaymentStatus = "refunded"
)

// PaidStatuses are the statuses of a payment whose amount was taken: succeeded, and refunded in
// part or in full since, which does not undo that it was paid.
func PaidStatuses() []PaymentStatus {
	return []PaymentStatus{PaymentSucceeded, PaymentPartiallyRefunded, PaymentRefunded}
}

// Values lists every payment status; ent uses it for the column's allowed values.
func (PaymentStatus) Values() []string {
	return []string{
		string(PaymentPending), string(PaymentProcessing), string(PaymentRequiresAction), string(PaymentRequiresCapture),
		string(PaymentSucceeded), string(PaymentFailed), string(PaymentCanceled), string(PaymentPartiallyRefunded),
		string(PaymentRefunded),
	}
}

// MarshalGQL writes the GraphQL enum name.
func (s PaymentStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *PaymentStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "payment status")
	*s = PaymentStatus(value)
	return err
}

// CaptureMethod says when a payment's amount is captured: at once (automatic), or held by an
// authorisation until the merchant captures or cancels it (manual).
type CaptureMethod string

const (
	CaptureAutomatic CaptureMethod = "automatic"
	CaptureManual    CaptureMethod = "manual"
)

// Values lists every capture method.
func (CaptureMethod) Values() []string {
	return []string{string(CaptureAutomatic), string(CaptureManual)}
}

// MarshalGQL writes the GraphQL enum name.
func (m CaptureMethod) MarshalGQL(w io.Writer) { marshalEnum(w, string(m)) }

// UnmarshalGQL reads the GraphQL enum name.
func (m *CaptureMethod) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, m.Values(), "capture method")
	*m = CaptureMethod(value)
	return err
}

// CancellationReason says why a payment was canceled: at the merchant's request (one of the
// first three), left unauthenticated for too long (abandoned), or not captured in time (expired).
type CancellationReason string

const (
	CanceledByCustomer  CancellationReason = "requested_by_customer"
	CanceledAsDuplicate CancellationReason = "duplicate"
	CanceledAsFraud     CancellationReason = "fraudulent"
	CanceledAbandoned   CancellationReason = "abandoned"
	CanceledExpired     CancellationReason = "expired"
)

// Values lists every cancellation reason.
func (CancellationReason) Values() []string {
	return []string{string(CanceledByCustomer), string(CanceledAsDuplicate), string(CanceledAsFraud),
		string(CanceledAbandoned), string(CanceledExpired)}
}

// Requestable reports whether a merchant may give r when canceling a payment; the others are
// Paygate's own.
func (r CancellationReason) Requestable() bool {
	return r == CanceledByCustomer || r == CanceledAsDuplicate || r == CanceledAsFraud
}

// MarshalGQL writes the GraphQL enum name.
func (r CancellationReason) MarshalGQL(w io.Writer) { marshalEnum(w, string(r)) }

// UnmarshalGQL reads the GraphQL enum name.
func (r *CancellationReason) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, r.Values(), "cancellation reason")
	*r = CancellationReason(value)
	return err
}

// marshalEnum writes a stored lower-case value as its upper-case GraphQL enum name.
func marshalEnum(w io.Writer, value string) {
	io.WriteString(w, strconv.Quote(strings.ToUpper(value)))
}

// unmarshalEnum reads a GraphQL enum name as one of the stored lower-case values.
func unmarshalEnum(v any, values []string, what string) (string, error) {
	name, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("a %s must be a string", what)
	}
	value := strings.ToLower(name)
	if !slices.Contains(values, value) {
		return "", fmt.Errorf("%q is not a %s", name, what)
	}
	return value, nil
}
