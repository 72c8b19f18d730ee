package ratelimit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/logtest"
	"github.com/redis/go-redis/v9"
)

var limit = Limit{PerSecond: 1, Burst: 3}

// spend takes n tokens at now and returns the decisions.
func spend(take func(now time.Time) Decision, n int, now time.Time) []Decision {
	decisions := make([]Decision, n)
	for i := range decisions {
		decisions[i] = take(now)
	}
	return decisions
}

// checkBucket runs the same story against any store: a burst of three, then a refusal until a
// token has come back.
func checkBucket(t *testing.T, take func(now time.Time) Decision) {
	t.Helper()
	start := time.Unix(1_800_000_000, 0)
	got := spend(take, 4, start)
	for i, want := range []Decision{
		{Allowed: true, Limit: 3, Remaining: 2, Reset: time.Second},
		{Allowed: true, Limit: 3, Remaining: 1, Reset: 2 * time.Second},
		{Allowed: true, Limit: 3, Remaining: 0, Reset: 3 * time.Second},
		{Allowed: false, Limit: 3, Remaining: 0, Reset: 3 * time.Second, RetryAfter: time.Second},
	} {
		if got[i] != want {
			t.Errorf("request %d = %+v, want %+v", i+1, got[i], want)
		}
	}
	if d := take(start.Add(500 * time.Millisecond)); d.Allowed || d.RetryAfter != 500*time.Millisecond {
		t.Errorf("half a second on = %+v", d)
	}
	if d := take(start.Add(1500 * time.Millisecond)); !d.Allowed || d.Remaining != 0 {
		t.Errorf("a token back = %+v", d)
	}
	if d := take(start.Add(time.Hour)); !d.Allowed || d.Remaining != 2 {
		t.Errorf("an hour on, full = %+v", d)
	}
}

func TestMemoryBucket(t *testing.T) {
	m := NewMemory()
	checkBucket(t, func(now time.Time) Decision { return m.Take("k", limit, now) })
	// Another key has its own bucket.
	if d := m.Take("other", limit, time.Unix(1_800_000_000, 0)); !d.Allowed || d.Remaining != 2 {
		t.Errorf("another key = %+v", d)
	}
}

func TestMemoryIsBounded(t *testing.T) {
	m := NewMemory()
	now := time.Now()
	for i := range memoryBuckets + 5000 {
		m.Take(fmt.Sprint("addr:", i), limit, now)
	}
	if n := m.buckets.Len(); n > memoryBuckets {
		t.Errorf("%d buckets kept, bound %d", n, memoryBuckets)
	}
}

// redisURL is the Redis the tests share, or a skip.
func redisURL(t *testing.T) string {
	url := os.Getenv("PAYGATE_TEST_REDIS_URL")
	if url == "" {
		t.Skip("PAYGATE_TEST_REDIS_URL is not set (CI sets it): no Redis to test against")
	}
	return url
}

// uniquePrefix keeps a test's buckets apart from every other test's in a shared Redis.
func uniquePrefix(t testing.TB) string {
	raw := make([]byte, 6)
	rand.Read(raw)
	return "test:" + t.Name() + ":" + hex.EncodeToString(raw) + ":"
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)) }

