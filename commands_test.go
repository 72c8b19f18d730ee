package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestUserSetPasswordCommand: `paygate user set-password` gives a locked-out user a new password,
// from its flag or from stdin with --password -, and ends their sessions on the running server:
// the refresh token at once, the access token within a second. The policy holds, and neither the
// output nor an error shows the password.
func TestUserSetPasswordCommand(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"), "PAYGATE_API_KEY_SECRET=" + testAPIKeySecret}
	const email, first, second, third = "ops@example.com", "the first password of ops", "a second password, set by hand", "a third one, read from stdin"
	if err := run(context.Background(), []string{"user", "create", "--email", email, "--password", first, "--role", "operator"}, environ, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	baseURL, _, _ := startRun(t, environ)
	post := func(path, token string, body map[string]any) (int, map[string]any) {
		t.Helper()
		encoded, _ := json.Marshal(body)
		req, err := http.NewRequest(http.MethodPost, baseURL+path, bytes.NewReader(encoded))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Data map[string]any `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&answer)
		return resp.StatusCode, answer.Data
	}
	login := func(password string) (int, map[string]any) {
		t.Helper()
		return post("/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	}
	setPassword := func(stdin string, args ...string) (string, error) {
		var out, notes strings.Builder
		err := runWithInput(context.Background(), append([]string{"user", "set-password"}, args...), environ, strings.NewReader(stdin), &out, &notes)
		return out.String() + notes.String(), err
	}

	status, session := login(first)
	if status != http.StatusOK {
		t.Fatalf("login before = %d", status)
	}
	out, err := setPassword("", "--email", "OPS@example.com", "--password", second)
	if err != nil || !strings.Contains(out, "set the password of user usr_") || strings.Contains(out, second) {
		t.Fatalf("set-password = %v %q", err, out)
	}
	if status, _ := post("/api/v1/auth/refresh", "", map[string]any{"refresh_token": session["refresh_token"]}); status != http.StatusUnauthorized {
		t.Errorf("the refresh token of a session before set-password = %d", status)
	}
	access, _ := session["access_token"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, baseURL+"/api/v1/payments", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the access token of a session before set-password still answers %d", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, _ := login(first); status != http.StatusUnauthorized {
		t.Errorf("login with the old password = %d", status)
	}
	if status, _ := login(second); status != http.StatusOK {
		t.Errorf("login with the password set = %d", status)
	}

	// From stdin, with its line ending: neither in the arguments nor in the output.
	if out, err := setPassword(third+"\r\n", "--email", email, "--password", "-"); err != nil || strings.Contains(out, third) {
		t.Fatalf("set-password from stdin = %v %q", err, out)
	}
	if status, _ := login(third); status != http.StatusOK {
		t.Errorf("login with the password read from stdin = %d", status)
	}

	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"--email", email}, "--email and --password are required"},
		{"", []string{"--email", "nobody@example.com", "--password", second}, "no user has the email nobody@example.com"},
		{"", []string{"--email", email, "--password", "too short"}, "at least 12 characters"},
		{"", []string{"--email", email, "--password", "Password123456"}, "most common passwords"},
		{"", []string{"--email", email, "--password", "-"}, "read no password from stdin"},
		{"\nthe password on the second line", []string{"--email", email, "--password", "-"}, "read no password from stdin"},
	} {
		out, err := setPassword(tc.stdin, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Password123456") {
			t.Errorf("set-password %v = %v %q, want %q", tc.args, err, out, tc.want)
		}
	}
	if status, _ := login(third); status != http.StatusOK {
		t.Errorf("a refused set-password changed the password: login = %d", status)
	}
}
