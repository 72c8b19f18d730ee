package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
)

// refusal is what the tests' refuse answers: when to come back.
type refusal struct{ retryAfter time.Duration }

func (r refusal) Error() string { return fmt.Sprintf("refused: come back in %v", r.retryAfter) }

func refuse(retryAfter time.Duration) error { return refusal{retryAfter} }

// hashBench runs a queue's hashes as the test says: each hash says it started, then holds its
// slot until the test lets it go. Nothing is timed: the order the hashes start in is what the
// queue decided.
type hashBench struct {
	t       *testing.T
	q       *HashQueue
	started chan string
	release map[string]chan struct{}
	ended   map[string]chan error
}

func newHashBench(t *testing.T, q *HashQueue) *hashBench {
	return &hashBench{t: t, q: q, started: make(chan string, 100), release: map[string]chan struct{}{}, ended: map[string]chan error{}}
}

// submit asks for hash name from address, in a goroutine of its own as a request would.
func (b *hashBench) submit(ctx context.Context, address, name string) {
	b.release[name], b.ended[name] = make(chan struct{}), make(chan error, 1)
	release, ended := b.release[name], b.ended[name]
	go func() {
		ended <- b.q.Run(ctx, address, refuse, func() {
			b.started <- name
			<-release
		})
	}()
}

// start submits hash name from address, which should start at once, and returns the hash that
// starts next.
func (b *hashBench) start(ctx context.Context, address, name string) string {
	b.submit(ctx, address, name)
	return b.next()
}

// queue submits hashes that must wait, and returns once they do.
func (b *hashBench) queue(ctx context.Context, address string, names ...string) {
	for _, name := range names {
		waiting := b.waiting()
		b.submit(ctx, address, name)
		for b.waiting() == waiting { // until the queue took it: a wait, not a measure
			select {
			case started := <-b.started:
				b.t.Fatalf("%s started, want %s waiting", started, name)
			case <-time.After(time.Millisecond):
			}
		}
	}
}

func (b *hashBench) waiting() int {
	b.q.mu.Lock()
	defer b.q.mu.Unlock()
	return b.q.waiting
}

// next is the next hash to start.
func (b *hashBench) next() string { return <-b.started }

// finish lets a running hash go, and says how its Run ended.
func (b *hashBench) finish(name string) error {
	close(b.release[name])
	return <-b.ended[name]
}

// finishLast lets the last running hash go, whose Run must end without error, and checks the
// queue then forgot everything.
func (b *hashBench) finishLast(name string) {
	b.t.Helper()
	if err := b.finish(name); err != nil {
		b.t.Errorf("%s: %v", name, err)
	}
	b.empty()
}

// refused is how the Run of a hash that never started ended.
func (b *hashBench) refused(name string) error { return <-b.ended[name] }

// empty checks the queue forgot everything once nothing runs or waits.
func (b *hashBench) empty() {
	b.q.mu.Lock()
	defer b.q.mu.Unlock()
	if b.q.running != 0 || b.q.waiting != 0 || len(b.q.addresses) != 0 || len(b.q.turns) != 0 {
		b.t.Errorf("left: %d running, %d waiting, %d addresses, %d turns", b.q.running, b.q.waiting, len(b.q.addresses), len(b.q.turns))
	}
}

// TestHashQueueServesAddressesInTurn: with one slot and address A's queue deep, B's hash is the
// next to start, before A's second; then every address waiting is served once a round, A's queue
// however deep taking one turn a round.
func TestHashQueueServesAddressesInTurn(t *testing.T) {
	ctx := context.Background()
	b := newHashBench(t, NewHashQueue(1, 10, 100))
	if name := b.start(ctx, "A", "a1"); name != "a1" {
		t.Fatalf("the first hash into an idle queue: %s started", name)
	}
	b.queue(ctx, "A", "a2", "a3", "a4")
	b.queue(ctx, "B", "b1")
	want := []string{"b1", "a2", "c1", "b2", "a3", "a4"}
	for i, finished := range []string{"a1", "b1", "a2", "c1", "b2", "a3"} {
		if finished == "a2" { // C and B join while A's second hash runs
			b.queue(ctx, "C", "c1")
			b.queue(ctx, "B", "b2")
		}
		if err := b.finish(finished); err != nil {
			t.Errorf("%s: %v", finished, err)
		}
		if name := b.next(); name != want[i] {
			t.Fatalf("after %s, %s started; want %s", finished, name, want[i])
		}
	}
	b.finishLast("a4")
}

