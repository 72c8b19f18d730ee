package main

import (
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// TestServerPacesTheCollector: a server lets its heap reach PAYGATE_HEAP_TARGET_MB before the
// collector runs (GOGC raised after each collection) until it stops, and leaves the collector
// alone when the operator set GOGC.
func TestServerPacesTheCollector(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"), "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db")}

	_, logs, stop := startRun(t, append(environ, "PAYGATE_HEAP_TARGET_MB=4096"))
	collectTwice(t)
	if got := gogc(); got != 400 {
		t.Errorf("GOGC while serving under a 4 GiB heap target = %d, want 400 (this test holds far less live)", got)
	}
	if !strings.Contains(logs.String(), `"msg":"garbage collector paced","heap_target_mb":4096`) {
		t.Errorf("the start does not say the collector is paced:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Fatalf("stop = %v", err)
	}
	if got := gogc(); got != 100 {
		t.Errorf("GOGC after the server stopped = %d, want Go's 100 back", got)
	}

	t.Setenv("GOGC", "100")
	_, logs, stop = startRun(t, append(environ, "PAYGATE_HEAP_TARGET_MB=4096"))
	defer stop()
	collectTwice(t)
	if got := gogc(); got != 100 {
		t.Errorf("GOGC while serving with GOGC set = %d, want the operator's 100", got)
	}
	if strings.Contains(logs.String(), "garbage collector paced") {
		t.Errorf("the start says the collector is paced though GOGC is set:\n%s", logs.String())
	}
}

// collectTwice runs two collections, each waited on until its finalizers have run (the pacer's
// among them, see internal/gcpacing's tests).
func collectTwice(t *testing.T) {
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

func gogc() int {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	return int(sample[0].Value.Uint64())
}
