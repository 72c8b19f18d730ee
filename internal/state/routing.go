package state

// RoutingDecision is how a payment was routed, as the payment keeps it: the rule that matched
// (nil when none did and the fallback order stood) and every provider tried, in order.
type RoutingDecision struct {
	Rule     *string          `json:"rule"`
	Attempts []RoutingAttempt `json:"attempts"`
}

// RoutingAttempt is one provider asked to charge a payment, what came of it (approved,
// declined, unavailable or unknown) and how long it took.
type RoutingAttempt struct {
	Provider  string `json:"provider"`
	Outcome   string `json:"outcome"`
	LatencyMS int64  `json:"latency_ms"`
}