// TestHashQueueLeavesSlotsToOthers: of two slots an address holds one, however many hashes it
// has waiting: B's hash starts at once beside A's.
func TestHashQueueLeavesSlotsToOthers(t *testing.T) {
	ctx := context.Background()
	b := newHashBench(t, NewHashQueue(2, 10, 100))
	b.start(ctx, "A", "a1")
	b.queue(ctx, "A", "a2", "a3")
	if name := b.start(ctx, "B", "b1"); name != "b1" {
		t.Fatalf("B's hash, with A holding a slot and two waiting: %s started", name)
	}
	for _, name := range []string{"a1", "a2", "a3"} {
		if err := b.finish(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name != "a3" {
			b.next()
		}
	}
	b.finishLast("b1")
}

// TestHashQueueBoundsTheWaiting: an address may have so many hashes waiting, past which its next
// is refused at once, with when to come back; over every address, a newcomer takes the last
// place of the longest queue when that is longer than its own by two, else it is refused.
func TestHashQueueBoundsTheWaiting(t *testing.T) {
	ctx := context.Background()
	b := newHashBench(t, NewHashQueue(1, 3, 3))
	b.start(ctx, "A", "a0")
	if err := b.finish("a0"); err != nil { // a hash's time, for when to come back
		t.Fatal(err)
	}
	b.start(ctx, "A", "a1")
	b.queue(ctx, "A", "a2", "a3", "a4")
	b.submit(ctx, "A", "a5")
	var r refusal
	if err := b.refused("a5"); !errors.As(err, &r) || r.retryAfter <= 0 {
		t.Errorf("a fourth waiting from A: %v, want refused with when to come back", err)
	}
	// Every place taken: B and C each push out the last of A's queue, then D finds none longer.
	b.submit(ctx, "B", "b1")
	if err := b.refused("a4"); !errors.As(err, &r) {
		t.Errorf("A's last, when B came: %v, want refused", err)
	}
	b.submit(ctx, "C", "c1")
	if err := b.refused("a3"); !errors.As(err, &r) {
		t.Errorf("A's last, when C came: %v, want refused", err)
	}
	b.submit(ctx, "D", "d1")
	if err := b.refused("d1"); !errors.As(err, &r) {
		t.Errorf("D, with every queue one long: %v, want refused", err)
	}
	for i, finished := range []string{"a1", "b1", "c1"} {
		if err := b.finish(finished); err != nil {
			t.Errorf("%s: %v", finished, err)
		}
		if name, want := b.next(), []string{"b1", "c1", "a2"}[i]; name != want {
			t.Fatalf("after %s, %s started; want %s", finished, name, want)
		}
	}
	b.finishLast("a2")
}

// TestHashQueueLetsAnEndedRequestGo: a request whose context ends while it waits leaves at once,
// its hash never run, and its place is free for the next.
func TestHashQueueLetsAnEndedRequestGo(t *testing.T) {
	b := newHashBench(t, NewHashQueue(1, 1, 100))
	b.start(context.Background(), "A", "a1")
	ctx, cancel := context.WithCancel(context.Background())
	b.queue(ctx, "A", "a2")
	b.submit(context.Background(), "A", "a3")
	if err := b.refused("a3"); !errors.As(err, new(refusal)) {
		t.Errorf("a second waiting from A: %v, want refused", err)
	}
	cancel()
	if err := b.refused("a2"); apierror.From(err).Code != apierror.ServiceUnavailable {
		t.Errorf("a2, its request ended: %v", err)
	}
	b.queue(context.Background(), "A", "a4") // a2's place, free again
	if err := b.finish("a1"); err != nil {
		t.Errorf("a1: %v", err)
	}
	if name := b.next(); name != "a4" {
		t.Fatalf("after a1, %s started; want a4 (a2 left)", name)
	}
	b.finishLast("a4")
}

// TestHashQueueFreesTheSlotOfAPanic: a hash that panics gives its slot on.
func TestHashQueueFreesTheSlotOfAPanic(t *testing.T) {
	q := NewHashQueue(1, 1, 1)
	func() {
		defer func() { recover() }()
		q.Run(context.Background(), "A", refuse, func() { panic("bcrypt") })
	}()
	ran := false
	if err := q.Run(context.Background(), "A", refuse, func() { ran = true }); err != nil || !ran {
		t.Errorf("after a panic: %v, ran %v", err, ran)
	}
	newHashBench(t, q).empty()
}
