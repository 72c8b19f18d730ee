package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveProfiles serves Go's profiles (net/http/pprof) at /debug/pprof/ on addr, the loopback
// address of PAYGATE_DEBUG_ADDR, on a listener and mux of their own: the public handler never
// serves them. It returns what closes them; with addr empty it serves nothing.
func serveProfiles(addr string, logger *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_DEBUG_ADDR: listening on %s: %w", addr, err)
	}
	// A mux of its own: importing net/http/pprof also registers on http.DefaultServeMux, which
	// nothing serves.
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No write timeout: a CPU profile or a trace answers only after the seconds it was asked for.
	server := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving the profiles stopped", "error", err)
		}
	}()
	logger.Info("profiles served", "url", "http://"+listener.Addr().String()+"/debug/pprof/")
	// Closed, not drained: a profile being taken must not hold up a stop.
	return func() { server.Close() }, nil
}
