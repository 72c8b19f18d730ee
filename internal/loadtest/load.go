package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// Surface is how a target is spoken to.
type Surface string

const (
	SurfaceBare    Surface = "bare"
	SurfaceREST    Surface = "rest"
	SurfaceGraphQL Surface = "graphql"
)

// Operation is what a run asks, over and over.
type Operation string

const (
	Create Operation = "create"
	Get    Operation = "get"
	List   Operation = "list"
)

// Target is a server under load.
type Target struct {
	Surface Surface
	BaseURL string
	// Token is sent as a bearer token (Paygate's surfaces); the bare handler takes none.
	Token string
	// PID, when not 0, is the serving process, whose CPU time per request the report gives
	// (Linux): where throughput differs, it tells whether the server's own work is why.
	PID int
}

// Config shapes a run.
type Config struct {
	Concurrency int
	Duration    time.Duration
	// Keyed sends every create with a new Idempotency-Key.
	Keyed  bool
	Client *http.Client
	// BeforeReads, when set, runs after the creates and before the first get or list: the
	// database's statistics brought up to date, as a table in service has them, rather than
	// those of the empty table the creates began on.
	BeforeReads func(ctx context.Context) error
}

// Result is what one run measured.
type Result struct {
	Surface    Surface
	Operation  Operation
	Requests   int
	Errors     int
	FirstError string
	PerSecond  float64
	P50, P99   time.Duration
	// CPU is the CPU time the target's process (Target.PID) spent during the run; 0 if unknown.
	CPU time.Duration
	// Created holds the ids of the payments a create run made, for the get runs to read.
	Created []string
	// RoundRates is the throughput of each round that was merged into this result, in order.
	RoundRates []float64

	latencies []time.Duration
	elapsed   time.Duration
}

// merge adds another run of the same operation against the same target.
func (r *Result) merge(other Result) {
	r.Requests += other.Requests
	r.Errors += other.Errors
	if r.FirstError == "" {
		r.FirstError = other.FirstError
	}
	r.Created = append(r.Created, other.Created...)
	r.RoundRates = append(r.RoundRates, other.RoundRates...)
	r.latencies = append(r.latencies, other.latencies...)
	r.elapsed += other.elapsed
	r.CPU += other.CPU
	r.summarize()
}

// summarize computes the throughput and percentiles from the latencies.
func (r *Result) summarize() {
	r.PerSecond = float64(len(r.latencies)) / r.elapsed.Seconds()
	if len(r.latencies) > 0 {
		slices.Sort(r.latencies)
		r.P50, r.P99 = r.latencies[len(r.latencies)*50/100], r.latencies[min(len(r.latencies)*99/100, len(r.latencies)-1)]
	}
}

// Run sends op to target from cfg.Concurrency clients for cfg.Duration; a get picks its payment
// among ids.
func Run(ctx context.Context, cfg Config, target Target, op Operation, ids []string) (Result, error) {
	if op == Get && len(ids) == 0 {
		return Result{}, errors.New("get reads the payments create made: run create before get")
	}
	type worker struct {
		latencies []time.Duration
		errors    int
		firstErr  string
		created   []string
	}
	workers := make([]worker, cfg.Concurrency)
	cpuBefore, err := target.cpu()
	if err != nil {
		return Result{}, err
	}
	started := time.Now()
	deadline := started.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		rng := rand.New(rand.NewPCG(uint64(i), uint64(started.UnixNano())))
		wg.Go(func() {
			// Every client sends at least one request, and none is cut off at the deadline: a
			// request is measured whole or not sent.
			for sent := 0; ctx.Err() == nil && (sent == 0 || time.Now().Before(deadline)); sent++ {
				req, err := newRequest(ctx, cfg, target, op, ids, rng)
				if err != nil {
					w.errors++
					w.firstErr = err.Error()
					return
				}
				begin := time.Now()
				id, err := send(cfg.Client, req, target.Surface, op)
				w.latencies = append(w.latencies, time.Since(begin))
				if err != nil {
					if w.errors++; w.firstErr == "" {
						w.firstErr = err.Error()
					}
					continue
				}
				if id != "" {
					w.created = append(w.created, id)
				}
			}
		})
	}
	wg.Wait()
	result := Result{Surface: target.Surface, Operation: op, elapsed: time.Since(started)}
	cpuAfter, err := target.cpu()
	if err != nil {
		return Result{}, err
	}
	result.CPU = cpuAfter - cpuBefore
	for _, w := range workers {
		result.latencies = append(result.latencies, w.latencies...)
		result.Errors += w.errors
		result.Created = append(result.Created, w.created...)
		if result.FirstError == "" {
			result.FirstError = w.firstErr
		}
	}
	result.Requests = len(result.latencies)
	result.summarize()
	return result, nil
}

