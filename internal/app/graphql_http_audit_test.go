package app

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestGraphQLOverHTTPAudit runs every audit of graphql-http (graph/httpaudit/audit.mjs, its
// versions pinned by package-lock.json) against /query: each must be ok, warnings and notices
// included. In development only: the audits of variables ask for __type, which production refuses
// (introspection_disabled), as it should; the HTTP layer is the same in both.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	t.Parallel()
	node := nodeFor(t, "run the graphql-http audit of /query")
	dir := filepath.Join("..", "..", "graph", "httpaudit")
	npmCI(t, dir)
	env := newTestEnv(t, databasetest.SQLite(t))
	audit := exec.CommandContext(t.Context(), node, "audit.mjs", env.url+"/query")
	audit.Dir = dir
	if out, err := audit.CombinedOutput(); err != nil {
		t.Errorf("graphql-http audit of /query: %v\n%s", err, out)
	}
}
