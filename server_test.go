package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/logtest"
)

// startRun runs the program as main does, on a free port, and returns its base URL and a function
// that stops it (as SIGTERM would) and returns run's error.
func startRun(t *testing.T, environ []string) (baseURL string, logs *logtest.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &logtest.Buffer{}
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
	if _, body := getStatus(t, baseURL+"/"); !strings.Contains(body, "/playground/playground.js") {
		t.Errorf("the playground page does not load its script: %.200s", body)
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
	if waiting, stopped := strings.Index(logs.String(), `"msg":"waiting for background work"`), strings.Index(logs.String(), `"msg":"stopped"`); waiting < 0 || stopped < waiting {
		t.Errorf("no clean stop in the log, after the background work:\n%s", logs.String())
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
	err = run(context.Background(), []string{"user", "create", "--email", "dev@example.com", "--password", "twelve chars!", "--role", "viewer"}, environ, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "exists already") || strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "constraint") {
		t.Errorf("user create with a taken email = %v", err)
	}
}

// TestCommandLine: every command has real help, which touches nothing and names the variables
// the command reads and no others; a group of commands (user, apikey) lists its commands, asked
// for help or given none; an unknown flag, argument or command of a group is an error, never
// ignored; a user needs a role.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	database := filepath.Join(dir, "paygate.db")
	environ := []string{"PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + database}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out strings.Builder
		if err := run(context.Background(), args, environ, &out, io.Discard); err != nil || !strings.Contains(out.String(), "paygate apikey create") ||
			strings.Count(out.String(), "\n") < 8 {
			t.Errorf("paygate %v = %v\n%s", args, err, out.String())
		}
	}
	for group, want := range map[string][]string{
		"user":   {"paygate user create --email E", "Adds a user"},
		"apikey": {"paygate apikey create --name N", "Makes an API key"},
	} {
		for _, args := range [][]string{{"help", group}, {group, "--help"}, {group, "-h"}, {group}} {
			var out strings.Builder
			err := run(context.Background(), args, environ, &out, io.Discard)
			if err != nil || !strings.Contains(out.String(), want[0]) || !strings.Contains(out.String(), want[1]) {
				t.Errorf("paygate %v = %v, want the %s commands listed:\n%s", args, err, group, out.String())
			}
		}
	}
	serverOnly := []string{"PAYGATE_CORS_ORIGINS", "REDIS_URL", "PAYGATE_ADDR", "PAYGATE_STRIPE_API_KEY"}
	secrets := []string{"PAYGATE_ENV", "PAYGATE_DATA_DIR", "PAYGATE_JWT_SECRET", "PAYGATE_API_KEY_SECRET"}
	for _, tt := range []struct {
		args        []string
		wants, nots []string
	}{
		{[]string{"migrate", "--help"}, []string{"Usage: paygate migrate", "DATABASE_URL", "PAYGATE_DB_MAX_CONNS", "PAYGATE_LOG_LEVEL"}, append(serverOnly, secrets...)},
		{[]string{"help", "migrate"}, []string{"Usage: paygate migrate"}, nil},
		{[]string{"serve", "-h"}, append([]string{"Usage: paygate [serve]", "openssl rand -hex 32", "DATABASE_URL", "PAYGATE_LOG_LEVEL"}, append(serverOnly, secrets...)...), nil},
		{[]string{"help", "user", "create"}, []string{"-role", "-email", "(required)", "DATABASE_URL"}, append(serverOnly, append(secrets, "PAYGATE_LOG_LEVEL")...)},
		{[]string{"apikey", "create", "--help"}, append([]string{"-scopes", "-expires-at", "shown this once", "DATABASE_URL"}, secrets...), append(serverOnly, "PAYGATE_LOG_LEVEL")},
	} {
		var out strings.Builder
		if err := run(context.Background(), tt.args, environ, &out, io.Discard); err != nil {
			t.Errorf("paygate %v = %v", tt.args, err)
		}
		for _, want := range tt.wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("paygate %v says no %q:\n%s", tt.args, want, out.String())
			}
		}
		for _, not := range tt.nots {
			if strings.Contains(out.String(), not) {
				t.Errorf("paygate %v names %s, which it does not read:\n%s", tt.args, not, out.String())
			}
		}
	}
	if _, err := os.Stat(database); !os.IsNotExist(err) {
		t.Errorf("help touched the database: %v", err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--port", "9000"}, "flag provided but not defined: -port"},
		{[]string{"--port", "9000"}, "flag provided but not defined: -port"},
		{[]string{"serve", "extra"}, `takes no argument "extra"`},
		{[]string{"migrate", "now"}, `takes no argument "now"`},
		{[]string{"user", "create", "--email", "a@example.com", "--password", "twelve chars!"}, "--role is required"},
		{[]string{"user", "delete"}, `unknown command "user delete"; the user commands are: user create`},
		{[]string{"help", "user", "delete"}, `unknown command "user delete"; the user commands are: user create`},
		{[]string{"apikey", "revoke", "--name", "x"}, `unknown command "apikey revoke"; the apikey commands are: apikey create`},
		{[]string{"apikey", "--name", "x"}, `unknown command "apikey --name"; the apikey commands are: apikey create`},
	} {
		if err := run(context.Background(), tt.args, environ, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("paygate %v = %v, want %q", tt.args, err, tt.want)
		}
	}
	if _, err := os.Stat(database); !os.IsNotExist(err) {
		t.Errorf("a refused command touched the database: %v", err)
	}
}

