package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider/stripe"
)

// TestBareHandlerUnderLoad runs the driver against the bare handler, charging through Stripe's
// sandbox, briefly on each database: every answer is right, each payment was charged once, and
// the report names every run.
func TestBareHandlerUnderLoad(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		stripeSandbox := httptest.NewServer(stripe.Registration.NewSandbox(db.Ent, stripe.Registration.SandboxSettings(nil), time.Now, ""))
		defer stripeSandbox.Close()
		server := httptest.NewServer(Bare(db.SQL, db.Dialect, stripeSandbox.URL))
		defer server.Close()
		cfg := Config{Concurrency: 4, Duration: 200 * time.Millisecond, Keyed: true, Client: server.Client()}
		var beforeReads []int // the payments made by then, once for each call
		cfg.BeforeReads = func(ctx context.Context) error {
			var made int
			err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM payments`).Scan(&made)
			beforeReads = append(beforeReads, made)
			return err
		}
		// The handler serves in this process, which the CPU time measured includes.
		results, err := Compare(context.Background(), cfg, []Target{{Surface: SurfaceBare, BaseURL: server.URL, PID: os.Getpid()}}, []string{"create", "get", "list"}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(beforeReads) != 1 || beforeReads[0] == 0 {
			t.Errorf("BeforeReads found %v payments made, want one call after the creates", beforeReads)
		}
		if len(results) != 3 {
			t.Fatalf("%d results, want 3", len(results))
		}
		for _, r := range results {
			if r.Requests == 0 || r.Errors != 0 || r.PerSecond <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.CPU <= 0 {
				t.Errorf("%s: %+v", r.Operation, r)
			}
			if len(r.RoundRates) != 2 || r.RoundRates[0] <= 0 || r.RoundRates[1] <= 0 {
				t.Errorf("%s: throughput by round %v, want both rounds'", r.Operation, r.RoundRates)
			}
		}
		var keys, payments, charged, charges int
		db.SQL.QueryRow(`SELECT COUNT(*) FROM idempotency_keys WHERE settled_at IS NOT NULL`).Scan(&keys)
		db.SQL.QueryRow(`SELECT COUNT(*) FROM payments WHERE status = 'failed' AND failure_code = 'load_test'`).Scan(&payments)
		db.SQL.QueryRow(`SELECT COUNT(*) FROM payments WHERE provider_payment_id LIKE 'pi_%'`).Scan(&charged)
		db.SQL.QueryRow(`SELECT COUNT(*) FROM sandbox_objects WHERE kind = 'charge'`).Scan(&charges)
		if created := len(results[0].Created); keys < created || payments < created || charged != payments || charges != payments {
			t.Errorf("%d payments answered, %d recorded, %d keys settled, %d charged, %d charges at Stripe", created, payments, keys, charged, charges)
		}
		var report bytes.Buffer
		Report(&report, results)
		for _, op := range []string{"create", "get", "list"} {
			if !strings.Contains(report.String(), op+" ") {
				t.Errorf("the report has no %s run:\n%s", op, report.String())
			}
		}
		for _, line := range strings.Split(report.String(), "\n")[1:] {
			if fields := strings.Fields(line); len(fields) > 5 {
				if cpu, err := time.ParseDuration(fields[5]); err != nil || cpu <= 0 {
					t.Errorf("the report gives no CPU time per request: %q", line)
				}
			}
		}
	})
}

// TestReportComparesEachRound: beside the merged ratios, the report gives the spread of each
// round's ratio, and leaves it out where there was one round or the rounds do not pair up.
func TestReportComparesEachRound(t *testing.T) {
	result := func(surface Surface, rates ...float64) Result {
		return Result{Surface: surface, Operation: Get, Requests: 1, PerSecond: rates[0], P50: time.Millisecond, P99: time.Millisecond, RoundRates: rates}
	}
	for _, c := range []struct {
		name    string
		results []Result
		want    []string
		notWant string
	}{{
		name: "three rounds",
		results: []Result{result(SurfaceBare, 1000, 1000, 2000), result(SurfaceREST, 900, 800, 1900),
			result(SurfaceGraphQL, 900, 400, 1900)},
		want: []string{"(by round 0.80-0.95, median 0.90), p99", "rest (by round 0.50-1.00, median 1.00)"},
	}, {
		name:    "four rounds: the median of the middle two",
		results: []Result{result(SurfaceBare, 100, 100, 100, 100), result(SurfaceREST, 80, 90, 100, 85)},
		want:    []string{"(by round 0.80-1.00, median 0.88)"},
	}, {
		name:    "one round",
		results: []Result{result(SurfaceBare, 100), result(SurfaceREST, 80)},
		notWant: "by round",
	}, {
		name:    "rounds that do not pair up",
		results: []Result{result(SurfaceBare, 100, 100), result(SurfaceREST, 80, 90, 100)},
		notWant: "by round",
	}} {
		var report bytes.Buffer
		Report(&report, c.results)
		for _, want := range c.want {
			if !strings.Contains(report.String(), want) {
				t.Errorf("%s: the report has no %q:\n%s", c.name, want, report.String())
			}
		}
		if c.notWant != "" && strings.Contains(report.String(), c.notWant) {
			t.Errorf("%s: the report has %q:\n%s", c.name, c.notWant, report.String())
		}
	}
}

func TestRunRefusesGetWithoutPayments(t *testing.T) {
	_, err := Run(context.Background(), Config{Concurrency: 1, Duration: time.Millisecond, Client: http.DefaultClient}, Target{Surface: SurfaceBare}, Get, nil)
	if err == nil {
		t.Error("a get run without ids ran")
	}
	if _, err := Compare(context.Background(), Config{Concurrency: 1, Duration: time.Millisecond}, nil, []string{"delete"}, 1); err == nil {
		t.Error("an unknown operation ran")
	}
}

func TestResidentMemory(t *testing.T) {
	now, peak, err := ResidentMemory(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if now <= 0 || peak < now {
		t.Errorf("resident memory %d, peak %d", now, peak)
	}
}

// TestProcessCPU: the CPU time a process has spent grows while it works.
func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	// Work until the clock ticks (100 a second) count it, for at most five seconds.
	work := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		for i := range 1_000_000 {
			work ^= i
		}
		if after, err := ProcessCPU(os.Getpid()); err != nil || after > before {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Errorf("5 s of work (%d) and the CPU time is still %s", work, before)
}

// TestLoginFloodComesFromItsAddresses: the flood comes from its address and each real login from
// one of its own, as the server's throttles see them, and the result counts what each got.
func TestLoginFloodComesFromItsAddresses(t *testing.T) {
	var mu sync.Mutex
	realFrom, floodFrom := map[string]int{}, map[string]int{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Email string }
		json.NewDecoder(r.Body).Decode(&body)
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		defer mu.Unlock()
		if body.Email == "real@example.com" {
			realFrom[host]++
			return
		}
		floodFrom[host]++
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer server.Close()
	real := []string{"127.0.0.10", "127.0.0.11", "127.0.0.12", "127.0.0.13"}
	result, err := LoginFlood{BaseURL: server.URL, Email: "real@example.com", Password: "p", Workers: 2, Duration: 200 * time.Millisecond,
		FloodFrom: "127.0.0.1", RealFrom: real}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Idle) != 2 || len(result.Flooded) != 2 || len(result.FloodedLogins) != 2 || result.FloodedLogins[0].Began <= 0 ||
		result.FloodedLogins[1].Began < result.FloodedLogins[0].Began+result.FloodedLogins[0].Took ||
		result.FloodRequests == 0 || result.FloodAnswers[http.StatusTooManyRequests] != result.FloodRequests {
		t.Errorf("result = %+v", result)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, addr := range real {
		if realFrom[addr] != 1 {
			t.Errorf("real logins by address = %v, want one from each of %v", realFrom, real)
			break
		}
	}
	if len(floodFrom) != 1 || floodFrom["127.0.0.1"] < result.FloodRequests {
		t.Errorf("the flood came from %v", floodFrom)
	}
	var report bytes.Buffer
	ReportLogins(&report, result)
	if !strings.Contains(report.String(), "x alone") || !strings.Contains(report.String(), "by when it began in the flood: ") || !strings.Contains(report.String(), "× 429") {
		t.Errorf("report:\n%s", report.String())
	}
}