// TestRedisBucketIsShared: two limiters (two servers) over one Redis spend one bucket.
func TestRedisBucketIsShared(t *testing.T) {
	prefix := uniquePrefix(t)
	var limiters []*Limiter
	for range 2 {
		client, err := NewRedis(redisURL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		limiters = append(limiters, NewLimiter(client, prefix, discardLogger()))
	}
	turn := 0
	checkBucket(t, func(now time.Time) Decision {
		turn++
		return limiters[turn%2].Take(context.Background(), "k", limit, now)
	})
	if !limiters[0].Shared() {
		t.Error("the limiter does not say its buckets are shared")
	}
}

// TestRedisBucketUnderConcurrency: a burst of 50 spent by 200 requests at once across two
// limiters lets exactly 50 through.
func TestRedisBucketUnderConcurrency(t *testing.T) {
	prefix := uniquePrefix(t)
	opts, err := redisOptions(redisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	// What is measured is the shared bucket, not Redis's speed: 200 takes at once on a loaded
	// machine (CI, the race detector) can wait longer than the 100 ms after which a server stops
	// waiting and limits by its own bucket, which would let more through. Dialing too: the takes
	// open the pool's connections at once, and one dial past 100 ms let four more through in CI.
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout = 10*time.Second, 10*time.Second, 10*time.Second, 10*time.Second
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	limiters := []*Limiter{NewLimiter(client, prefix, discardLogger()), NewLimiter(client, prefix, discardLogger())}
	checkConcurrentTakes(t, func(i int, limit Limit, now time.Time) Decision {
		return limiters[i%2].Take(context.Background(), "k", limit, now)
	})
}

func TestMemoryBucketUnderConcurrency(t *testing.T) {
	m := NewMemory()
	checkConcurrentTakes(t, func(_ int, limit Limit, now time.Time) Decision { return m.Take("k", limit, now) })
}

// checkConcurrentTakes spends one bucket of 50 with 200 takes at once: 50 are let through.
func checkConcurrentTakes(t *testing.T, take func(i int, limit Limit, now time.Time) Decision) {
	t.Helper()
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := range 200 {
		wg.Go(func() {
			if take(i, Limit{PerSecond: 0.001, Burst: 50}, now).Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("%d requests let through, want 50", allowed)
	}
}

// privateRedis starts a Redis of the test's own on port, which the test may stop and start.
func privateRedis(t *testing.T, port int) (stop func()) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (CI installs it)")
	}
	cmd := exec.Command(path, "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if conn, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", port)); err == nil {
			conn.Close()
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisGoingAwayKeepsLimiting: with Redis gone every check still answers, from this
// server's buckets, and that is logged once; Redis back is used again, and logged once.
func TestRedisGoingAwayKeepsLimiting(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	stop := privateRedis(t, port)
	client, err := NewRedis(fmt.Sprintf("redis://127.0.0.1:%d/0", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	logs := &logtest.Buffer{}
	limiter := NewLimiter(client, uniquePrefix(t), slog.New(slog.NewTextHandler(logs, nil)))
	now := time.Now()
	wide := Limit{PerSecond: 1, Burst: 100}
	if d := limiter.Take(context.Background(), "k", wide, now); !d.Allowed || d.Remaining != 99 || !limiter.Shared() {
		t.Fatalf("with Redis = %+v", d)
	}
	stop()
	for i := range 10 {
		if d := limiter.Take(context.Background(), "k", wide, now.Add(time.Duration(i)*time.Second)); !d.Allowed {
			t.Errorf("check %d without Redis refused: %+v", i, d)
		}
	}
	if n := strings.Count(logs.String(), "Redis cannot be reached"); n != 1 || limiter.Shared() {
		t.Errorf("Redis gone logged %d times (shared %v):\n%s", n, limiter.Shared(), logs.String())
	}
	privateRedis(t, port)
	if d := limiter.Take(context.Background(), "k", wide, now.Add(time.Minute)); !d.Allowed {
		t.Errorf("with Redis back = %+v", d)
	}
	if !strings.Contains(logs.String(), "Redis is reachable again") || !limiter.Shared() {
		t.Errorf("Redis back is not used or not logged:\n%s", logs.String())
	}
}

// TestRefusingRedisCostsOneDial: a Redis refusing connections costs the check that finds it gone
// one dial, not a dial retried with pauses between, and the checks after it none until the pause
// is over.
func TestRefusingRedisCostsOneDial(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	listener.Close() // nothing listens there now: every dial is refused
	opts, err := redisOptions("redis://" + addr + "/0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	limiter := NewLimiter(client, uniquePrefix(t), discardLogger())
	now := time.Now()
	if d := limiter.Take(context.Background(), "k", Limit{PerSecond: 1, Burst: 5}, now); !d.Allowed || limiter.Shared() {
		t.Fatalf("with Redis refusing = %+v, shared %v", d, limiter.Shared())
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the check that found Redis gone dialed %d times, want 1", n)
	}
	for i := range 5 {
		limiter.Take(context.Background(), "k", Limit{PerSecond: 1, Burst: 5}, now.Add(time.Duration(i)*time.Second/2))
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("checks within the pause dialed Redis: %d dials in all", n)
	}
	limiter.Take(context.Background(), "k", Limit{PerSecond: 1, Burst: 5}, now.Add(redisPause))
	if n := dials.Load(); n != 2 {
		t.Errorf("the check after the pause: %d dials in all, want 2", n)
	}
}

// BenchmarkTake is one rate-limit check: against the shared Redis (one script call), and in
// this process.
func BenchmarkTake(b *testing.B) {
	limit := Limit{PerSecond: 1e9, Burst: 1e9}
	b.Run("memory", func(b *testing.B) {
		limiter := NewLimiter(nil, "", discardLogger())
		for b.Loop() {
			limiter.Take(context.Background(), "k", limit, time.Now())
		}
	})
	url := os.Getenv("PAYGATE_TEST_REDIS_URL")
	if url == "" {
		b.Skip("PAYGATE_TEST_REDIS_URL is not set: no Redis to measure")
	}
	b.Run("redis", func(b *testing.B) {
		client, err := NewRedis(url)
		if err != nil {
			b.Fatal(err)
		}
		defer client.Close()
		limiter := NewLimiter(client, uniquePrefix(b), discardLogger())
		for b.Loop() {
			if !limiter.Take(context.Background(), "k", limit, time.Now()).Allowed {
				b.Fatal("refused")
			}
		}
		if !limiter.Shared() {
			b.Fatal("Redis was not used")
		}
	})
}

// TestMeterWritesCanonicalHeaders: the meter's headers are stored under the names Header.Set
// would store them by, so that a later Set or Get finds them rather than adding a second header;
// and each answer says where the last bucket asked stands, the refusal's Retry-After with it.
func TestMeterWritesCanonicalHeaders(t *testing.T) {
	header := http.Header{}
	now := time.Unix(1_800_000_000, 0)
	meter := NewMeter(NewLimiter(nil, "", discardLogger()), header, "127.0.0.1", func() time.Time { return now })
	for i := range 4 {
		err := meter.Check(context.Background(), "user:one", limit)
		if (err != nil) != (i == 3) {
			t.Fatalf("check %d: %v", i+1, err)
		}
	}
	for name, values := range header {
		if name != http.CanonicalHeaderKey(name) || len(values) != 1 {
			t.Errorf("header %q = %q: want one value under its canonical name", name, values)
		}
	}
	if got := header.Get("RateLimit-Limit") + " " + header.Get("RateLimit-Remaining") + " " + header.Get("RateLimit-Reset") + " " + header.Get("Retry-After"); got != "3 0 3 1" {
		t.Errorf("RateLimit-Limit, -Remaining, -Reset and Retry-After = %q; want 3 0 3 1", got)
	}
	header.Set("RateLimit-Remaining", "x")
	if values := header.Values("RateLimit-Remaining"); len(values) != 1 {
		t.Errorf("RateLimit-Remaining after Set = %q; want one value", values)
	}
}
