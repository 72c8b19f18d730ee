// Package live tells dashboards what changes as it changes: a hub that fans each change out to
// this server's subscribers, and a feed that finds the changes every server made in the events
// and alerts they write, woken by PostgreSQL's NOTIFY (or in process on SQLite).
package live

import (
	"context"
	"errors"
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
// is (a merchant's payments and refunds; the platform's providers and alerts have none), when it
// changed, as the server that made the change timed it, and the object as it is now, loaded once
// for every subscriber.
type Change struct {
	Kind      string
	ID        string
	PaymentID string
	Merchant  string
	At        time.Time
	Object    any
}

// LookBack is how long before it subscribed a change a subscriber is sent may have been made: a
// change made just after it subscribed, timed by a server whose clock is behind this one's, is
// still sent. Anything older is history, which the events list tells.
const LookBack = time.Second

// MaxBehind is how many changes may wait for a subscriber before it is ended as too slow: one
// that reads slower than changes come is never allowed to hold up the others, or to hold more
// memory than this. A burst of changes the subscriber asked for fits within it.
const MaxBehind = 1000

// ErrFellBehind ends a subscription that let MaxBehind changes wait.
var ErrFellBehind = errors.New("the subscriber fell behind")

// Hub fans changes out to this server's subscribers.
type Hub struct {
	now func() time.Time

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// listening counts the subscribers of each kind, so nothing is loaded for no one.
	listening map[string]int
}

// NewHub returns a hub with no subscribers, timing subscriptions by now.
func NewHub(now func() time.Time) *Hub {
	return &Hub{now: now, subs: map[*Subscription]struct{}{}, listening: map[string]int{}}
}

// Subscription is one subscriber's stream of changes.
type Subscription struct {
	kind     string
	merchant string
	// everyMerchant subscribers see every merchant's changes of kind: platform staff's.
	everyMerchant bool
	// since is when the subscriber subscribed, less LookBack: it is sent what changed after.
	since   time.Time
	accepts func(Change) bool
	// ready is signalled when changes are waiting or the subscription was ended.
	ready chan struct{}

	mu      sync.Mutex
	waiting []*Change
	ended   error
}

// takes reports whether the subscriber is to see c.
func (s *Subscription) takes(c *Change) bool {
	return s.kind == c.Kind && (s.merchant == c.Merchant || s.everyMerchant && c.Merchant != "") && c.At.After(s.since) &&
		(s.accepts == nil || s.accepts(*c))
}

// Ready receives when changes wait for the subscriber, or it was ended: then Take.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Take returns the changes waiting, oldest first, and ErrFellBehind once the subscriber was
// ended for letting too many wait.
func (s *Subscription) Take() ([]*Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	taken := s.waiting
	s.waiting = nil
	return taken, s.ended
}

// add hands c to the subscriber without waiting; false when that would put it MaxBehind behind,
// which ends it.
func (s *Subscription) add(c *Change) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) >= MaxBehind {
		s.waiting, s.ended = nil, ErrFellBehind
	} else {
		s.waiting = append(s.waiting, c)
	}
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return s.ended == nil
}

// Subscribe subscribes to the changes of kind of merchant ("" for the platform's) that accepts
// takes (all of them when nil), made from now on. A subscriber never sees another merchant's
// changes.
func (h *Hub) Subscribe(kind, merchant string, accepts func(Change) bool) *Subscription {
	return h.subscribe(&Subscription{kind: kind, merchant: merchant, accepts: accepts})
}

// SubscribeEveryMerchant subscribes to every merchant's changes of kind that accepts takes, made
// from now on: for platform staff, whom the caller has authorised.
func (h *Hub) SubscribeEveryMerchant(kind string, accepts func(Change) bool) *Subscription {
	return h.subscribe(&Subscription{kind: kind, everyMerchant: true, accepts: accepts})
}

func (h *Hub) subscribe(s *Subscription) *Subscription {
	s.since, s.ready = h.now().Add(-LookBack), make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[s] = struct{}{}
	h.listening[s.kind]++
	return s
}

// Unsubscribe ends s; it may have been ended already.
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
		if s.takes(&c) {
			return true
		}
	}
	return false
}

// Publish hands c to every subscriber that takes it, without waiting: a subscriber MaxBehind
// behind is ended.
func (h *Hub) Publish(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.takes(&c) && !s.add(&c) {
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
