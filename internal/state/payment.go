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
	PaymentPending           PaymentStatus = "pending"
	PaymentProcessing        PaymentStatus = "processing"
	PaymentSucceeded         PaymentStatus = "succeeded"
	PaymentFailed            PaymentStatus = "failed"
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
		string(PaymentPending), string(PaymentProcessing), string(PaymentSucceeded),
		string(PaymentFailed), string(PaymentPartiallyRefunded), string(PaymentRefunded),
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