// TestStartsThatFailSayWhatToDo: a taken address is named with what to do; a production start
// with no users says how to make the first admin.
func TestStartsThatFailSayWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	database := filepath.Join(dir, "paygate.db")
	err = run(context.Background(), nil, []string{"PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + database, "PAYGATE_ADDR=" + taken.Addr().String()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is in use") || !strings.Contains(err.Error(), "PAYGATE_ADDR") {
		t.Errorf("a start on a taken address = %v", err)
	}
	if _, err := os.Stat(database); !os.IsNotExist(err) {
		t.Errorf("a start on a taken address made the database: %v", err)
	}
	_, logs, stop := startRun(t, append(productionEnviron(dir), "PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe,sandbox:adyen,sandbox:checkout"))
	if err := stop(); err != nil {
		t.Errorf("stop = %v", err)
	}
	if !strings.Contains(logs.String(), "paygate user create --email you@example.com") {
		t.Errorf("a production start with no users does not say how to make one:\n%s", logs.String())
	}
}

func TestProductionRefusesToStartWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_DATA_DIR=" + dir, "DATABASE_URL=sqlite://" + filepath.Join(dir, "p.db"), "PAYGATE_ADDR=127.0.0.1:0"}
	err := run(context.Background(), nil, environ, io.Discard, io.Discard)
	if err == nil || strings.Count(err.Error(), "openssl rand -hex 32") != 3 {
		t.Errorf("production start without secrets = %v, want all three named at once, each with a way to make it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.db")); !os.IsNotExist(err) {
		t.Errorf("a refused production start made the database: %v", err)
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

// productionEnviron is a production start's environment over a database in dir, with every secret.
func productionEnviron(dir string) []string {
	secret := strings.Repeat("s", 32)
	return []string{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_DATA_DIR=" + dir,
		"DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"),
		"PAYGATE_JWT_SECRET=" + secret, "PAYGATE_CARD_FINGERPRINT_KEY=" + secret, "PAYGATE_API_KEY_SECRET=" + secret}
}

