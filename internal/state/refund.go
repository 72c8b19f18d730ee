package state

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RefundStatus is stored and served over REST in lower case and served over GraphQL in upper case.
type RefundStatus string

const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
)

// Values lists every refund status; ent uses it for the column's allowed values.
func (RefundStatus) Values() []string {
	return []string{string(RefundPending), string(RefundSucceeded), string(RefundFailed)}
}

// MarshalGQL writes the GraphQL enum name.
func (s RefundStatus) MarshalGQL(w io.Writer) {
	io.WriteString(w, strconv.Quote(strings.ToUpper(string(s))))
}

// UnmarshalGQL reads the GraphQL enum name.
func (s *RefundStatus) UnmarshalGQL(v any) error {
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("refund status must be a string")
	}
	status := RefundStatus(strings.ToLower(name))
	for _, known := range status.Values() {
		if string(status) == known {
			*s = status
			return nil
		}
	}
	return fmt.Errorf("%q is not a refund status", name)
}
