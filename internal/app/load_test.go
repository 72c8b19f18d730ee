package app

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/loadtest"
)

// TestLoadDriverAgainstPaygate runs cmd/paygate-load's driver briefly against Paygate's real
// handler over both surfaces and the bare handler over the same database: every answer is what
// the driver expects, so the load command cannot drift from the API it measures.
func TestLoadDriverAgainstPaygate(t *testing.T) {
	t.Parallel()
	db := databasetest.SQLite(t)
	paygate := newTestApp(t, db, NewLogger(io.Discard, "warn"))
	token := (&testEnv{t: t, db: db, app: paygate}).tokenFor("developer")
	server := httptest.NewServer(paygate.handler)
	defer server.Close()
	bare := httptest.NewServer(loadtest.Bare(db.SQL, db.Dialect, ""))
	defer bare.Close()
	targets := []loadtest.Target{
		{Surface: loadtest.SurfaceBare, BaseURL: bare.URL},
		{Surface: loadtest.SurfaceREST, BaseURL: server.URL, Token: token},
		{Surface: loadtest.SurfaceGraphQL, BaseURL: server.URL, Token: token},
	}
	cfg := loadtest.Config{Concurrency: 2, Duration: 200 * time.Millisecond, Keyed: true, Client: server.Client()}
	results, err := loadtest.Compare(context.Background(), cfg, targets, []string{"create", "get", "list"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 9 {
		t.Fatalf("%d runs, want 9", len(results))
	}
	for _, r := range results {
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s over %s: %d requests, %d errors (%s)", r.Operation, r.Surface, r.Requests, r.Errors, r.FirstError)
		}
	}
}
