package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err says that PostgreSQL could not be reached or could not take
// writes, rather than that it refused a statement: no server would connect, a connection broke or
// was ended by the server (shutting down, crashed, starting), the server has no connection to
// spare, or the server reached is a standby (read-only). During a failover every request meets one of these until a primary is found, and
// its client should come back shortly rather than be told of a fault of ours.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return unavailableState(pgErr.Code)
	}
	// A connection not made, its time to connect spent among the causes.
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's own end, not the database's
	}
	// database/sql's ErrBadConn is a connection found broken.
	if errors.Is(err, driver.ErrBadConn) {
		return true
	}
	// pgconn hands on a broken connection's failure as the network's error or the stream's end.
	// An HTTP client's is not the database's (a provider's call ends in a *url.Error).
	if _, ofHTTP := errors.AsType[*url.Error](err); ofHTTP {
		return false
	}
	_, ofNetwork := errors.AsType[*net.OpError](err)
	return ofNetwork || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// NothingWritten reports whether err, which ended a transaction, is known to have come before the
// transaction reached the database or to have been refused by it, so that nothing of it was
// written. A connection broken after its statements were sent is not known either way: their
// commit may have been made, or made on the old primary and lost in the failover.
func NothingWritten(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		// An error (not a fatal one) aborts its transaction, which then commits nothing.
		severity := pgErr.SeverityUnlocalized
		if severity == "" {
			severity = pgErr.Severity
		}
		return severity == "ERROR"
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	// A batch whose statements could not be prepared was not sent.
	if _, ok := errors.AsType[pgx.ErrPreprocessingBatch](err); ok {
		return true
	}
	return pgconn.SafeToRetry(err)
}

// unavailableState tells the SQLSTATEs of a server gone, full or not taking writes: class 08
// (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now),
// 53300 (too many connections) and 25006 (read-only transaction: the server is a standby).
func unavailableState(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300", "25006":
		return true
	}
	return strings.HasPrefix(code, "08")
}
