// Package live tells dashboards what changes as it changes: a hub that fans each change out to
// this server's subscribers, and a feed that finds the changes every server made in the events
// and alerts they write, woken by PostgreSQL's NOTIFY (or in process on SQLite).
package live

import (
	"context"
	"sync"
	"time"
)

// Kinds of change.
const (
	Payment  = "payment"
	Refund   = "refund"
	Provider = "provider"
	Alert    = "alert"
)

// Change is one thing that changed: its kind, its id (a refund's payment in PaymentID), whose it
// is (a merchant's payments and refunds; the platform's providers and alerts have none), and the
// object as it is now, loaded once for every subscriber.
type Change struct {
	Kind      string
	ID        string
	PaymentID string
	Merchant  string
	Object    any
}

// subscriberBuffer is how many changes a subscriber may be behind before it is dropped: a
// subscriber that reads slower than changes come is never allowed to hold up the others.
const subscriberBuffer = 32

// Hub fans changes out to this server's subscribers.
type Hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// listening counts the subscribers of each kind, so nothing is loaded for no one.
	listening map[string]int
}

// NewHub returns a hub with no subscribers.
func NewHub() *Hub {
	return &Hub{subs: map[*Subscription]struct{}{}, listening: map[string]int{}}
}

// Subscription is one subscriber's stream of changes.
type Subscription struct {
	kind     string
	merchant string
	accepts  func(Change) bool
	changes  chan Change
}

// takes reports whether the subscriber is to see c.
func (s *Subscription) takes(c Change) bool {
	return s.kind == c.Kind && s.merchant == c.Merchant && (s.accepts == nil || s.accepts(c))
}

// Changes are the subscriber's changes; closed when it is unsubscribed or dropped for falling
// behind.
func (s *Subscription) Changes() <-chan Change { return s.changes }

// Subscribe subscribes to the changes of kind of merchant ("" for the platform's) that accepts
// takes (all of them when nil). A subscriber never sees another merchant's changes.
func (h *Hub) Subscribe(kind, merchant string, accepts func(Change) bool) *Subscription {
	s := &Subscription{kind: kind, merchant: merchant, accepts: accepts, changes: make(chan Change, subscriberBuffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[s] = struct{}{}
	h.listening[kind]++
	return s
}

// Unsubscribe ends s; it may have been dropped already.
func (h *Hub) Unsubscribe(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
}

func (h *Hub) remove(s *Subscription) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	h.listening[s.kind]--
	close(s.changes)
}

// Listening reports whether anyone subscribes to changes of kind.
func (h *Hub) Listening(kind string) bool { return h.Subscribers(kind) > 0 }

// Subscribers counts the subscribers to changes of kind.
func (h *Hub) Subscribers(kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.listening[kind]
}

// Wants reports whether any subscriber would take c, before its object is loaded for them.
func (h *Hub) Wants(c Change) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.takes(c) {
			return true
		}
	}
	return false
}

// Publish hands c to every subscriber that takes it, without waiting: a subscriber whose buffer
// is full is dropped, its stream closed.
func (h *Hub) Publish(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.takes(c) {
			continue
		}
		select {
		case s.changes <- c:
		default:
			h.remove(s)
		}
	}
}

// announceSpacing is the least time between two announcements from one server: a burst of
// changes is told in one, well within the two seconds a change may take to reach subscribers.
const announceSpacing = 100 * time.Millisecond

// Announcer tells every server that changes were written, one announcement for a burst: on
// PostgreSQL a NOTIFY all servers listen for, on SQLite a wake of this server's feed.
type Announcer struct {
	// Announce tells the servers.
	Announce func(ctx context.Context) error
	pending  chan struct{}
}

// NewAnnouncer returns an announcer that tells the servers through announce.
func NewAnnouncer(announce func(ctx context.Context) error) *Announcer {
	return &Announcer{Announce: announce, pending: make(chan struct{}, 1)}
}

// Changed says a change was committed; it never waits.
func (a *Announcer) Changed() {
	select {
	case a.pending <- struct{}{}:
	default:
	}
}

// Pending receives when changes wait to be announced.
func (a *Announcer) Pending() <-chan struct{} { return a.pending }

// Round announces the changes pending, then lets announceSpacing pass before the next.
func (a *Announcer) Round(ctx context.Context) error {
	err := a.Announce(ctx)
	select {
	case <-time.After(announceSpacing):
	case <-ctx.Done():
	}
	return err
}
