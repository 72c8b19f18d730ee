package app

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database/databasetest"
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
	got := map[string]string{}
	scanner := bufio.NewScanner(strings.NewReader(env.logs.String()))
	for scanner.Scan() {
		var line struct{ Msg, Path, Route string }
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "request" {
			got[line.Path] = line.Route
		}
	}
	for path, route := range want {
		path, _, _ = strings.Cut(path, "?")
		if got[path] != route {
			t.Errorf("%s logged route %q, want %q", path, got[path], route)
		}
	}
}
