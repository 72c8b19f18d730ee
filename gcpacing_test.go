package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/gcpacing/gcpacingtest"
)

// TestServerPacesTheCollector: a server lets its heap reach PAYGATE_HEAP_TARGET_MB before the
// collector runs (GOGC raised after each collection) until it stops, and leaves the collector
// alone when the operator set GOGC.
func TestServerPacesTheCollector(t *testing.T) {
	// The runtime's own knobs as this process started with them; the pacing looks for the
	// operator's in the process's environment.
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := gcpacingtest.GOGC()
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"), "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db")}

	_, logs, stop := startRun(t, append(environ, "PAYGATE_HEAP_TARGET_MB=4096"))
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != 400 {
		t.Errorf("GOGC while serving under a 4 GiB heap target = %d, want 400 (this test holds far less live)", got)
	}
	if !strings.Contains(logs.String(), `"msg":"garbage collector paced","heap_target_mb":4096`) {
		t.Errorf("the start does not say the collector is paced:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Fatalf("stop = %v", err)
	}
	if got := gcpacingtest.GOGC(); got != before {
		t.Errorf("GOGC after the server stopped = %d, want the %d there was back", got, before)
	}

	t.Setenv("GOGC", "100")
	_, logs, stop = startRun(t, append(environ, "PAYGATE_HEAP_TARGET_MB=4096"))
	defer stop()
	gcpacingtest.CollectTwice(t)
	if got := gcpacingtest.GOGC(); got != before {
		t.Errorf("GOGC while serving with GOGC set = %d, want the %d there was", got, before)
	}
	if strings.Contains(logs.String(), "garbage collector paced") {
		t.Errorf("the start says the collector is paced though GOGC is set:\n%s", logs.String())
	}
}
