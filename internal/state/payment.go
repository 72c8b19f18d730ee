// Package state holds the lifecycle of each resource: its status values and the moves between them.
package state

import (
	"fmt"
	"io"
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

// Values lists every payment status; ent uses it for the column's allowed values.
func (PaymentStatus) Values() []string {
	return []string{
		string(PaymentPending), string(PaymentProcessing), string(PaymentSucceeded),
		string(PaymentFailed), string(PaymentPartiallyRefunded), string(PaymentRefunded),
	}
}

// MarshalGQL writes the GraphQL enum name.
func (s PaymentStatus) MarshalGQL(w io.Writer) {
	io.WriteString(w, strconv.Quote(strings.ToUpper(string(s))))
}

// UnmarshalGQL reads the GraphQL enum name.
func (s *PaymentStatus) UnmarshalGQL(v any) error {
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("payment status must be a string")
	}
	status := PaymentStatus(strings.ToLower(name))
	for _, known := range status.Values() {
		if string(status) == known {
			*s = status
			return nil
		}
	}
	return fmt.Errorf("%q is not a payment status", name)
}
