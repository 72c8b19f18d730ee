package database

import (
	"context"
	"log/slog"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"
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
// again (notifications may have been missed meanwhile), until ctx ends. On SQLite it does
// nothing. The listener holds one connection of its own, outside the pool: lib/pq's, which
// reconnects and says so by itself, where the pool's driver (pgx) has no listener for database/sql.
func (db *DB) Listen(ctx context.Context, channel string, heard func(), logger *slog.Logger) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	listener := pq.NewListener(db.dsn, 100*time.Millisecond, 10*time.Second, func(event pq.ListenerEventType, err error) {
		if err != nil {
			logger.Warn("listening for changes on other servers", "error", err)
		}
	})
	if err := listener.Listen(channel); err != nil {
		listener.Close()
		return err
	}
	go func() {
		defer listener.Close()
		// A connection that died quietly is noticed by a ping.
		ping := time.NewTicker(90 * time.Second)
		defer ping.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-listener.Notify: // nil after a reconnection
				heard()
			case <-ping.C:
				listener.Ping()
			}
		}
	}()
	return nil
}
