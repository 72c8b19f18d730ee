package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
)

// startRun runs the program as main does, on a free port, and returns its base URL and a function
// that stops it (as SIGTERM would) and returns run's error.
func startRun(t *testing.T, environ []string) (baseURL string, logs *lockedBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, append(environ, "PAYGATE_ADDR=127.0.0.1:0"), logs, io.Discard) }()
	deadline := time.Now().Add(30 * time.Second)
	for baseURL == "" {
		select {
		case err := <-done:
			t.Fatalf("run stopped at start: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("run did not start listening:\n%s", logs.String())
		}
		scanner := bufio.NewScanner(strings.NewReader(logs.String()))
		for scanner.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Msg == "paygate listening" {
				baseURL = "http://" + line.Addr
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return baseURL, logs, stop
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestRunServesTheSQLiteDefaultAndShutsDownCleanly(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"), "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db")}
	baseURL, logs, stop := startRun(t, environ)

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/": 200, "/nowhere": 404} {
		if status, body := getStatus(t, baseURL+path); status != want {
			t.Errorf("GET %s = %d %s", path, status, body)
		}
	}
	if _, body := getStatus(t, baseURL+"/"); !strings.Contains(body, "/query") {
		t.Errorf("the playground does not point at /query: %.200s", body)
	}

	// The first admin was created with a password shown once; it logs in.
	var password string
	scanner := bufio.NewScanner(strings.NewReader(logs.String()))
	for scanner.Scan() {
		var line struct{ Msg, Email, Password string }
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line.Password != "" {
			password = line.Password
			if line.Email != "admin@localhost" {
				t.Errorf("first admin = %s", line.Email)
			}
		}
	}
	if password == "" {
		t.Fatalf("no generated admin password in the log:\n%s", logs.String())
	}
	resp, err := http.Post(baseURL+"/api/v1/auth/login", "application/json",
		strings.NewReader(`{"email":"admin@localhost","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("first admin login = %d", resp.StatusCode)
	}
	for _, secret := range []string{"jwt_secret", "card_fingerprint_key"} {
		info, err := os.Stat(filepath.Join(dir, "data", secret))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("generated %s: %v %v", secret, err, info)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run after shutdown = %v, want nil", err)
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Error("no clean stop in the log")
	}

	// A second start on the same data keeps the secrets and the admin, and creates nobody.
	_, logs, stop = startRun(t, environ)
	if strings.Contains(logs.String(), "first admin") || strings.Contains(logs.String(), "generated a development secret") {
		t.Errorf("second start created things again:\n%s", logs.String())
	}
	stop()
}

func TestRunWithConfiguredAdminOnPostgres(t *testing.T) {
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
	}
	db := databasetest.Postgres(t) // a fresh schema; run migrates it again, which must be a no-op
	var schema string
	if err := db.SQL.QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	url := base + "&search_path=" + schema
	environ := []string{
		"DATABASE_URL=" + url, "PAYGATE_DATA_DIR=" + t.TempDir(),
		"PAYGATE_ADMIN_EMAIL=boss@example.com", "PAYGATE_ADMIN_PASSWORD=a very long password",
	}
	baseURL, logs, stop := startRun(t, environ)
	if status, body := getStatus(t, baseURL+"/readyz"); status != 200 {
		t.Errorf("readyz = %d %s", status, body)
	}
	if strings.Contains(logs.String(), "a very long password") {
		t.Error("the configured admin password was logged")
	}
	resp, err := http.Post(baseURL+"/api/v1/auth/login", "application/json",
		strings.NewReader(`{"email":"boss@example.com","password":"a very long password"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("configured admin login = %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Errorf("stop = %v", err)
	}
}

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db")}
	var out strings.Builder
	if err := run(context.Background(), []string{"migrate"}, environ, &out, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !strings.Contains(out.String(), "migrations applied") {
		t.Errorf("migrate said %s", out.String())
	}
	out.Reset()
	err := run(context.Background(), []string{"user", "create", "--email", "dev@example.com", "--password", "twelve chars!", "--role", "developer"}, environ, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), "created user usr_") {
		t.Errorf("user create = %v %s", err, out.String())
	}
	if err := run(context.Background(), []string{"user", "create", "--email", "x@example.com", "--password", "twelve chars!", "--role", "emperor"}, environ, io.Discard, io.Discard); err == nil {
		t.Error("user create accepted an unknown role")
	}
	if err := run(context.Background(), []string{"frobnicate"}, environ, io.Discard, io.Discard); err == nil {
		t.Error("an unknown command was accepted")
	}
}

func TestProductionRefusesToStartWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_ENV=production", "PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + filepath.Join(dir, "p.db"), "PAYGATE_ADDR=127.0.0.1:0"}
	err := run(context.Background(), nil, environ, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PAYGATE_JWT_SECRET") {
		t.Errorf("production start without secrets = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "jwt_secret" {
			t.Error("production generated a secret")
		}
	}
	if err := run(context.Background(), nil, []string{"PAYGATE_ENV=staging"}, io.Discard, io.Discard); err == nil {
		t.Error("an unknown PAYGATE_ENV was accepted")
	}
}
