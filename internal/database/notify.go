package database

import (
	"context"
	"log/slog"
	"net"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
)

// PostgreSQL's LISTEN/NOTIFY tells every server's process that something was written, at once.
// SQLite serves one process, which tells itself.

// Notify sends an empty notification on channel to every server listening, this one included;
// on SQLite it does nothing.
func (db *DB) Notify(ctx context.Context, channel string) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	_, err := db.SQL.ExecContext(ctx, "SELECT pg_notify($1, '')", channel)
	return err
}

// Listen calls heard for each notification on channel, and each time its connection is made
// (notifications may have been missed meanwhile), until ctx ends; on SQLite it does nothing. The
// listener holds one pgx connection of its own, outside the pools, made again whenever it is lost
// (a primary that died, a failover: DATABASE_URL's hosts are tried as the pools try them), each
// loss logged. A server that went away without a word is noticed by TCP's keepalives within a
// minute, where the kernel's defaults would take hours.
func (db *DB) Listen(ctx context.Context, channel string, heard func(), logger *slog.Logger) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	config, err := pgxConfig(db.dsn, false)
	if err != nil {
		return err
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}}
	config.DialFunc = dialer.DialContext
	go func() {
		const firstWait, longestWait = 100 * time.Millisecond, 10 * time.Second
		wait := firstWait
		for {
			listened, err := listenOnce(ctx, config, channel, heard)
			if ctx.Err() != nil {
				return
			}
			logger.Warn("listening for changes on other servers", "error", err)
			if listened {
				wait = firstWait
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, longestWait)
		}
	}()
	return nil
}

// listenOnce connects, listens on channel and calls heard then and for each notification, until
// the connection or ctx ends; it says whether it got as far as listening.
func listenOnce(ctx context.Context, config *pgx.ConnConfig, channel string, heard func()) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, config)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, err
	}
	for {
		heard()
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
	}
}
