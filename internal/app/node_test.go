package app

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests that run real clients and tools in node find node and npm here, and install each
// directory's packages (pinned by its package-lock.json) once per test binary.

// nodeFor answers node's path for a test that runs tools in node, and skips the test when node or
// npm is missing or node is older than 20.19, which Redocly and the TypeScript client's tools
// need (.ci/run installs a Node that is new enough).
func nodeFor(t *testing.T, what string) string {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	_, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skipf("node and npm are needed to %s (.ci/run installs them)", what)
	}
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatalf("node -p process.versions.node: %v", err)
	}
	if version := strings.TrimSpace(string(out)); !atLeast(version, 20, 19) {
		t.Skipf("Node %s is older than 20.19, which is needed to %s (.ci/run installs a newer one)", version, what)
	}
	return node
}

// atLeast reports whether version (major.minor.patch) is major.minor or later.
func atLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	gotMajor, _ := strconv.Atoi(parts[0])
	gotMinor := 0
	if len(parts) > 1 {
		gotMinor, _ = strconv.Atoi(parts[1])
	}
	return gotMajor > major || gotMajor == major && gotMinor >= minor
}

// npmInstalls holds, per directory, the one npm ci of it: npm ci empties node_modules first, so
// two at once in one directory would break each other.
var npmInstalls sync.Map // directory -> func() error

// npmCI installs dir's packages as its package-lock.json pins them, once per test binary; a
// failure fails every test that needs them. No install scripts run: none of the tools needs one,
// and one of Spectral's dependencies would report the install to its maker.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	install, _ := npmInstalls.LoadOrStore(dir, sync.OnceValue(func() error {
		cmd := exec.Command("npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SCARF_ANALYTICS=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
		return nil
	}))
	if err := install.(func() error)(); err != nil {
		t.Fatal(err)
	}
}
