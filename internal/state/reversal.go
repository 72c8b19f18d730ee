package state

import "io"

// ReversalStatus is where Paygate is in undoing a charge that a payment's provider approved after
// the payment was canceled while it waited for its shopper: the payment stays canceled, and what
// the provider took is given back there. Stored and served over REST in lower case, over GraphQL
// in upper case.
type ReversalStatus string

const (
	// ReversalPending: the approval was found; Paygate is voiding or refunding it at the provider.
	ReversalPending ReversalStatus = "pending"
	// ReversalVoided: the provider took the void of the authorisation it held.
	ReversalVoided ReversalStatus = "voided"
	// ReversalRefunded: the provider took the refund of what it captured.
	ReversalRefunded ReversalStatus = "refunded"
	// ReversalFailed: the provider refused the void or refund, or could not be reached for too
	// long: the money may still be taken, and a person is alerted.
	ReversalFailed ReversalStatus = "failed"
)

// Values lists every reversal status; ent uses it for the column's allowed values.
func (ReversalStatus) Values() []string {
	return []string{string(ReversalPending), string(ReversalVoided), string(ReversalRefunded), string(ReversalFailed)}
}

// CanMoveTo reports whether a reversal in s may become to: a pending one ends once, voided,
// refunded or failed; one the provider took may still be refused by it afterwards (its
// notification that the void or refund failed).
func (s ReversalStatus) CanMoveTo(to ReversalStatus) bool {
	switch s {
	case ReversalPending:
		return to == ReversalVoided || to == ReversalRefunded || to == ReversalFailed
	case ReversalVoided, ReversalRefunded:
		return to == ReversalFailed
	}
	return false
}

// MarshalGQL writes the GraphQL enum name.
func (s ReversalStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *ReversalStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "reversal status")
	*s = ReversalStatus(value)
	return err
}
