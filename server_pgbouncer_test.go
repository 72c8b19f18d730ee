package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// TestServesThroughPgBouncerInTransactionMode runs a server whose DATABASE_URL goes through
// PgBouncer in transaction mode, where a server connection serves one transaction of a client
// and then another client's, so that statements prepared on it are not the client's to find
// again (Debian's PgBouncer 1.18 keeps none). With pgx's default_query_exec_mode=exec, which
// prepares nothing by name, every kind of statement Paygate sends works: keyed creates and their
// replay, the batches a create writes its rows with, reads by id and pages, a refund, and
// GraphQL. Its migrations are applied directly (paygate migrate), as they must be; the server
// then finds nothing to apply and takes no lock. It needs pgbouncer; without it the test is
// skipped, unless PAYGATE_TEST_REQUIRE_PGBOUNCER is set.
func TestServesThroughPgBouncerInTransactionMode(t *testing.T) {
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PAYGATE_TEST_DATABASE_URL is not set")
	}
	pgbouncer, err := exec.LookPath("pgbouncer")
	if err != nil {
		if os.Getenv("PAYGATE_TEST_REQUIRE_PGBOUNCER") != "" {
			t.Fatal("pgbouncer is not installed (Debian package pgbouncer)")
		}
		t.Skip("pgbouncer is not installed (Debian package pgbouncer)")
	}
	direct, name := freshDatabase(t, base)
	through := startPgBouncer(t, pgbouncer, direct, name)

	if err := run(context.Background(), []string{"migrate"}, []string{"DATABASE_URL=" + direct.String()}, io.Discard, io.Discard); err != nil {
		t.Fatalf("paygate migrate on PostgreSQL itself: %v", err)
	}
	server, logs, _ := startRun(t, []string{
		"DATABASE_URL=" + through + "&default_query_exec_mode=exec", "PAYGATE_DATA_DIR=" + t.TempDir(),
		"PAYGATE_ADMIN_EMAIL=pool@example.com", "PAYGATE_ADMIN_PASSWORD=a long pooled password",
	})
	token := drillLogin(t, server, "pool@example.com", "a long pooled password")
	card := map[string]any{"number": provider.ApprovedCard, "exp_month": 12, "exp_year": time.Now().Year() + 2, "cvc": "123"}
	create := map[string]any{"amount": "42.50", "currency": "EUR", "payment_method": "credit_card",
		"customer": map[string]any{"email": "pooled@example.com", "name": "Pooled"}, "card": card}

	// Each call in turn, many times, so that each runs on server connections that others used.
	var paymentIDs []string
	for i := range 20 {
		key := fmt.Sprintf("pooled-%d", i)
		status, made := apiCall(t, http.MethodPost, server+"/api/v1/payments", token, key, create)
		if status != http.StatusCreated || made["status"] != "succeeded" {
			t.Fatalf("create %d answered %d %v\n%s", i, status, made, complaints(logs.String()))
		}
		if status, replayed := apiCall(t, http.MethodPost, server+"/api/v1/payments", token, key, create); status != http.StatusCreated || replayed["id"] != made["id"] {
			t.Errorf("the key %s sent again answered %d %v; want payment %v", key, status, replayed, made["id"])
		}
		id := made["id"].(string)
		if status, read := apiCall(t, http.MethodGet, server+"/api/v1/payments/"+id, token, "", nil); status != http.StatusOK || read["amount"] != 42.5 {
			t.Errorf("payment %s read %d %v", id, status, read)
		}
		paymentIDs = append(paymentIDs, id)
	}
	if status, refund := apiCall(t, http.MethodPost, server+"/api/v1/payments/"+paymentIDs[0]+"/refunds", token, "pooled-refund",
		map[string]any{"amount": "2.50"}); status != http.StatusCreated && status != http.StatusOK || refund["id"] == nil {
		t.Errorf("a refund answered %d %v", status, refund)
	}
	req, _ := http.NewRequest(http.MethodGet, server+"/api/v1/payments?limit=5", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data    []map[string]any `json:"data"`
		HasMore bool             `json:"has_more"`
	}
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(page.Data) != 5 || !page.HasMore {
		t.Errorf("a page of 5 answered %d: %d payments, has_more %v (%v)", resp.StatusCode, len(page.Data), page.HasMore, err)
	}
	status, answer := apiCall(t, http.MethodPost, server+"/query", token, "", map[string]any{
		"query": `mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id status } }`,
		"variables": map[string]any{"input": map[string]any{"amount": "7.00", "currency": "EUR", "paymentMethod": "CREDIT_CARD",
			"customer": map[string]any{"email": "pooled@example.com", "name": "Pooled"},
			"card":     map[string]any{"number": provider.ApprovedCard, "expMonth": 12, "expYear": time.Now().Year() + 2, "cvc": "123"}}},
	})
	if status != http.StatusOK || !strings.Contains(fmt.Sprint(answer), "SUCCEEDED") {
		t.Errorf("a GraphQL create answered %d %v", status, answer)
	}
	if strings.Contains(logs.String(), "prepared statement") || strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("the server complained:\n%s", complaints(logs.String()))
	}
}

// freshDatabase creates a database of base's server for the test alone, dropped when it ends, and
// returns its URL and name: PgBouncer passes on no search_path, so the test's tables cannot be
// told apart by schema.
func freshDatabase(t *testing.T, base string) (*url.URL, string) {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	suffix := make([]byte, 6)
	rand.Read(suffix)
	name := "paygate_pooled_" + hex.EncodeToString(suffix)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u, name
}

// startPgBouncer starts PgBouncer in transaction mode on a free loopback port, in front of the
// database name at direct, as the postgres user when run as root (PgBouncer refuses root), and
// returns the URL that reaches the database through it.
func startPgBouncer(t *testing.T, pgbouncer string, direct *url.URL, name string) string {
	t.Helper()
	dir := postgresUserDir(t)
	_, port, _ := net.SplitHostPort(freeLoopbackAddr(t))
	host, serverPort, _ := net.SplitHostPort(direct.Host)
	config := filepath.Join(dir, "pgbouncer.ini")
	users := filepath.Join(dir, "users.txt")
	writeFile(t, users, fmt.Sprintf("%q \"\"\n", direct.User.Username()))
	writeFile(t, config, fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 10
`, name, host, serverPort, name, port, users))
	args := []string{pgbouncer, config}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	// Its own process group, so that PgBouncer under runuser stops with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	})
	through := *direct
	through.Host = net.JoinHostPort("127.0.0.1", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.Dial("tcp", through.Host)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen on %s:\n%s", through.Host, output.String())
		}
	}
	return through.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// apiCall sends body (none when nil) as JSON, with an Idempotency-Key when key is not empty, and
// returns the answer's status and data (GraphQL's whole answer, which has no envelope).
func apiCall(t *testing.T, method, url, token, key string, body any) (int, map[string]any) {
	t.Helper()
	var sent io.Reader
	if body != nil {
		encoded, _ := json.Marshal(body)
		sent = bytes.NewReader(encoded)
	}
	req, _ := http.NewRequest(method, url, sent)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("%s %s answered %d, not JSON: %v", method, url, resp.StatusCode, err)
	}
	if data, ok := answer["data"].(map[string]any); ok && answer["success"] == true {
		return resp.StatusCode, data
	}
	return resp.StatusCode, answer
}
