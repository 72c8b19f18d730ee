package metrics

import (
	"slices"
	"time"

	"github.com/paygate/paygate/internal/routing"
)

// latencySamples is how many recent calls per provider the latency percentiles are taken over.
const latencySamples = 1024

// Providers is what the provider figures need of the router: the providers, and how each stands
// now.
type Providers interface {
	Names() []string
	// Enabled reports whether the document in force lets the provider be tried.
	Enabled(name string) bool
	// Circuit is this server's circuit to the provider: closed, open or half_open.
	Circuit(name string) string
}

// providerCalls are one provider's calls in this process, beside its Prometheus series: what the
// monitoring API shows of it.
type providerCalls struct {
	requests, succeeded int64
	// decided counts the charges the provider approved or declined, approved those it approved.
	decided, approved int64
	latencies         []time.Duration // a ring of the latest calls
	next              int
	lastError         string
	lastErrorAt       time.Time
}

// ProviderCall records a call to a provider: answered (an approval, a decline, a refund taken) or
// not (err); a charge's outcome (routing.OutcomeApproved, OutcomeDeclined ...), "" for a refund or
// a capture.
func (m *Metrics) ProviderCall(provider, outcome string, err error, took time.Duration) {
	if m == nil {
		return
	}
	answered := "answered"
	if err != nil {
		answered = "error"
	}
	m.providerRequests.WithLabelValues(provider, answered).Inc()
	m.providerDuration.WithLabelValues(provider).Observe(took.Seconds())

	at := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.providerCalls[provider]
	if !ok {
		p = &providerCalls{}
		m.providerCalls[provider] = p
	}
	p.requests++
	switch outcome {
	case routing.OutcomeApproved:
		p.decided++
		p.approved++
	case routing.OutcomeDeclined:
		p.decided++
	}
	if err == nil {
		p.succeeded++
	} else {
		p.lastError, p.lastErrorAt = err.Error(), at
	}
	if len(p.latencies) < latencySamples {
		p.latencies = append(p.latencies, took)
	} else {
		p.latencies[p.next] = took
		p.next = (p.next + 1) % latencySamples
	}
}

// ProviderStatus is how a provider is doing, as this server sees it.
type ProviderStatus struct {
	Provider string `json:"provider"`
	Enabled  bool   `json:"enabled"`
	Circuit  string `json:"circuit"`
	Requests int64  `json:"requests"`
	// SuccessRate is the share of calls the provider answered (an approval, a decline, a refund
	// taken), its availability; nil before any call.
	SuccessRate *float64 `json:"success_rate"`
	// ApprovalRate is the share of the charges it decided when asked that it approved: a decline
	// counts against it, an outage does not, nor a decision after 3-D Secure; nil before any.
	ApprovalRate *float64   `json:"approval_rate"`
	P50MS        *float64   `json:"p50_ms"`
	P99MS        *float64   `json:"p99_ms"`
	LastError    *string    `json:"last_error"`
	LastErrorAt  *time.Time `json:"last_error_at"`
}

// ProviderStatus reports every provider: enabled by the document in force, its circuit, and its
// calls since this server started.
func (m *Metrics) ProviderStatus() []ProviderStatus {
	names := m.providers.Names()
	statuses := make([]ProviderStatus, 0, len(names))
	for _, name := range names {
		status := ProviderStatus{Provider: name, Enabled: m.providers.Enabled(name), Circuit: m.providers.Circuit(name)}
		m.mu.Lock()
		if p, ok := m.providerCalls[name]; ok && p.requests > 0 {
			status.Requests = p.requests
			rate := float64(p.succeeded) / float64(p.requests)
			status.SuccessRate = &rate
			if p.decided > 0 {
				approval := float64(p.approved) / float64(p.decided)
				status.ApprovalRate = &approval
			}
			sorted := slices.Sorted(slices.Values(p.latencies))
			status.P50MS, status.P99MS = PercentileMS(sorted, 0.50), PercentileMS(sorted, 0.99)
			if p.lastError != "" {
				lastError, lastErrorAt := p.lastError, p.lastErrorAt // copies: the figures move on
				status.LastError, status.LastErrorAt = &lastError, &lastErrorAt
			}
		}
		m.mu.Unlock()
		statuses = append(statuses, status)
	}
	return statuses
}

// PercentileMS is the q-th percentile of sorted durations (nearest rank), in milliseconds; nil
// when there are none.
func PercentileMS(sorted []time.Duration, q float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	rank := int(q*float64(len(sorted))+0.999999) - 1
	ms := float64(sorted[max(rank, 0)].Microseconds()) / 1000
	return &ms
}
