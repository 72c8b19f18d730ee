package routing

// Attempt outcomes. Only unavailable lets the next provider be tried: the provider said it did
// nothing. After unknown the charge may exist, so nothing else is tried.
const (
	OutcomeApproved    = "approved"
	OutcomeDeclined    = "declined"
	OutcomeUnavailable = "unavailable"
	OutcomeUnknown     = "unknown"
	// OutcomeAuthentication: the provider asks the shopper to authenticate first; it has the
	// payment.
	OutcomeAuthentication = "authentication"
)