func newRequest(ctx context.Context, cfg Config, target Target, op Operation, ids []string, rng *rand.Rand) (*http.Request, error) {
	var method, path string
	var body any
	switch {
	case target.Surface == SurfaceGraphQL:
		method, path, body = http.MethodPost, "/query", graphQLBody(op, ids, rng)
	case op == Create:
		method, path, body = http.MethodPost, "/payments", paymentBody()
	case op == Get:
		method, path = http.MethodGet, "/payments/"+ids[rng.IntN(len(ids))]
	default:
		method, path = http.MethodGet, "/payments"
	}
	if target.Surface == SurfaceREST {
		path = "/api/v1" + path
		if op == List {
			path += "?limit=20"
		}
	}
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(target.BaseURL, "/")+path, reader)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if target.Token != "" {
		req.Header.Set("Authorization", "Bearer "+target.Token)
	}
	if op == Create && cfg.Keyed {
		req.Header.Set("Idempotency-Key", prefixid.New("load"))
	}
	return req, nil
}

// expYear is a card expiry year ahead of any clock the run meets.
var expYear = time.Now().Year() + 4

func paymentBody() map[string]any {
	return map[string]any{
		"amount": "49.99", "currency": "USD", "payment_method": "credit_card",
		"customer": map[string]any{"email": "load@example.com", "name": "Load Test"},
		"card":     map[string]any{"number": provider.ApprovedCard, "exp_month": 12, "exp_year": expYear, "cvc": "123"},
	}
}

const paymentFields = `id amount currency status customer { email } card { last4 } createdAt`

func graphQLBody(op Operation, ids []string, rng *rand.Rand) map[string]any {
	switch op {
	case Create:
		return map[string]any{
			"query": `mutation($in: CreatePaymentInput!) { createPayment(input: $in) { ` + paymentFields + ` } }`,
			"variables": map[string]any{"in": map[string]any{
				"amount": "49.99", "currency": "USD", "paymentMethod": "CREDIT_CARD",
				"customer": map[string]any{"email": "load@example.com", "name": "Load Test"},
				"card":     map[string]any{"number": provider.ApprovedCard, "expMonth": 12, "expYear": expYear, "cvc": "123"},
			}},
		}
	case Get:
		return map[string]any{
			"query":     `query($id: ID!) { payment(id: $id) { ` + paymentFields + ` statusHistory { from to reason actor at } } }`,
			"variables": map[string]any{"id": ids[rng.IntN(len(ids))]},
		}
	default:
		return map[string]any{"query": `{ payments(first: 20) { edges { node { ` + paymentFields + ` } } pageInfo { hasNextPage } } }`}
	}
}

