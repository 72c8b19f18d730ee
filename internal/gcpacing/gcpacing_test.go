package gcpacing

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/paygate/paygate/internal/gcpacing/gcpacingtest"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name                          string
		target, live, stacks, globals uint64
		want                          int
	}{
		{"room for twice the live heap", 32 * mib, 12 * mib, 0, 0, 166},
		{"stacks and globals count toward GOGC's base", 32 * mib, 12 * mib, 1 * mib, 1 * mib, 142},
		{"live beyond half the target: Go's own pacing", 32 * mib, 20 * mib, 0, 0, 100},
		{"live beyond the target", 32 * mib, 40 * mib, 0, 0, 100},
		{"almost nothing live: bounded", 32 * mib, 1 * mib, 0, 0, 400},
		{"nothing measured yet", 32 * mib, 0, 0, 0, 100},
	} {
		if got := percentFor(c.target, c.live, c.stacks, c.globals); got != c.want {
			t.Errorf("%s: percentFor = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestStartPacesEachCollection runs the real collector: under a target far above what this
// test holds live, the collections after Start raise GOGC to its bound; under a target below
// it, GOGC stays Go's own; stop gives back the GOGC there was.
func TestStartPacesEachCollection(t *testing.T) {
	previous := debug.SetGCPercent(77)
	t.Cleanup(func() { debug.SetGCPercent(previous) })

	stop := Start(1 << 30)
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != maxPercent {
		t.Errorf("GOGC after a collection under a 1 GiB target = %d, want %d", got, maxPercent)
	}
	stop()
	if got := gcpacingtest.GOGC(); got != 77 {
		t.Errorf("GOGC after stop = %d, want the 77 there was", got)
	}
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != 77 {
		t.Errorf("GOGC after a collection once stopped = %d, want 77: a stopped pacer sets nothing", got)
	}

	stop = Start(1)
	defer stop()
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != minPercent {
		t.Errorf("GOGC under a target below the live heap = %d, want Go's %d", got, minPercent)
	}
}

// TestPacingFollowsTheLiveHeap: each collection sets GOGC anew from what it found live, as the
// live heap grows past a share of the target and shrinks again.
func TestPacingFollowsTheLiveHeap(t *testing.T) {
	previous := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(previous) })
	stop := Start(64 << 20)
	defer stop()

	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != maxPercent {
		t.Fatalf("GOGC with little live under a 64 MiB target = %d, want %d", got, maxPercent)
	}
	held := make([]byte, 24<<20) // live: about 25 MiB of the 64
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got <= 110 || got >= 250 {
		t.Errorf("GOGC with about 25 MiB live under a 64 MiB target = %d, want about 150", got)
	}
	runtime.KeepAlive(held)
	held = nil
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != maxPercent {
		t.Errorf("GOGC once the 24 MiB are let go = %d, want %d again", got, maxPercent)
	}
}
