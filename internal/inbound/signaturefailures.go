package inbound

import "sync"

// SignatureFailures counts, per provider, the deliveries this process refused for their
// signature since it started. The figure is per process: a refused delivery is stored nowhere,
// so each server knows only its own, and a restart starts from zero. Safe for concurrent use;
// the zero value is ready.
type SignatureFailures struct {
	mu     sync.Mutex
	counts map[string]int64
}

// Add counts one delivery to /webhooks/{provider} refused for its signature.
func (s *SignatureFailures) Add(provider string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[string]int64{}
	}
	s.counts[provider]++
}

// Count returns how many deliveries to /webhooks/{provider} this process refused for their
// signature.
func (s *SignatureFailures) Count(provider string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[provider]
}
