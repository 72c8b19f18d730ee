// Package gcpacing lets a server's heap grow to a size it can afford before Go's garbage collector
// runs, rather than to twice what is live.
//
// Go collects when the heap reaches GOGC percent (100) above what the last collection found live.
// A server that holds little live (Paygate: some 12 MB under load) then collects every 12 MB it
// allocates, and each collection marks all that is live again: under load, reading payments,
// that cost about a sixth of its CPU (measured against GOGC=400), and slowed the database and
// the clients on the same cores as much again.
//
// Given a target heap size, Start sets GOGC after each collection so that the next one finishes
// as the heap reaches about the target (Go starts a collection somewhat before its goal), never
// lower than Go's own 100: a server holding more live than half the target is collected as Go
// would collect it, from the collection after the one that found it so. The setting follows the
// collections one behind: it is made by a finalizer, which runs after the collection has swept,
// on the goroutine all finalizers share.
package gcpacing

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Bounds of the GOGC Start sets: never below Go's default, and not so high that a heap holding
// almost nothing (a server just started) is let grow many times its size.
const (
	minPercent = 100
	maxPercent = 400
)

// percentFor is the GOGC with which the heap grows from live to target before the next
// collection. Go's heap goal is live + (live + stacks + globals) × GOGC/100, the stacks and
// globals being what the last collection scanned besides the heap.
func percentFor(target, live, stacks, globals uint64) int {
	base := live + stacks + globals
	if base == 0 || target <= live {
		return minPercent
	}
	percent := (target - live) * 100 / base
	return int(min(max(percent, minPercent), maxPercent))
}

// pacer holds what a collection's finalizer needs to set the next GOGC.
type pacer struct {
	target uint64
	// samples are what the last collection found (live heap, stacks, globals) and GOGC now.
	samples []metrics.Sample
	// mu keeps a stop from racing a collection's setting: once stopped, GOGC is left alone.
	mu      sync.Mutex
	stopped bool
}

// sentinel is the object whose finalizer runs once after each collection: it is unreachable
// from the start, so every collection finds it dead, and its finalizer sets itself again.
type sentinel struct{ pacer *pacer }

// Start paces the collector to let the heap reach target bytes before each collection, until
// the returned function is called, which gives GOGC back the value it had. It is meant to pace
// one server per process: pacers started together would set GOGC over each other.
func Start(target uint64) (stop func()) {
	p := &pacer{
		target: target,
		samples: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/scan/stack:bytes"},
			{Name: "/gc/scan/globals:bytes"},
			{Name: "/gc/gogc:percent"},
		},
	}
	before := debug.SetGCPercent(minPercent)
	runtime.SetFinalizer(&sentinel{p}, afterCollection)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stopped = true
		debug.SetGCPercent(before)
	}
}

// afterCollection runs on the finalizer goroutine after each collection, one at a time.
func afterCollection(s *sentinel) {
	p := s.pacer
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.samples)
	percent := percentFor(p.target, p.samples[0].Value.Uint64(), p.samples[1].Value.Uint64(), p.samples[2].Value.Uint64())
	// Small moves are left alone (each setting recomputes the pacer's goal under the heap lock),
	// but never one back to Go's own pacing.
	if diff := percent - int(p.samples[3].Value.Uint64()); diff >= 5 || diff <= -5 || (percent == minPercent && diff != 0) {
		debug.SetGCPercent(percent)
	}
	runtime.SetFinalizer(s, afterCollection)
}
