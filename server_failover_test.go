package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// TestServersRideAPrimaryFailover is the failover drill: two servers take keyed payments from
// clients that retry each key until it is answered, on a PostgreSQL cluster under Patroni
// (deploy/ha/cluster), which loses its primary twice mid-run: first its postmaster, killed by
// SIGKILL, which Patroni restarts in place; then the whole node, Patroni and postmaster killed,
// so that the standby is promoted. No acknowledged payment is lost or changed, no key is answered
// with a second payment, no request is answered 500, /readyz says the database is gone while it
// is, and writes are refused for at most 30 seconds each time. It needs patroni and etcd (Debian's
// patroni and etcd-server), and runs when PAYGATE_TEST_HA is set.
func TestServersRideAPrimaryFailover(t *testing.T) {
	if os.Getenv("PAYGATE_TEST_HA") == "" {
		t.Skip("set PAYGATE_TEST_HA=1 to run the failover drill on a Patroni cluster (deploy/ha/cluster)")
	}
	dir := postgresUserDir(t)
	databaseURL := clusterUp(t, dir)
	dataDir := t.TempDir()
	environ := []string{
		"DATABASE_URL=" + databaseURL, "PAYGATE_DATA_DIR=" + dataDir,
		"PAYGATE_ADMIN_EMAIL=drill@example.com", "PAYGATE_ADMIN_PASSWORD=a long drill password",
	}
	first, firstLogs, _ := startRun(t, environ)
	second, secondLogs, _ := startRun(t, environ)
	servers := []string{first, second}
	token := drillLogin(t, first, "drill@example.com", "a long drill password")
	drillRaiseRateLimits(t, first, token)

	d := &drill{t: t, servers: servers, token: token, keys: map[string]*drillKey{}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var load sync.WaitGroup
	const clients = 8
	for c := range clients {
		load.Go(func() { d.client(ctx, c) })
	}
	var watch sync.WaitGroup
	watch.Go(func() { d.watchReadiness(ctx) })

	for _, loss := range []struct {
		name string
		// kill names the processes to kill, by the cluster's commands that print them.
		kill []string
	}{
		{"the primary's postmaster, restarted in place by Patroni", []string{"primary"}},
		{"the primary's node (Patroni, then its postmaster), the standby promoted", []string{"patroni", "primary"}},
	} {
		// Each loss finds the cluster whole: the standby synchronous again after the last one,
		// so that what was acknowledged is on both nodes.
		clusterCommand(t, "synchronous", dir)
		time.Sleep(3 * time.Second)
		var pids []string
		for _, command := range loss.kill {
			pids = append(pids, clusterCommand(t, command, dir))
		}
		d.readyAgain()
		killedAt := time.Now()
		for _, pid := range pids {
			if err := exec.Command("kill", "-KILL", pid).Run(); err != nil {
				t.Fatalf("killing process %s: %v", pid, err)
			}
		}
		t.Logf("killed %s: processes %v", loss.name, pids)
		// The load goes on until writes have been taken again for 5 seconds after a pause of a
		// second or more, or 60 seconds at most.
		deadline := killedAt.Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if pause, resumed := d.longestWithoutAck(killedAt.Add(-time.Second)); pause > time.Second && time.Since(resumed) > 5*time.Second {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		refused, _ := d.longestWithoutAck(killedAt.Add(-time.Second))
		t.Logf("%s: writes refused for at most %v; answers by second from the kill:\n%s",
			loss.name, refused.Round(10*time.Millisecond), d.timeline(killedAt))
		if refused > 30*time.Second {
			t.Errorf("%s: writes were refused for %v; the bound is 30 s", loss.name, refused)
		}
		if !d.sawNotReady() {
			t.Errorf("%s: /readyz never said the database was gone", loss.name)
		}
	}
	stop()
	load.Wait()
	watch.Wait()

	t.Logf("%d keys acknowledged, %d answered 202", d.acknowledged(), d.processing())
	for _, server := range servers {
		if status, body := getStatus(t, server+"/readyz"); status != http.StatusOK {
			t.Errorf("%s/readyz after the failovers = %d %s", server, status, body)
		}
	}
	d.checkKeys()
	if t.Failed() {
		t.Logf("first server:\n%s\nsecond server:\n%s", complaints(firstLogs.String()), complaints(secondLogs.String()))
	}
	for _, logs := range []string{firstLogs.String(), secondLogs.String()} {
		if strings.Contains(logs, provider.ApprovedCard) {
			t.Error("a card number was logged")
		}
	}
}

// postgresUserDir returns a directory that the postgres user can write (the cluster's nodes and
// PgBouncer run as that user when the tests run as root), removed when the test ends.
func postgresUserDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "paygate-ha-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		postgres, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, the cluster runs as the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(postgres.Uid)
		gid, _ := strconv.Atoi(postgres.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// clusterUp stands the cluster up under dir, to be taken down when the test ends, and returns its
// DATABASE_URL.
func clusterUp(t *testing.T, dir string) string {
	t.Helper()
	t.Cleanup(func() {
		if out, err := exec.Command(filepath.Join("deploy", "ha", "cluster"), "down", dir).CombinedOutput(); err != nil {
			t.Errorf("taking the cluster down: %v\n%s", err, out)
		}
	})
	out := clusterCommand(t, "up", dir)
	for _, line := range strings.Split(out, "\n") {
		if url, ok := strings.CutPrefix(line, "DATABASE_URL="); ok {
			return url
		}
	}
	t.Fatalf("deploy/ha/cluster up printed no DATABASE_URL:\n%s", out)
	return ""
}

// clusterCommand runs deploy/ha/cluster and returns the last line it printed.
func clusterCommand(t *testing.T, command, dir string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join("deploy", "ha", "cluster"), command, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		logs, _ := exec.Command("sh", "-c", "tail -n 20 "+dir+"/*.log").CombinedOutput()
		t.Fatalf("deploy/ha/cluster %s: %v\n%s\n%s", command, err, stderr.String(), logs)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func drillLogin(t *testing.T, server, email, password string) string {
	t.Helper()
	status, login := apiCall(t, http.MethodPost, server+"/api/v1/auth/login", "", "", map[string]any{"email": email, "password": password})
	token, _ := login["access_token"].(string)
	if status != http.StatusOK || token == "" {
		t.Fatalf("logging in answered %d %v", status, login)
	}
	return token
}

// drillRaiseRateLimits lifts the rate limits out of the load's way.
func drillRaiseRateLimits(t *testing.T, server, token string) {
	t.Helper()
	status, config := apiCall(t, http.MethodGet, server+"/api/v1/admin/config", token, "", nil)
	if status != http.StatusOK {
		t.Fatalf("reading the configuration answered %d %v", status, config)
	}
	limits := config["rate_limits"].(map[string]any)
	limits["per_second"], limits["burst"] = 100000, 100000
	if status, answer := apiCall(t, http.MethodPut, server+"/api/v1/admin/config", token, "", config); status != http.StatusOK {
		t.Fatalf("raising the rate limits answered %d %v", status, answer)
	}
}

// drill is the load of the failover drill and what it saw.
type drill struct {
	t       *testing.T
	servers []string
	token   string

	mu sync.Mutex
	// keys are the keys sent, each with every payment id it was answered with.
	keys map[string]*drillKey
	// answers are the sends' answers: when, and their status (0: no answer).
	answers  []drillAnswer
	notReady bool
}

type drillAnswer struct {
	at     time.Time
	status int
}

// drillKey is what one idempotency key was sent and answered.
type drillKey struct {
	amount string
	body   []byte
	ids    []string
	status string
}

// client sends keyed payments, each retried with its key, on either server, until acknowledged
// or the drill ends.
func (d *drill) client(ctx context.Context, c int) {
	// As long as the server's write timeout: a request that waits out the failover for its
	// commit's outcome is answered within it.
	client := &http.Client{Timeout: 30 * time.Second}
	for n := 0; ctx.Err() == nil; n++ {
		key := fmt.Sprintf("drill-%d-%d", c, n)
		amount := fmt.Sprintf("%d.%02d", 10+c, n%100)
		body, _ := json.Marshal(map[string]any{
			"amount": amount, "currency": "EUR", "payment_method": "credit_card",
			"customer": map[string]any{"email": "drill@example.com", "name": "Drill"},
			"card":     map[string]any{"number": provider.ApprovedCard, "exp_month": 12, "exp_year": time.Now().Year() + 2, "cvc": "123"},
		})
		d.mu.Lock()
		d.keys[key] = &drillKey{amount: amount, body: body}
		d.mu.Unlock()
		for attempt := 0; ctx.Err() == nil; attempt++ {
			id, status, ok := d.create(client, d.servers[(c+attempt)%len(d.servers)], key, body)
			if id != "" {
				d.mu.Lock()
				k := d.keys[key]
				k.ids = append(k.ids, id)
				k.status = status
				d.mu.Unlock()
			}
			if ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// create sends one keyed create and returns the payment it was answered with, if any, and whether
// it was acknowledged (201, or 202 for a payment whose outcome is yet unknown).
func (d *drill) create(client *http.Client, server, key string, body []byte) (id, status string, acknowledged bool) {
	req, _ := http.NewRequest(http.MethodPost, server+"/api/v1/payments", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		d.answered(0)
		return "", "", false
	}
	defer resp.Body.Close()
	d.answered(resp.StatusCode)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		d.t.Errorf("a create answered 503 without Retry-After (key %s)", key)
	}
	var answer struct {
		Data struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	acknowledged = acknowledges(resp.StatusCode)
	if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusBadGateway {
		d.t.Errorf("a create answered %d during the drill (key %s)", resp.StatusCode, key)
	}
	return answer.Data.ID, answer.Data.Status, acknowledged
}

func (d *drill) answered(status int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers = append(d.answers, drillAnswer{time.Now(), status})
}

// timeline counts the creates' answers by status in each second from 2 s before since until
// the last answer, one line a second ("+3s 201:12 503:40").
func (d *drill) timeline(since time.Time) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	perSecond := map[int]map[int]int{}
	last := -2
	for _, a := range d.answers {
		second := int(math.Floor(a.at.Sub(since).Seconds()))
		if second < -2 {
			continue
		}
		if perSecond[second] == nil {
			perSecond[second] = map[int]int{}
		}
		perSecond[second][a.status]++
		last = max(last, second)
	}
	var b strings.Builder
	for second := -2; second <= last; second++ {
		fmt.Fprintf(&b, "%+ds", second)
		statuses := slices.Sorted(maps.Keys(perSecond[second]))
		for _, status := range statuses {
			name := strconv.Itoa(status)
			if status == 0 {
				name = "no answer"
			}
			fmt.Fprintf(&b, " %s:%d", name, perSecond[second][status])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readyAgain forgets that /readyz said the database was gone, for the next loss.
func (d *drill) readyAgain() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.notReady = false
}

// watchReadiness polls both servers' /readyz until the drill ends, noting whether either said
// it was not ready.
func (d *drill) watchReadiness(ctx context.Context) {
	client := &http.Client{Timeout: 2 * time.Second}
	for ctx.Err() == nil {
		for _, server := range d.servers {
			resp, err := client.Get(server + "/readyz")
			if err != nil {
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				d.mu.Lock()
				d.notReady = true
				d.mu.Unlock()
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (d *drill) sawNotReady() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.notReady
}

// longestWithoutAck is the longest time from since to now in which no key was acknowledged, and
// when it ended (now, if it has not).
func (d *drill) longestWithoutAck(since time.Time) (longest time.Duration, ended time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	acks := d.acks()
	last := since
	for _, ack := range append(acks, time.Now()) {
		if ack.Before(since) {
			continue
		}
		if ack.Sub(last) > longest {
			longest, ended = ack.Sub(last), ack
		}
		last = ack
	}
	return longest, ended
}

func (d *drill) acknowledged() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.acks())
}

// acks are when creates were acknowledged, in order; d.mu is held.
func (d *drill) acks() []time.Time {
	var acks []time.Time
	for _, a := range d.answers {
		if acknowledges(a.status) {
			acks = append(acks, a.at)
		}
	}
	slices.SortFunc(acks, time.Time.Compare)
	return acks
}

// acknowledges tells the statuses that acknowledge a create: 201, or 202 for a payment whose
// outcome is yet unknown (200 for a replay).
func acknowledges(status int) bool {
	return status == http.StatusCreated || status == http.StatusAccepted || status == http.StatusOK
}

func (d *drill) processing() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, k := range d.keys {
		if k.status == "processing" {
			n++
		}
	}
	return n
}

// checkKeys checks, after the drill, that every key was answered with one payment alone, that a
// key sent again is answered with it, and that each acknowledged payment reads back as it was
// created, its amount unchanged: eight keys at a time, as the load was sent.
func (d *drill) checkKeys() {
	keys := make(chan string)
	var checkers sync.WaitGroup
	for range 8 {
		checkers.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for key := range keys {
				d.checkKey(client, key, d.keys[key])
			}
		})
	}
	for key, k := range d.keys {
		if len(k.ids) > 0 {
			keys <- key
		}
	}
	close(keys)
	checkers.Wait()
}

// checkKey is checkKeys' check of one key, from any goroutine.
func (d *drill) checkKey(client *http.Client, key string, k *drillKey) {
	t := d.t
	if ids := slices.Compact(slices.Clone(k.ids)); len(ids) != 1 {
		t.Errorf("key %s was answered with payments %v", key, ids)
		return
	}
	id, _, ok := d.create(client, d.servers[0], key, k.body)
	// A key answered 202 whose settling failed too waits for reconciliation, its retries told to
	// wait (409) meanwhile; the payment is read back below all the same.
	waits := !ok && id == "" && k.status == "processing"
	if !waits && (!ok || id != k.ids[0]) {
		t.Errorf("key %s sent again after the drill: payment %q (acknowledged: %v); want %s", key, id, ok, k.ids[0])
	}
	req, _ := http.NewRequest(http.MethodGet, d.servers[1]+"/api/v1/payments/"+k.ids[0], nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("reading payment %s of key %s: %v", k.ids[0], key, err)
		return
	}
	var answer struct {
		Data struct {
			ID       string      `json:"id"`
			Amount   json.Number `json:"amount"`
			Currency string      `json:"currency"`
		} `json:"data"`
	}
	decoder := json.NewDecoder(resp.Body)
	decoder.UseNumber()
	err = decoder.Decode(&answer)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || answer.Data.Amount.String() != k.amount || answer.Data.Currency != "EUR" {
		t.Errorf("payment %s of key %s reads %d %+v (%v); want %s EUR", k.ids[0], key, resp.StatusCode, answer.Data, err, k.amount)
	}
}

// complaints are the lines of logs that tell of an error (the first 50) and the last 20 that warn.
func complaints(logs string) string {
	var errorLines, warnings []string
	for line := range strings.Lines(logs) {
		switch {
		case strings.Contains(line, `"level":"ERROR"`):
			errorLines = append(errorLines, line)
		case strings.Contains(line, `"level":"WARN"`):
			warnings = append(warnings, line)
		}
	}
	return strings.Join(errorLines[:min(50, len(errorLines))], "") + strings.Join(warnings[max(0, len(warnings)-20):], "")
}
