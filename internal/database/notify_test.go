package database_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestListenHearsAgainAfterItsConnectionIsKilled: a listener hears a notification, and when its
// connection is killed (as a failover kills it) it connects again by itself, says so by calling
// heard (notifications may have been missed), and hears the next notification.
func TestListenHearsAgainAfterItsConnectionIsKilled(t *testing.T) {
	db := databasetest.Postgres(t)
	suffix := make([]byte, 6)
	rand.Read(suffix)
	channel := "test_listen_" + hex.EncodeToString(suffix)
	heard := make(chan struct{}, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := db.Listen(ctx, channel, func() { heard <- struct{}{} }, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	hear := func(what string) {
		t.Helper()
		select {
		case <-heard:
		case <-time.After(20 * time.Second):
			t.Fatalf("heard nothing after %s", what)
		}
	}
	notified := func(what string) {
		t.Helper()
		// Notifications sent before the listener listens are not heard: send until one is.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			if err := db.Notify(ctx, channel); err != nil {
				t.Fatal(err)
			}
			select {
			case <-heard:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		t.Fatalf("heard no notification %s", what)
	}
	hear("connecting")
	notified("once listening")

	var killed int
	err := db.SQL.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = 'LISTEN "'||$1||'"'`, channel).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("killing the listener's connection: %d killed, %v", killed, err)
	}
	hear("its connection was killed")
	// Drain what was heard while connecting again, then hear a notification anew.
	for len(heard) > 0 {
		<-heard
	}
	notified("after connecting again")
}
