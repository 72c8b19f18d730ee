package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestShutdownWritesTheLastKeyUse: stopped as serve stops it, a server writes the API key uses it
// still holds in memory. The rounds stop first, a request finishes after them, as one still in
// flight does, and its key's use is written by the last write at stop, which no round makes any
// more.
func TestShutdownWritesTheLastKeyUse(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		work := env.app.Start(t.Context())
		key := env.apiKey(env.tokenFor("developer"), auth.ScopePaymentsRead)
		lastUse := func() *time.Time {
			t.Helper()
			stored, err := db.Ent.APIKey.Query().Only(databasetest.AsMerchant()) // the key just made
			if err != nil {
				t.Fatal(err)
			}
			return stored.LastUsedAt
		}

		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		work.Stop(stopCtx)
		if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
			t.Fatalf("a request with the key = %d %s", r.status, r.raw)
		}
		if used := lastUse(); used != nil {
			t.Fatalf("the key's use was written at %v with the rounds stopped", used)
		}
		work.RunAtStop(stopCtx)
		if lastUse() == nil {
			t.Error("the stop did not write the key's last use")
		}
	})
}
