package routing

// Decision is how a payment was routed, as the payment keeps it: the rule that matched (nil when
// none did and the fallback order stood) and every provider tried, in order.
type Decision struct {
	Rule     *string   `json:"rule"`
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one provider asked to charge a payment, what came of it and how long it took.
type Attempt struct {
	Provider  string `json:"provider"`
	Outcome   string `json:"outcome"`
	LatencyMS int64  `json:"latency_ms"`
}

// Attempt outcomes. Only unavailable lets the next provider be tried: the provider said it did
// nothing. After unknown the charge may exist, so nothing else is tried.
const (
	OutcomeApproved    = "approved"
	OutcomeDeclined    = "declined"
	OutcomeUnavailable = "unavailable"
	OutcomeUnknown     = "unknown"
)
