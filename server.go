// Paygate is a payment API: GraphQL first, with a REST shim for the original /api/v1 routes.
// This file runs it (main and serving); internal/app builds it.
//
//	paygate [serve]                                         run the server (default)
//	paygate migrate                                         apply database migrations and exit
//	paygate user create --email E --password P --role R     add a user
//	paygate user set-password --email E --password P        set a user's password, ending their sessions
//	paygate apikey create --name N --scopes a,b             make an API key for a deployment's programs
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paygate:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	// What can be refused is refused before anything is touched, every fault at once: no database
	// file is made and no migration is run for a start that fails.
	if err := errors.Join(cfg.CheckSecrets(), app.CheckSigningKey(cfg), app.CheckProduction(cfg)); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", cfg.ListenAddr())
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use by another program (another Paygate?): stop it, or listen elsewhere with PAYGATE_ADDR or PORT", cfg.ListenAddr())
	}
	if err != nil {
		return fmt.Errorf("listening on %s: %w (set PAYGATE_ADDR or PORT)", cfg.ListenAddr(), err)
	}
	defer listener.Close()
	stopProfiles, err := serveProfiles(cfg.DebugAddr, logger)
	if err != nil {
		return err
	}
	defer stopProfiles()
	// Traces, when the standard OTEL_* variables ask for them, are exported until the very end:
	// the last flush comes after the drain.
	stopTracing, err := tracing.Start(ctx)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), lastTracesFor)
		defer cancel()
		if err := stopTracing(flushCtx); err != nil {
			logger.Warn("exporting the last traces", "error", err)
		}
	}()
	db, err := app.OpenDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	// What runs beside the requests (the background work, the Redis client, the sandboxes' webhooks)
	// runs under a context of its own: ctx ends at SIGTERM, and they serve the drain (below) and
	// are let finish rather than cut off.
	workCtx, endWork := context.WithCancel(context.WithoutCancel(ctx))
	defer endWork()
	paygate, err := app.New(workCtx, cfg, db, logger, clock.System)
	if err != nil {
		return err
	}
	if err := paygate.EnsureFirstAdmin(ctx, cfg); err != nil {
		return err
	}

	server := &http.Server{
		Handler:           paygate.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second, // above the provider call limit of 20 s
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// The subscriptions' streams last until their clients leave: the shutdown aborts them, and
	// their clients subscribe again to another server.
	server.RegisterOnShutdown(paygate.AbortStreams)
	work := paygate.Start(workCtx)
	logger.Info("paygate listening", "addr", listener.Addr().String(), "env", cfg.Env, "database", db.Dialect)
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight and background rounds under way")
	// The rounds under way finish while the requests do, so the two bounds overlap, not add up.
	workStopped := make(chan struct{})
	go func() {
		defer close(workStopped)
		stopCtx, cancel := context.WithTimeout(context.Background(), finishRoundsFor)
		defer cancel()
		work.Stop(stopCtx)
	}()
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), drainRequestsFor)
	defer cancelDrain()
	drainErr := server.Shutdown(drainCtx)
	logger.Info("waiting for background work")
	<-workStopped
	// Last, what the requests and the rounds left in memory to write: the API keys' last uses.
	finalCtx, cancelFinal := context.WithTimeout(context.Background(), finalWritesFor)
	defer cancelFinal()
	work.RunAtStop(finalCtx)
	if drainErr != nil {
		return fmt.Errorf("shutting down: %w", drainErr)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// How long a stop waits, from SIGTERM, within the 30 s an orchestrator commonly grants before it
// kills (Kubernetes' default grace): the requests and the background rounds finish side by side,
// then the last writes are made and the last traces sent, 29 s at most in all.
const (
	// drainRequestsFor is longer than a payment's 20 s at the providers, so a charge in flight is
	// seen through and recorded.
	drainRequestsFor = 25 * time.Second
	// finishRoundsFor is many times a round's usual length (a second or less), and shorter than
	// the drain, which it runs beside. A webhook delivery's try cut short then is made again once
	// its claim runs out; a webhook event's processing cut short is rolled back, due at once.
	finishRoundsFor = 10 * time.Second
	// finalWritesFor bounds the last write of the API keys' uses: a few quick updates.
	finalWritesFor = 3 * time.Second
	// lastTracesFor bounds the export of the spans the batch still holds, when traces are
	// exported: one request to the collector.
	lastTracesFor = time.Second
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
