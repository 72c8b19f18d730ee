// Package gcpacingtest helps tests watch the garbage collector's pacing.
package gcpacingtest

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// CollectTwice runs two collections and waits, after each, until the finalizers it queued have
// run. A finalizer of its own tells: the finalizers a collection queues run one batch at a time,
// so once the second collection's has run, the first's batch, a pacer's with it, is done.
func CollectTwice(t testing.TB) {
	t.Helper()
	for range 2 {
		ran := make(chan struct{})
		runtime.SetFinalizer(&struct{ _ [64]byte }{}, func(*struct{ _ [64]byte }) { close(ran) })
		runtime.GC()
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("no finalizer ran within 10 s of a collection")
		}
	}
}

// GOGC is the collector's GOGC now.
func GOGC() int {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	return int(sample[0].Value.Uint64())
}
