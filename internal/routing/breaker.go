package routing

import (
	"sync"
	"time"

	"github.com/paygate/paygate/internal/settings"
)

// Circuit states.
const (
	Closed   = "closed"
	Open     = "open"
	HalfOpen = "half_open"
)

// Breaker keeps a circuit per provider, in this process: a provider whose calls fail at the
// configured rate is skipped for a while, then tried with one probe, and used again once a probe
// succeeds. Declines are successes: the provider answered.
type Breaker struct {
	mu       sync.Mutex
	now      func() time.Time
	circuits map[string]*circuit
}

type circuit struct {
	seconds  []second // one per second with calls, oldest first, within the window
	openedAt time.Time
	open     bool
	probing  bool // half open: one call is out to probe
}

type second struct {
	at             int64
	calls, failing int
}

// NewBreaker returns a breaker with every circuit closed, reading the time from now.
func NewBreaker(now func() time.Time) *Breaker {
	return &Breaker{now: now, circuits: map[string]*circuit{}}
}

func (b *Breaker) circuit(provider string) *circuit {
	c, ok := b.circuits[provider]
	if !ok {
		c = &circuit{}
		b.circuits[provider] = c
	}
	return c
}

// State is the provider's circuit now.
func (b *Breaker) State(provider string, s settings.CircuitBreaker) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state(b.circuit(provider), s)
}

func (b *Breaker) state(c *circuit, s settings.CircuitBreaker) string {
	switch {
	case !c.open:
		return Closed
	case c.probing || b.now().Sub(c.openedAt) >= time.Duration(s.OpenS)*time.Second:
		return HalfOpen
	}
	return Open
}

// IsOpen reports whether the provider is not to be tried now: open, or half open with its probe
// already out. It takes no probe; Allow does.
func (b *Breaker) IsOpen(provider string, s settings.CircuitBreaker) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.circuit(provider)
	state := b.state(c, s)
	return state == Open || state == HalfOpen && c.probing
}

// Pass is leave for one call, from Allow: the call that holds the half-open probe says so, and
// only its outcome (or its release) ends the probe.
type Pass struct {
	probe bool
}

// Allow reports whether a call to the provider may go now, and when its circuit is half open
// takes the one probe for it.
func (b *Breaker) Allow(provider string, s settings.CircuitBreaker) (Pass, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.circuit(provider)
	switch b.state(c, s) {
	case Closed:
		return Pass{}, true
	case HalfOpen:
		if c.probing {
			return Pass{}, false
		}
		c.probing = true
		return Pass{probe: true}, true
	}
	return Pass{}, false
}

// Window returns the calls to the provider counted in the window now, and how many of them
// failed; both are zero while the circuit is open.
func (b *Breaker) Window(provider string, s settings.CircuitBreaker) (calls, failing int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cutoff := b.now().Unix() - int64(s.WindowS)
	for _, sec := range b.circuit(provider).seconds {
		if sec.at > cutoff {
			calls, failing = calls+sec.calls, failing+sec.failing
		}
	}
	return calls, failing
}

// Release ends the call given pass without an outcome (it was not sent, or it panicked): a probe
// it held is given back for another call to take.
func (b *Breaker) Release(provider string, pass Pass) {
	if !pass.probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.circuit(provider).probing = false
}

// Record counts the outcome of the call given pass: failed for an outage or an unknown outcome.
// A probe's outcome closes the circuit or opens it again; a call let through before the circuit
// opened ends while it is open and counts for nothing.
func (b *Breaker) Record(provider string, pass Pass, failed bool, s settings.CircuitBreaker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.circuit(provider)
	now := b.now()
	if c.open {
		if pass.probe && c.probing {
			c.probing = false
			if failed {
				c.openedAt = now
			} else {
				*c = circuit{}
			}
		}
		return
	}
	at := now.Unix()
	cutoff := at - int64(s.WindowS)
	drop := 0
	for drop < len(c.seconds) && c.seconds[drop].at <= cutoff {
		drop++
	}
	c.seconds = c.seconds[drop:]
	if n := len(c.seconds); n == 0 || c.seconds[n-1].at != at {
		c.seconds = append(c.seconds, second{at: at})
	}
	last := &c.seconds[len(c.seconds)-1]
	last.calls++
	if failed {
		last.failing++
	}
	calls, failing := 0, 0
	for _, sec := range c.seconds {
		calls, failing = calls+sec.calls, failing+sec.failing
	}
	if calls >= s.MinRequests && float64(failing) >= s.ErrorRate*float64(calls) {
		*c = circuit{open: true, openedAt: now}
	}
}
