package database_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/paygate/internal/database"
)

// The errors a failover brings, made by a real PostgreSQL and pgx, are told apart from a
// statement's refusal, and those known to have written nothing from those that may have.
func TestUnavailableTellsAFailoverFromARefusal(t *testing.T) {
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	connect := func(t *testing.T) *pgx.Conn {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return conn
	}
	// A port where nothing listens, as a dead primary's is.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	cases := []struct {
		name                 string
		err                  func(t *testing.T) error
		unavailable, nothing bool
	}{
		{"no server", func(t *testing.T) error {
			_, err := pgx.Connect(ctx, "postgres://postgres@"+closedAddr+"/test?sslmode=disable&connect_timeout=2")
			return err
		}, true, true},
		{"connection ended by the server", func(t *testing.T) error {
			victim, killer := connect(t), connect(t)
			if _, err := killer.Exec(ctx, "SELECT pg_terminate_backend($1)", victim.PgConn().PID()); err != nil {
				t.Fatal(err)
			}
			_, err := victim.Exec(ctx, "SELECT 1")
			return err
		}, true, false},
		{"connection closed before the statement was sent", func(t *testing.T) error {
			conn := connect(t)
			conn.PgConn().Conn().Close() // the network under it gone
			_, err := conn.Exec(ctx, "SELECT 1")
			return err
		}, true, true},
		{"a standby (read-only)", func(t *testing.T) error {
			conn := connect(t)
			if _, err := conn.Exec(ctx, "SET default_transaction_read_only = on"); err != nil {
				t.Fatal(err)
			}
			_, err := conn.Exec(ctx, "CREATE TEMP TABLE refused (id int)")
			return err
		}, true, true},
		{"a statement refused", func(t *testing.T) error {
			_, err := connect(t).Exec(ctx, "SELECT 1/0")
			return err
		}, false, true},
		{"the caller's own cancellation", func(t *testing.T) error {
			canceled, cancel := context.WithCancel(ctx)
			cancel()
			_, err := connect(t).Exec(canceled, "SELECT 1")
			return err
		}, false, true},
		{"an HTTP client's (a provider's call)", func(t *testing.T) error {
			_, err := http.Get("http://" + closedAddr + "/")
			return err
		}, false, false},
		{"not the database's", func(*testing.T) error { return errors.New("a bug") }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err(t)
			if err == nil {
				t.Fatal("no error")
			}
			if got := database.Unavailable(err); got != c.unavailable {
				t.Errorf("Unavailable(%v) = %v; want %v", err, got, c.unavailable)
			}
			if got := database.NothingWritten(err); got != c.nothing {
				t.Errorf("NothingWritten(%v) = %v; want %v", err, got, c.nothing)
			}
		})
	}
	if database.Unavailable(nil) || database.NothingWritten(nil) {
		t.Error("no error is neither")
	}
}
