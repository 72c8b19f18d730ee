package state

import "io"

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
func (s RefundStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *RefundStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "refund status")
	*s = RefundStatus(value)
	return err
}
