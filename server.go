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
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
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
	// What can be refused is refused before anything is touched: no database file is made and no
	// migration is run for a start that fails.
	if err := cfg.CheckSecrets(); err != nil {
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
	db, err := app.OpenDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	paygate, err := app.New(ctx, cfg, db, logger, clock.System)
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
	paygate.Start(ctx)
	logger.Info("paygate listening", "addr", listener.Addr().String(), "env", cfg.Env, "database", db.Dialect)
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight")
	// Longer than the provider call limit, so a charge in flight is seen through and recorded.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}
