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
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skip("node and npm are needed to run the graphql-http audit of /query (.ci/run installs them)")
	}
	dir := filepath.Join("..", "..", "graph", "httpaudit")
	install := exec.CommandContext(t.Context(), npm, "ci", "--prefer-offline", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	env := newTestEnv(t, databasetest.SQLite(t))
	audit := exec.CommandContext(t.Context(), node, "audit.mjs", env.url+"/query")
	audit.Dir = dir
	if out, err := audit.CombinedOutput(); err != nil {
		t.Errorf("graphql-http audit of /query: %v\n%s", err, out)
	}
}
