package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/auth"
)

// testAPIKeySecret is the key the tests' API keys are kept under.
const testAPIKeySecret = "test-api-key-secret-test-api-key-secret-0"

// TestAPIKeyCommand: `paygate apikey create` makes the first key of a deployment, for the first
// admin, which the server then takes.
func TestAPIKeyCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "paygate.db")
	environ := []string{"PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + path, "PAYGATE_API_KEY_SECRET=" + testAPIKeySecret}
	create := func(args ...string) (string, error) {
		var out strings.Builder
		err := run(context.Background(), append([]string{"apikey", "create"}, args...), environ, &out, io.Discard)
		return strings.TrimSpace(out.String()), err
	}
	if _, err := create("--name", "deploy", "--scopes", "payments:read"); err == nil || !strings.Contains(err.Error(), "no enabled user") {
		t.Errorf("a key with no user to own it = %v", err)
	}
	if err := run(context.Background(), []string{"user", "create", "--email", "ops@example.com", "--password", "twelve chars!", "--role", "admin"}, environ, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--name", "deploy"},
		{"--scopes", "payments:read"},
		{"--name", "deploy", "--scopes", "payments:read", "extra"},
		{"--name", "deploy", "--scopes", "payments:nothing"},
		{"--name", "deploy", "--scopes", "payments:read", "--expires-at", "soon"},
		{"--name", "deploy", "--scopes", "payments:read", "--user", "nobody@example.com"},
	} {
		if out, err := create(args...); err == nil || out != "" {
			t.Errorf("apikey create %v = %q, %v", args, out, err)
		}
	}
	key, err := create("--name", "deploy", "--scopes", "payments:read,payments:write")
	if err != nil || !strings.HasPrefix(key, auth.TestKeyPrefix) {
		t.Fatalf("apikey create = %q, %v", key, err)
	}
	baseURL, _, _ := startRun(t, environ)
	req, err := http.NewRequest(http.MethodGet, baseURL+"/api/v1/payments", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("listing payments with the command's key = %d", resp.StatusCode)
	}
}
