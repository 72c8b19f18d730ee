package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebugAddrServesProfilesOnItsOwnListener: PAYGATE_DEBUG_ADDR serves pprof on that address
// until the server stops, and the public port never serves it.
func TestDebugAddrServesProfilesOnItsOwnListener(t *testing.T) {
	dir := t.TempDir()
	debugAddr := freeLoopbackAddr(t)
	baseURL, _, stop := startRun(t, []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"),
		"DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"), "PAYGATE_DEBUG_ADDR=" + debugAddr})

	if status, body := getStatus(t, "http://"+debugAddr+"/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ on the debug address = %d %.200s", status, body)
	}
	if status, body := getStatus(t, baseURL+"/debug/pprof/"); status != http.StatusNotFound || !strings.Contains(body, "no route GET /debug/pprof/") {
		t.Errorf("GET /debug/pprof/ on the public port = %d %.200s, want Paygate's 404", status, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop = %v", err)
	}
	if resp, err := http.Get("http://" + debugAddr + "/debug/pprof/"); err == nil {
		resp.Body.Close()
		t.Errorf("the debug address still answers after the stop: %d", resp.StatusCode)
	}
}

// TestDebugAddrNotOnLoopbackIsRefusedUntouched: a debug address others could reach stops the
// start before the database is made.
func TestDebugAddrNotOnLoopbackIsRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"), "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"),
		"PAYGATE_ADDR=127.0.0.1:0", "PAYGATE_DEBUG_ADDR=0.0.0.0:6060"}
	err := run(context.Background(), nil, environ, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PAYGATE_DEBUG_ADDR") {
		t.Fatalf("run = %v, want an error naming PAYGATE_DEBUG_ADDR", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "paygate.db")); !os.IsNotExist(statErr) {
		t.Errorf("the refused start made the database: %v", statErr)
	}
}

// freeLoopbackAddr is a port of 127.0.0.1 no one listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	return listener.Addr().String()
}
