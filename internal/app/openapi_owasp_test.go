package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database/databasetest"
)

// spectralFinding is one result of `spectral lint --format json`.
type spectralFinding struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Path     []any  `json:"path"`
	Severity int    `json:"severity"` // 0 error, 1 warning, 2 information, 3 hint
}

func (f spectralFinding) at() string {
	parts := make([]string, len(f.Path))
	for i, part := range f.Path {
		parts[i] = fmt.Sprint(part)
	}
	return strings.Join(parts, " › ")
}

// TestOpenAPIDocumentPassesOWASPRules lints the OpenAPI document Paygate serves with Spectral and
// the OWASP API Security ruleset (graph/rest/spectral, its versions pinned by package-lock.json):
// no rule may report an error on what a client sends, a request body or a parameter, wherever
// the schema it breaks is written. What it reports of answers and of the API as a whole is logged.
func TestOpenAPIDocumentPassesOWASPRules(t *testing.T) {
	t.Parallel()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skip("node and npm are needed to run Spectral over the OpenAPI document (.ci/run installs them)")
	}
	dir := filepath.Join("..", "..", "graph", "rest", "spectral")
	// No install scripts: Spectral needs none, and one of its dependencies would report the
	// install to its maker.
	install := exec.CommandContext(t.Context(), npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts")
	install.Dir = dir
	install.Env = append(os.Environ(), "SCARF_ANALYTICS=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}

	env := newTestEnv(t, databasetest.SQLite(t))
	served := env.request(http.MethodGet, "/api/v1/openapi.json", "", nil)
	if served.status != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json = %d", served.status)
	}
	document := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(document, []byte(served.raw), 0o600); err != nil {
		t.Fatal(err)
	}
	lint := exec.CommandContext(t.Context(), node, filepath.Join("node_modules", "@stoplight", "spectral-cli", "dist", "index.js"),
		"lint", "--ruleset", "ruleset.yaml", "--format", "json", "--quiet", document)
	lint.Dir = dir
	lint.Env = append(os.Environ(), "SCARF_ANALYTICS=false")
	out, err := lint.Output()
	// Spectral exits 1 when it reports an error; the findings are judged below, not its status.
	if exitErr, ok := errors.AsType[*exec.ExitError](err); err != nil && (!ok || exitErr.ExitCode() != 1) {
		t.Fatalf("spectral lint: %v\n%s\n%s", err, out, exitErr.Stderr)
	}
	var findings []spectralFinding
	if err := json.Unmarshal(out, &findings); err != nil {
		t.Fatalf("spectral's findings are not JSON: %v\n%.2000s", err, out)
	}

	var doc map[string]any
	if err := json.Unmarshal([]byte(served.raw), &doc); err != nil {
		t.Fatal(err)
	}
	input := requestSchemas(doc)
	var warned []string
	counts := map[string]int{}
	for _, f := range findings {
		switch {
		case f.Severity == 0 && input.holds(f.Path):
			t.Errorf("%s on what a client sends, at %s: %s", f.Code, f.at(), f.Message)
		case input.holds(f.Path):
			warned = append(warned, fmt.Sprintf("%s at %s", f.Code, f.at()))
		default:
			counts[fmt.Sprintf("%s (%s)", f.Code, [...]string{"error", "warning", "information", "hint"}[min(f.Severity, 3)])]++
		}
	}
	var rest []string
	for rule, n := range counts {
		rest = append(rest, fmt.Sprintf("%4d %s", n, rule))
	}
	slices.Sort(rest)
	slices.Sort(warned)
	t.Logf("Spectral's warnings on what a client sends:\n%s", strings.Join(warned, "\n"))
	t.Logf("Spectral's findings on answers and on the API as a whole:\n%s", strings.Join(rest, "\n"))
}

// inputPlaces are the places of an OpenAPI document that describe what a client sends.
type inputPlaces struct {
	// components are the components (#/components/schemas/X and the like) a request body or a
	// parameter uses, directly or through other components.
	components map[string]bool
}

// requestSchemas finds every component a request body or a parameter uses, following $ref.
func requestSchemas(doc map[string]any) inputPlaces {
	places := inputPlaces{components: map[string]bool{}}
	var follow func(v any)
	follow = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, "#/components/") && !places.components[ref] {
				places.components[ref] = true
				follow(pointer(doc, ref))
			}
			for _, item := range v {
				follow(item)
			}
		case []any:
			for _, item := range v {
				follow(item)
			}
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		item, _ := item.(map[string]any)
		follow(item["parameters"])
		for _, operation := range item {
			if operation, ok := operation.(map[string]any); ok {
				follow(operation["parameters"])
				follow(operation["requestBody"])
			}
		}
	}
	return places
}

// holds reports whether path, as Spectral gives it, lies in a request body or a parameter, or in
// a component one uses.
func (p inputPlaces) holds(path []any) bool {
	at := make([]string, len(path))
	for i, part := range path {
		at[i] = fmt.Sprint(part)
	}
	switch {
	case len(at) >= 3 && at[0] == "paths" && at[2] == "parameters":
		return true
	case len(at) >= 4 && at[0] == "paths" && (at[3] == "parameters" || at[3] == "requestBody"):
		return true
	case len(at) >= 3 && at[0] == "components" && (at[1] == "parameters" || at[1] == "requestBodies"):
		return true
	case len(at) >= 3 && at[0] == "components":
		return p.components["#/components/"+at[1]+"/"+escapePointer(at[2])]
	}
	return false
}

// pointer resolves a local JSON pointer (#/a/b) in doc.
func pointer(doc map[string]any, ref string) any {
	var v any = doc
	for _, token := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := v.(map[string]any)
		v = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(token)]
	}
	return v
}

func escapePointer(token string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}
