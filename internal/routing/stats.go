package routing

import (
	"slices"
	"sync"
	"time"
)

// latencySamples is how many recent calls per provider the latency percentiles are taken over.
const latencySamples = 1024

// Stats are each provider's traffic figures in this process, from the calls made to it.
type Stats struct {
	mu        sync.Mutex
	providers map[string]*providerStats
}

type providerStats struct {
	requests, succeeded int64
	latencies           []time.Duration // a ring of the latest calls
	next                int
	lastError           string
	lastErrorAt         time.Time
}

func newStats() *Stats { return &Stats{providers: map[string]*providerStats{}} }

func (s *Stats) record(name string, err error, latency time.Duration, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.providers[name]
	if !ok {
		p = &providerStats{}
		s.providers[name] = p
	}
	p.requests++
	if err == nil {
		p.succeeded++
	} else {
		p.lastError, p.lastErrorAt = err.Error(), at
	}
	if len(p.latencies) < latencySamples {
		p.latencies = append(p.latencies, latency)
	} else {
		p.latencies[p.next] = latency
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
	// taken); nil before any call.
	SuccessRate *float64   `json:"success_rate"`
	P50MS       *float64   `json:"p50_ms"`
	P99MS       *float64   `json:"p99_ms"`
	LastError   *string    `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
}

// Status reports every provider: enabled by the document in force, its circuit, and its traffic
// since this server started.
func (r *Router) Status() []ProviderStatus {
	c := r.config()
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	statuses := make([]ProviderStatus, 0, len(r.names))
	for _, name := range r.names {
		status := ProviderStatus{Provider: name, Enabled: c.Providers[name].Enabled, Circuit: r.breaker.State(name, c.CircuitBreaker)}
		if p, ok := r.stats.providers[name]; ok && p.requests > 0 {
			status.Requests = p.requests
			rate := float64(p.succeeded) / float64(p.requests)
			status.SuccessRate = &rate
			sorted := slices.Sorted(slices.Values(p.latencies))
			status.P50MS, status.P99MS = PercentileMS(sorted, 0.50), PercentileMS(sorted, 0.99)
			if p.lastError != "" {
				lastError, lastErrorAt := p.lastError, p.lastErrorAt // copies: the figures move on
				status.LastError, status.LastErrorAt = &lastError, &lastErrorAt
			}
		}
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