// TestProductionStartRefusesProvidersNotReady: production refuses to start, before it touches the
// database, with a provider on its built-in sandbox or a real one without its webhook secret,
// naming each and the value of PAYGATE_PRODUCTION_ALLOWS that allows it; named there, each is
// allowed, and the start warns of it. An allowance written wrong is refused, named.
func TestProductionStartRefusesProvidersNotReady(t *testing.T) {
	stripeAPI := httptest.NewServer(http.NotFoundHandler()) // nothing is asked of it at start
	t.Cleanup(stripeAPI.Close)
	realStripe := []string{"PAYGATE_STRIPE_BASE_URL=" + stripeAPI.URL, "PAYGATE_STRIPE_API_KEY=sk_live_test"}
	for _, tt := range []struct {
		name    string
		environ []string
		wants   []string
	}{
		{"on the sandboxes", nil, []string{
			"stripe is served by its built-in sandbox", "adyen is served by its built-in sandbox", "checkout is served by its built-in sandbox",
			"PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe,sandbox:adyen,sandbox:checkout",
		}},
		{"a real provider without its webhook secret", append(realStripe, "PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:checkout"), []string{
			"every webhook from stripe would be refused", "set PAYGATE_STRIPE_WEBHOOK_SECRET",
			"PAYGATE_PRODUCTION_ALLOWS=sandbox:adyen,sandbox:checkout,no-webhooks:stripe",
		}},
		{"an unknown provider", []string{"PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe,sandbox:paypal"}, []string{
			`PAYGATE_PRODUCTION_ALLOWS: "sandbox:paypal" names no provider`,
		}},
		{"an unknown allowance", []string{"PAYGATE_PRODUCTION_ALLOWS=unsigned-webhooks:stripe"}, []string{
			`PAYGATE_PRODUCTION_ALLOWS: "unsigned-webhooks:stripe" is not an allowance`,
		}},
	} {
		dir := t.TempDir()
		err := run(context.Background(), nil, append(append(productionEnviron(dir), "PAYGATE_ADDR=127.0.0.1:0"), tt.environ...), io.Discard, io.Discard)
		for _, want := range tt.wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: start = %v, want it to say %q", tt.name, err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "paygate.db")); !os.IsNotExist(err) {
			t.Errorf("%s: a refused production start made the database: %v", tt.name, err)
		}
	}

	environ := append(append(productionEnviron(t.TempDir()), realStripe...), "PAYGATE_PRODUCTION_ALLOWS=no-webhooks:stripe,sandbox:adyen,sandbox:checkout")
	baseURL, logs, stop := startRun(t, environ)
	if status, body := getStatus(t, baseURL+"/readyz"); status != http.StatusOK {
		t.Errorf("readyz = %d %s", status, body)
	}
	if err := stop(); err != nil {
		t.Errorf("stop = %v", err)
	}
	for _, want := range []string{`"msg":"a provider is served by its built-in sandbox, as PAYGATE_PRODUCTION_ALLOWS allows`, `"provider":"adyen"`, `"provider":"checkout"`,
		`"msg":"webhooks from this provider are refused until it is configured for them","provider":"stripe"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("an allowed production start does not warn %s:\n%s", want, logs.String())
		}
	}
}

// TestDebugAddrServesProfilesOnItsOwnListener: PAYGATE_DEBUG_ADDR serves pprof on that address
// until the server stops, and the public port never serves it.
func TestDebugAddrServesProfilesOnItsOwnListener(t *testing.T) {
	dir := t.TempDir()
	debugAddr := freeLoopbackAddr(t)
	baseURL, _, stop := startRun(t, []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"),
		"DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"), "PAYGATE_DEBUG_ADDR=" + debugAddr})

	if status, body := getStatus(t, "http://"+debugAddr+"/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ on the debug address = %d %.200s", status, body)
	}
	if status, body := getStatus(t, baseURL+"/debug/pprof/"); status != http.StatusNotFound || !strings.Contains(body, "no route GET /debug/pprof/") {
		t.Errorf("GET /debug/pprof/ on the public port = %d %.200s, want Paygate's 404", status, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop = %v", err)
	}
	if resp, err := http.Get("http://" + debugAddr + "/debug/pprof/"); err == nil {
		resp.Body.Close()
		t.Errorf("the debug address still answers after the stop: %d", resp.StatusCode)
	}
}

// TestDebugAddrNotOnLoopbackIsRefusedUntouched: a debug address others could reach stops the
// start before the database is made.
func TestDebugAddrNotOnLoopbackIsRefusedUntouched(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PAYGATE_DATA_DIR=" + filepath.Join(dir, "data"), "DATABASE_URL=sqlite://" + filepath.Join(dir, "paygate.db"),
		"PAYGATE_ADDR=127.0.0.1:0", "PAYGATE_DEBUG_ADDR=0.0.0.0:6060"}
	err := run(context.Background(), nil, environ, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PAYGATE_DEBUG_ADDR") {
		t.Fatalf("run = %v, want an error naming PAYGATE_DEBUG_ADDR", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "paygate.db")); !os.IsNotExist(statErr) {
		t.Errorf("the refused start made the database: %v", statErr)
	}
}

// freeLoopbackAddr is a port of 127.0.0.1 no one listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	return listener.Addr().String()
}
