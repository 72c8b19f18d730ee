package app

import (
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/database/databasetest"
)

func TestCORSAllowsOnlyConfiguredOrigins(t *testing.T) {
	t.Parallel()
	preflight := func(env *testEnv, origin string) http.Header {
		return env.request(http.MethodOptions, "/api/v1/payments", "", nil,
			"Origin", origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type").header
	}
	db := databasetest.SQLite(t)
	env := newTestEnv(t, db, "PAYGATE_CORS_ORIGINS=https://dash.example.com")
	if got := preflight(env, "https://dash.example.com").Get("Access-Control-Allow-Origin"); got != "https://dash.example.com" {
		t.Errorf("configured origin: Allow-Origin = %q", got)
	}
	if got := preflight(env, "https://evil.example.com").Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("other origin: Allow-Origin = %q", got)
	}
	closed := newTestEnv(t, db)
	if got := preflight(closed, "https://dash.example.com").Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("no origins configured: Allow-Origin = %q", got)
	}
}
