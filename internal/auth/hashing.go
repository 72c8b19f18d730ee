package auth

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/paygate/paygate/internal/apierror"
)

// Bounds of the hashes waiting their turn: at cost 12 a hash is about a quarter of a second of a
// core, so a full queue, an address's or everyone's, is hashed within some 4 s, unless a higher
// cost or other load makes each hash slower.
const (
	// hashesWaitingPerAddress is the most hashes one client address has waiting: more than a
	// person, or an office behind one address, asks at once; a burst of more is a flood.
	hashesWaitingPerAddress = 16
	// hashesWaitingPerSlot, times the slots, is the most hashes waiting over every address.
	hashesWaitingPerSlot = 16
)

// processHashing is every password hash of this process. Its slots are the process's, not shared
// between servers as the rate limits are: what they share out is this process's CPU, which no
// other server's hashing takes from.
var processHashing = NewHashQueue(runtime.GOMAXPROCS(0), hashesWaitingPerAddress, hashesWaitingPerSlot*runtime.GOMAXPROCS(0))

// HashQueue shares out password hashing, each hash a bcrypt that takes a core for a quarter of a
// second, between the client addresses that ask for it. At most slots hashes run at once, so a
// flood of them waits rather than take every core from the requests beside it. An address runs
// at most half of them (one, at least), so one address's burst leaves slots to the others; and
// the addresses that wait are served in turn, one hash each, however deep one address's queue: a
// login from elsewhere waits at most a round of the addresses waiting, never behind a burst.
//
// The waiting are bounded, per address and over all: past either bound a request is refused (a
// 429, whose Retry-After says when its address's queue should be hashed), never left to hang.
// When every place is taken, a newcomer takes the place of the last of the longest queue, if that
// is longer than the newcomer's by two or more: a flood from a few addresses cannot take every
// place and shut the others out.
type HashQueue struct {
	slots, perAddress          int // hashes running at once: over every address, and for one
	addressWaiting, waitingMax int // hashes waiting: for one address, and over every address

	mu      sync.Mutex
	running int
	waiting int
	// addresses are those with a hash running or waiting.
	addresses map[string]*addressHashes
	// turns are the addresses with a hash waiting that may start one, in the order they are
	// served; it holds some only while every slot is taken.
	turns []*addressHashes
	// lastHash is how long the last hash took, to tell a refused request when to come back.
	lastHash time.Duration
}

// addressHashes are one client address's hashes.
type addressHashes struct {
	address string
	running int
	waiting []*hashTurn
	inTurns bool
}

// hashTurn is a hash waiting its turn. start is told, once, whether the hash has a slot (true) or
// gave its place to another address's (false; then retryAfter says when to come back).
type hashTurn struct {
	start      chan bool
	retryAfter time.Duration
}

// NewHashQueue returns a queue of slots hashes at once, with at most addressWaiting hashes of an
// address and waitingMax of all waiting.
func NewHashQueue(slots, addressWaiting, waitingMax int) *HashQueue {
	return &HashQueue{slots: slots, perAddress: max(1, slots/2), addressWaiting: addressWaiting, waitingMax: waitingMax,
		addresses: map[string]*addressHashes{}}
}

// Run runs hash, a request's from address, when its turn comes, and returns nil once it ran.
// Refused a place, it returns refuse's error, called with when to come back; when ctx ends while
// it waits, its place goes to the next and it returns a service_unavailable error.
func (q *HashQueue) Run(ctx context.Context, address string, refuse func(retryAfter time.Duration) error, hash func()) error {
	q.mu.Lock()
	a := q.addresses[address]
	if a == nil {
		a = &addressHashes{address: address}
		q.addresses[address] = a
	}
	// Nothing waits while a slot is free (serve keeps it so): a slot free for a is a's now.
	if q.running < q.slots && a.running < q.perAddress {
		q.running++
		a.running++
		q.mu.Unlock()
		q.hash(a, hash)
		return nil
	}
	if retryAfter, ok := q.makeRoom(a); !ok {
		q.forgetIfIdle(a)
		q.mu.Unlock()
		return refuse(retryAfter)
	}
	turn := &hashTurn{start: make(chan bool, 1)}
	a.waiting = append(a.waiting, turn)
	q.waiting++
	if a.running < q.perAddress && !a.inTurns {
		a.inTurns = true
		q.turns = append(q.turns, a)
	}
	q.mu.Unlock()

	select {
	case started := <-turn.start:
		if !started {
			return refuse(turn.retryAfter)
		}
	case <-ctx.Done():
		q.mu.Lock()
		i := slices.Index(a.waiting, turn)
		if i >= 0 {
			q.remove(a, i)
		}
		q.mu.Unlock()
		// Started or refused meanwhile: a slot given is handed on unused.
		if i < 0 && <-turn.start {
			q.done(a, 0)
		}
		return apierror.New(apierror.ServiceUnavailable, "the request ended while its password waited to be checked")
	}
	q.hash(a, hash)
	return nil
}

