package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/ops"
	"github.com/paygate/paygate/internal/playground"
	"github.com/paygate/paygate/internal/provider"
)

// TestAccessLogNamesRoutes: each access log line names the route pattern that served the
// request, one value per route whatever the ids in its path, so that logs and metrics group by it.
func TestAccessLogNamesRoutes(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("viewer")
	want := map[string]string{
		"/api/v1/payments/pay_one":         "GET /api/v1/payments/{id}",
		"/api/v1/payments/pay_two":         "GET /api/v1/payments/{id}",
		"/api/v1/payments/pay_one/refunds": "GET /api/v1/payments/{id}/refunds",
		"/query?query=%7B__typename%7D":    "/query",
		"/no/such/route":                   "/",
	}
	for path := range want {
		env.request(http.MethodGet, path, token, nil)
	}
	got := loggedRoutes(env.logs.String())
	for path, route := range want {
		path, _, _ = strings.Cut(path, "?")
		if got[path] != route {
			t.Errorf("%s logged route %q, want %q", path, got[path], route)
		}
	}
}

// loggedRoutes is the route each access log line of logs names, by the request's path.
func loggedRoutes(logs string) map[string]string {
	routes := map[string]string{}
	scanner := bufio.NewScanner(strings.NewReader(logs))
	for scanner.Scan() {
		var line struct{ Msg, Path, Route string }
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "request" {
			routes[line.Path] = line.Route
		}
	}
	return routes
}

// TestUncleanPathsRedirectFirst: a request whose path is not clean is redirected to the clean one
// before the API's middleware runs (it spends no token of the API's rate limit) and is named by
// the outermost route that took it, as a request for a route it does not name would be.
func TestUncleanPathsRedirectFirst(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	env.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	want := map[string]struct{ location, route string }{
		"//query":                   {"/query", "/query"},
		"/x/../query":               {"/query", "/query"},
		"/api/v1//payments/pay_one": {"/api/v1/payments/pay_one", "/"},
	}
	for path, w := range want {
		r := env.request(http.MethodGet, path, "", nil)
		if r.status/100 != 3 || r.header.Get("Location") != w.location || r.header.Get("RateLimit-Remaining") != "" {
			t.Errorf("GET %s = %d to %q, RateLimit-Remaining %q; want a redirect to %s before the rate limit",
				path, r.status, r.header.Get("Location"), r.header.Get("RateLimit-Remaining"), w.location)
		}
	}
	got := loggedRoutes(env.logs.String())
	for path, w := range want {
		if got[path] != w.route {
			t.Errorf("GET %s logged route %q, want %q", path, got[path], w.route)
		}
	}
}

// TestReadinessIsCheckedOnceASecond: a flood of probes costs one database check a second; a
// prober that left before its check ended leaves nothing cached.
func TestReadinessIsCheckedOnceASecond(t *testing.T) {
	checks := 0
	failing := error(nil)
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ready := &readiness{check: func(ctx context.Context) error { checks++; return errors.Join(failing, ctx.Err()) }, now: func() time.Time { return at }}
	for range 100 {
		if err := ready.answer(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	failing = errors.New("the database is down")
	at = at.Add(readinessFor - time.Millisecond)
	if err := ready.answer(context.Background()); err != nil || checks != 1 {
		t.Errorf("within the second: %v after %d checks, want the first answer from one check", err, checks)
	}
	at = at.Add(time.Millisecond)
	if err := ready.answer(context.Background()); err == nil || checks != 2 {
		t.Errorf("a second on: %v after %d checks, want the failure from a second check", err, checks)
	}
	failing = nil
	at = at.Add(readinessFor)
	left, leave := context.WithCancel(context.Background())
	leave()
	ready.answer(left)
	if err := ready.answer(context.Background()); err != nil || checks != 4 {
		t.Errorf("after a prober that left: %v after %d checks, want a fresh check", err, checks)
	}
}

// TestPagesAloneCarryDocumentHeaders: the pages a browser shows (the playground, the operations
// page, a sandbox's 3-D Secure page) and the files they load are framed by no one and send their
// address nowhere; an answer read as data carries only what data needs, as every header is work
// for every client on every request.
func TestPagesAloneCarryDocumentHeaders(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	operator := env.tokenFor("operator")
	made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("30.00", "USD", provider.AuthenticateThenApprove, "http://127.0.0.1:9/shop/return"))
	_, challenge := awaitingShopper(t, env, made, "stripe", "http://127.0.0.1:9/shop/return")
	document := map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cross-Origin-Opener-Policy": "same-origin"}
	data := map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'"}

	for _, page := range []string{"/", playground.Prefix + "playground.js", ops.Path, strings.TrimPrefix(challenge, env.url)} {
		r := env.request(http.MethodGet, page, "", nil)
		if r.status != http.StatusOK || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s = %d %v", page, r.status, r.header)
		}
		for name, want := range document {
			if got := r.header.Values(name); len(got) != 1 || got[0] != want {
				t.Errorf("GET %s: %s = %q, want %q", page, name, got, want)
			}
		}
	}
	for _, answer := range []response{
		env.request(http.MethodGet, "/api/v1/payments", operator, nil),
		env.request(http.MethodGet, "/api/v1/payments/pay_none", operator, nil),
		env.request(http.MethodPost, "/query", operator, map[string]any{"query": "{ payments(first: 1) { totalCount } }"}),
		env.request(http.MethodGet, "/healthz", "", nil),
	} {
		for name, want := range data {
			if got := answer.header.Get(name); got != want {
				t.Errorf("%d %s: %s = %q, want %q", answer.status, answer.raw, name, got, want)
			}
		}
		for name := range document {
			if got := answer.header.Get(name); got != "" {
				t.Errorf("%d %s: a document header, %s: %q", answer.status, answer.raw, name, got)
			}
		}
	}
}
