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

// lintDir is graph/rest/lint: Spectral, Redocly and ajv, their versions pinned by its
// package-lock.json.
var lintDir = filepath.Join("..", "..", "graph", "rest", "lint")

// lintTools installs the linters, and answers node's path; without node and npm the test skips.
func lintTools(t *testing.T) string {
	t.Helper()
	node := nodeFor(t, "lint the OpenAPI document")
	npmCI(t, lintDir)
	return node
}

// servedDocument writes the OpenAPI document env serves to a file, for the linters.
func servedDocument(t *testing.T, env *testEnv) (file, raw string) {
	t.Helper()
	served := env.request(http.MethodGet, "/api/v1/openapi.json", "", nil)
	if served.status != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json = %d", served.status)
	}
	return tempFile(t, "openapi.json", []byte(served.raw)), served.raw
}

// tempFile writes content to a file named name in the test's temporary directory.
func tempFile(t *testing.T, name string, content []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// lint runs one of lintDir's tools and answers what it printed. Exit status 1 is a tool's way of
// saying it found an error; the findings are judged by the caller.
func lint(t *testing.T, node string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), node, args...)
	cmd.Dir = lintDir
	cmd.Env = append(os.Environ(), "SCARF_ANALYTICS=false", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.Output()
	if exitErr, ok := errors.AsType[*exec.ExitError](err); err != nil && (!ok || exitErr.ExitCode() != 1) {
		stderr := ""
		if ok {
			stderr = string(exitErr.Stderr)
		}
		t.Fatalf("%s: %v\n%.2000s\n%.2000s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// spectral lints document with a ruleset of lintDir.
func spectral(t *testing.T, node, ruleset, document string) []spectralFinding {
	t.Helper()
	out := lint(t, node, filepath.Join("node_modules", "@stoplight", "spectral-cli", "dist", "index.js"),
		"lint", "--ruleset", ruleset, "--format", "json", "--quiet", document)
	var findings []spectralFinding
	if err := json.Unmarshal(out, &findings); err != nil {
		t.Fatalf("spectral's findings are not JSON: %v\n%.2000s", err, out)
	}
	return findings
}

// TestOpenAPIDocumentIsStrictOpenAPI: the document is valid OpenAPI as the strictest tools client
// generators use read it: Redocly's recommended rules and Spectral's OpenAPI rules report no
// error, and ajv compiles every schema in strict mode (OpenAPI 3.0's schemas being JSON Schema
// draft 4 with nullable). Their warnings are logged.
func TestOpenAPIDocumentIsStrictOpenAPI(t *testing.T) {
	t.Parallel()
	node := lintTools(t)
	env := newTestEnv(t, databasetest.SQLite(t))
	document, _ := servedDocument(t, env)

	var redocly struct {
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	out := lint(t, node, filepath.Join("node_modules", "@redocly", "cli", "bin", "cli.js"), "lint", "--extends", "recommended", "--format", "json", document)
	if err := json.Unmarshal(out, &redocly); err != nil {
		t.Fatalf("Redocly's findings are not JSON: %v\n%.2000s", err, out)
	}
	var warnings []string
	for _, p := range redocly.Problems {
		at := ""
		if len(p.Location) > 0 {
			at = p.Location[0].Pointer
		}
		if p.Severity == "error" {
			t.Errorf("Redocly: %s at %s: %s", p.RuleID, at, p.Message)
		} else {
			warnings = append(warnings, fmt.Sprintf("Redocly %s: %s at %s", p.Severity, p.RuleID, at))
		}
	}
	for _, f := range spectral(t, node, "oas-ruleset.yaml", document) {
		if f.Severity == 0 {
			t.Errorf("Spectral: %s at %s: %s", f.Code, f.at(), f.Message)
		} else {
			warnings = append(warnings, fmt.Sprintf("Spectral %s: %s at %s", [...]string{"error", "warning", "information", "hint"}[min(f.Severity, 3)], f.Code, f.at()))
		}
	}
	report := strictCheck(t, node, document, nil)
	if report.Compiled < 100 {
		t.Errorf("ajv compiled %d schemas: the document's schemas were not found", report.Compiled)
	}
	slices.Sort(warnings)
	t.Logf("warnings:\n%s", strings.Join(warnings, "\n"))
}

// strictReport is what graph/rest/lint/strict.mjs prints.
type strictReport struct {
	Compiled int              `json:"compiled"`
	Checked  int              `json:"checked"`
	Failures []map[string]any `json:"failures"`
}

// strictCheck compiles every schema of document with ajv, strictly, and validates answers against
// it; each schema that does not compile and each answer that is invalid fails the test.
func strictCheck(t *testing.T, node, document string, answers []recordedAnswer) strictReport {
	t.Helper()
	args := []string{"strict.mjs", document}
	if answers != nil {
		data, err := json.Marshal(answers)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, tempFile(t, "answers.json", data))
	}
	var report strictReport
	if out := lint(t, node, args...); json.Unmarshal(out, &report) != nil {
		t.Fatalf("strict.mjs printed no report:\n%.2000s", out)
	}
	for _, failure := range report.Failures {
		detail, _ := json.Marshal(failure)
		t.Errorf("ajv, strictly: %.1500s", detail)
	}
	return report
}

// TestOpenAPIDocumentPassesOWASPRules lints the OpenAPI document Paygate serves with Spectral and
// the OWASP API Security ruleset: no rule may report an error on what a client sends, a request
// body or a parameter, wherever the schema it breaks is written. What it reports of answers and
// of the API as a whole is logged.
func TestOpenAPIDocumentPassesOWASPRules(t *testing.T) {
	t.Parallel()
	node := lintTools(t)
	env := newTestEnv(t, databasetest.SQLite(t))
	document, raw := servedDocument(t, env)
	findings := spectral(t, node, "owasp-ruleset.yaml", document)

	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
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