// hash runs hash in a slot a holds, and gives the slot on.
func (q *HashQueue) hash(a *addressHashes, hash func()) {
	began := time.Now()
	defer func() { q.done(a, time.Since(began)) }() // a hash that panics gives its slot on too
	hash()
}

// makeRoom says whether a hash of a may wait, giving it the place of the last of the longest
// queue when every place is taken; if not, when a should come back. Called with q.mu held.
func (q *HashQueue) makeRoom(a *addressHashes) (time.Duration, bool) {
	if len(a.waiting) >= q.addressWaiting {
		return q.retryAfter(a), false
	}
	if q.waiting < q.waitingMax {
		return 0, true
	}
	var longest *addressHashes
	for _, other := range q.addresses {
		if longest == nil || len(other.waiting) > len(longest.waiting) {
			longest = other
		}
	}
	if len(longest.waiting) < len(a.waiting)+2 {
		return q.retryAfter(a), false
	}
	last := longest.waiting[len(longest.waiting)-1]
	last.retryAfter = q.retryAfter(longest)
	q.remove(longest, len(longest.waiting)-1)
	last.start <- false
	return 0, true
}

// retryAfter is when a's queue should be hashed: its hashes, at the pace of the last one, on the
// slots an address may have.
func (q *HashQueue) retryAfter(a *addressHashes) time.Duration {
	return time.Duration(len(a.waiting)+1) * q.lastHash / time.Duration(q.perAddress)
}

// remove takes a's i-th waiting hash out of the queue. Called with q.mu held.
func (q *HashQueue) remove(a *addressHashes, i int) {
	a.waiting = slices.Delete(a.waiting, i, i+1)
	q.waiting--
	if len(a.waiting) == 0 && a.inTurns {
		a.inTurns = false
		q.turns = slices.DeleteFunc(q.turns, func(t *addressHashes) bool { return t == a })
	}
	q.forgetIfIdle(a)
}

// done gives a slot of a's on, after a hash that took took (0: none ran).
func (q *HashQueue) done(a *addressHashes, took time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	a.running--
	if took > 0 {
		q.lastHash = took
	}
	// Back of the line: every address waiting now is served before a's next hash.
	if len(a.waiting) > 0 && !a.inTurns {
		a.inTurns = true
		q.turns = append(q.turns, a)
	}
	q.serve()
	q.forgetIfIdle(a)
}

// serve starts the hashes whose turn it is, while slots are free. Called with q.mu held.
func (q *HashQueue) serve() {
	for q.running < q.slots && len(q.turns) > 0 {
		a := q.turns[0]
		q.turns = q.turns[1:]
		turn := a.waiting[0]
		a.waiting = a.waiting[1:]
		q.waiting--
		a.running++
		q.running++
		turn.start <- true
		if len(a.waiting) > 0 && a.running < q.perAddress {
			q.turns = append(q.turns, a)
		} else {
			a.inTurns = false
		}
	}
}

// forgetIfIdle forgets a once nothing of its runs or waits. Called with q.mu held.
func (q *HashQueue) forgetIfIdle(a *addressHashes) {
	if a.running == 0 && len(a.waiting) == 0 {
		delete(q.addresses, a.address)
	}
}

// hashing runs hash in the request's turn of s.Hashing, as its client address's.
func (s *Service) hashing(ctx context.Context, hash func()) error {
	address, refuse := "", func(retryAfter time.Duration) error {
		return apierror.New(apierror.RateLimited, "too many passwords are waiting to be checked: try again later")
	}
	if s.Client != nil {
		if from, refusal := s.Client(ctx); refusal != nil {
			address, refuse = from, refusal
		}
	}
	return s.Hashing.Run(ctx, address, refuse, hash)
}

// passwordMatches reports whether password is the one hash was made of.
func (s *Service) passwordMatches(ctx context.Context, hash []byte, password string) (bool, error) {
	var matches bool
	err := s.hashing(ctx, func() { matches = bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil })
	return matches, err
}

// hashPassword returns the hash a password is kept as, at the service's cost.
func (s *Service) hashPassword(ctx context.Context, password string) ([]byte, error) {
	var hash []byte
	var hashErr error
	if err := s.hashing(ctx, func() { hash, hashErr = bcrypt.GenerateFromPassword([]byte(password), s.Cost) }); err != nil {
		return nil, err
	}
	return hash, hashErr
}