// send sends req and checks its answer; for a create it returns the new payment's id.
func send(client *http.Client, req *http.Request, surface Surface, op Operation) (string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	want := http.StatusOK
	if op == Create && surface != SurfaceGraphQL {
		want = http.StatusCreated
	}
	if resp.StatusCode != want {
		return "", fmt.Errorf("%s %s answered %d: %.200s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	if op != Create {
		if surface == SurfaceGraphQL && bytes.Contains(body, []byte(`"errors"`)) {
			return "", fmt.Errorf("%s answered errors: %.200s", req.URL.Path, body)
		}
		return "", nil
	}
	var created struct {
		Data struct {
			ID            string `json:"id"`
			CreatePayment struct {
				ID string `json:"id"`
			} `json:"createPayment"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		return "", err
	}
	id := created.Data.ID + created.Data.CreatePayment.ID
	if id == "" {
		return "", fmt.Errorf("%s answered no payment: %.200s", req.URL.Path, body)
	}
	return id, nil
}

// cpu is the CPU time the target's process has spent so far; 0 when its process is not given.
func (t Target) cpu() (time.Duration, error) {
	if t.PID == 0 {
		return 0, nil
	}
	return ProcessCPU(t.PID)
}

// ProcessCPU is the CPU time process pid has spent so far, in user and kernel mode (Linux).
func ProcessCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, second, is in parentheses and may hold spaces; utime and stime are the
	// 12th and 13th fields after it, in clock ticks, which Linux counts at 100 a second (USER_HZ)
	// whatever the kernel's own tick rate.
	i := strings.LastIndex(string(stat), ") ")
	var fields []string
	if i >= 0 {
		fields = strings.Fields(string(stat)[i+2:])
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("reading the CPU time of process %d: unexpected /proc/%d/stat", pid, pid)
	}
	var ticks int64
	for _, field := range fields[11:13] {
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100), nil
}

// ResidentMemory reads a Linux process's resident memory now and at its peak, in bytes.
func ResidentMemory(pid int) (now, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		name, value, _ := strings.Cut(scanner.Text(), ":")
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kB, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			now = kB << 10
		case "VmHWM":
			peak = kB << 10
		}
	}
	if now == 0 {
		return 0, 0, fmt.Errorf("no resident memory in /proc/%d/status", pid)
	}
	return now, peak, scanner.Err()
}

// Report prints results as a table, each Paygate surface beside the bare handler of the same
// operation (throughput and p99 as a share of bare's) and GraphQL beside REST.
func Report(w io.Writer, results []Result) {
	fmt.Fprintf(w, "%-8s %-8s %10s %10s %10s %10s %8s  %s\n", "op", "target", "req/s", "p50", "p99", "cpu/req", "errors", "compared")
	byKey := map[string]Result{}
	for _, r := range results {
		byKey[string(r.Operation)+"/"+string(r.Surface)] = r
	}
	for _, r := range results {
		var compared []string
		if bare, ok := byKey[string(r.Operation)+"/bare"]; ok && r.Surface != SurfaceBare && bare.PerSecond > 0 {
			compared = append(compared, fmt.Sprintf("%.2fx bare throughput%s, p99 %.2fx bare", r.PerSecond/bare.PerSecond,
				byRound(r, bare), float64(r.P99)/float64(bare.P99)))
		}
		if rest, ok := byKey[string(r.Operation)+"/rest"]; ok && r.Surface == SurfaceGraphQL && rest.PerSecond > 0 {
			compared = append(compared, fmt.Sprintf("%.2fx rest%s", r.PerSecond/rest.PerSecond, byRound(r, rest)))
		}
		cpu := "-" // the server's process was not given
		if r.CPU > 0 && r.Requests > 0 {
			cpu = (r.CPU / time.Duration(r.Requests)).Round(time.Microsecond).String()
		}
		fmt.Fprintf(w, "%-8s %-8s %10.0f %10s %10s %10s %8d  %s\n", r.Operation, r.Surface, r.PerSecond,
			r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), cpu, r.Errors, strings.Join(compared, "; "))
		if r.FirstError != "" {
			fmt.Fprintf(w, "         first error: %s\n", r.FirstError)
		}
	}
}

// byRound is how r's throughput compared with base's in each round, when there was more than
// one: " (by round LOW-HIGH, median M)". The merged ratio alone hides how far a shared machine's
// speed moved between rounds, which says how far one run's figure can be trusted.
func byRound(r, base Result) string {
	if len(r.RoundRates) < 2 || len(r.RoundRates) != len(base.RoundRates) {
		return ""
	}
	ratios := make([]float64, len(r.RoundRates))
	for i, rate := range r.RoundRates {
		if base.RoundRates[i] <= 0 {
			return ""
		}
		ratios[i] = rate / base.RoundRates[i]
	}
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		median = (ratios[len(ratios)/2-1] + median) / 2
	}
	return fmt.Sprintf(" (by round %.2f-%.2f, median %.2f)", ratios[0], ratios[len(ratios)-1], median)
}

// Compare runs each operation against each target in turn, rounds times over, each round
// starting with the next target (so that what drifts during a measurement, a growing table or a
// checkpoint, falls on every target alike),
// each run after a warm-up of a tenth of its length, and returns one merged result per operation
// and target. The gets read payments the creates made.
func Compare(ctx context.Context, cfg Config, targets []Target, operations []string, rounds int) ([]Result, error) {
	var results []Result
	var ids []string
	for _, name := range operations {
		op := Operation(strings.TrimSpace(name))
		if op != Create && op != Get && op != List {
			return nil, fmt.Errorf("unknown operation %q: give create, get or list", name)
		}
		if op != Create && cfg.BeforeReads != nil {
			if err := cfg.BeforeReads(ctx); err != nil {
				return nil, err
			}
			cfg.BeforeReads = nil
		}
		merged := make([]Result, len(targets))
		for round := range max(rounds, 1) {
			for k := range targets {
				i := (k + round) % len(targets) // each round starts with the next target
				target := targets[i]
				warmUp := cfg
				warmUp.Duration = cfg.Duration / 10
				warm, err := Run(ctx, warmUp, target, op, ids)
				if err != nil {
					return nil, err
				}
				ids = append(ids, warm.Created...)
				result, err := Run(ctx, cfg, target, op, ids)
				if err != nil {
					return nil, err
				}
				ids = append(ids, result.Created...)
				result.RoundRates = []float64{result.PerSecond}
				result.Errors += warm.Errors // a failure while warming up is a failure too
				if result.FirstError == "" {
					result.FirstError = warm.FirstError
				}
				if round == 0 {
					merged[i] = result
				} else {
					merged[i].merge(result)
				}
			}
		}
		results = append(results, merged...)
	}
	return results, ctx.Err()
}
