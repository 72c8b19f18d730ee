// Package ratelimit keeps token buckets: each key may spend up to a burst of requests at once,
// refilled at a steady rate. With Redis the buckets are shared by every server (one atomic script
// per check); without it, or while Redis cannot be reached, each server keeps its own.
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/redis/go-redis/v9"

	"github.com/paygate/paygate/internal/apierror"
)

// Limit is a bucket's size and refill rate.
type Limit struct {
	// PerSecond tokens are added each second, up to Burst.
	PerSecond float64
	Burst     int
}

// Decision is the outcome of taking a token, with what the RateLimit-* headers say.
type Decision struct {
	Allowed bool
	// Limit is the bucket's size; Remaining the tokens left after this request.
	Limit, Remaining int
	// Reset is how long until the bucket is full again.
	Reset time.Duration
	// RetryAfter is how long until a token is there, when refused.
	RetryAfter time.Duration
}

// take spends one token from a bucket holding tokens at last, refilled to now; it returns the
// tokens left and whether one was spent. The Lua script below does the same.
func take(tokens float64, last, now time.Time, limit Limit) (float64, bool) {
	if elapsed := now.Sub(last).Seconds(); elapsed > 0 {
		tokens = math.Min(float64(limit.Burst), tokens+elapsed*limit.PerSecond)
	}
	if tokens >= 1 {
		return tokens - 1, true
	}
	return tokens, false
}

// decide says what a bucket left with tokens answers.
func decide(allowed bool, tokens float64, limit Limit) Decision {
	d := Decision{Allowed: allowed, Limit: limit.Burst, Remaining: int(math.Floor(tokens)),
		Reset: seconds((float64(limit.Burst) - tokens) / limit.PerSecond)}
	if !allowed {
		d.RetryAfter = seconds((1 - tokens) / limit.PerSecond)
	}
	return d
}

func seconds(s float64) time.Duration { return time.Duration(math.Ceil(s * float64(time.Second))) }

// memoryBuckets is the most keys one server remembers: a flood of new addresses or accounts
// forgets the least recent, full, buckets first, never grows without bound.
const memoryBuckets = 100_000

// Memory keeps buckets in this process. Its lock guards the buckets and their order, so the LRU
// is the one without a lock of its own, and a bucket is changed where it is kept.
type Memory struct {
	mu      sync.Mutex
	buckets *simplelru.LRU[string, *bucket]
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewMemory returns an empty per-process store.
func NewMemory() *Memory {
	buckets, _ := simplelru.NewLRU[string, *bucket](memoryBuckets, nil) // fails only for a size below 1
	return &Memory{buckets: buckets}
}

// Take spends a token of key's bucket.
func (m *Memory) Take(key string, limit Limit, now time.Time) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets.Get(key)
	if !ok {
		b = &bucket{tokens: float64(limit.Burst), last: now}
		m.buckets.Add(key, b)
	}
	tokens, allowed := take(b.tokens, b.last, now, limit)
	b.tokens, b.last = tokens, maxTime(b.last, now)
	return decide(allowed, tokens, limit)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// takeScript is take in Redis, atomic per bucket: KEYS[1] the bucket; ARGV its rate per
// millisecond, its burst, now in Unix milliseconds, and how long an idle bucket is kept. Tokens
// are kept and answered as strings: Redis turns a Lua number into an integer.
var takeScript = redis.NewScript(`
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(state[1]), tonumber(state[2])
if tokens == nil then tokens, at = burst, now end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate)
  at = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {allowed, tostring(tokens)}
`)

// redisPause is how long a server keeps to its own buckets after Redis failed, before it tries
// Redis again: a dead Redis costs one timeout per pause, not one per request.
const redisPause = 5 * time.Second

// Limiter takes tokens from Redis when it has one and Redis answers, else from this process.
type Limiter struct {
	redis  *redis.Client
	prefix string
	memory *Memory
	logger *slog.Logger

	mu         sync.Mutex
	down       bool
	tryRedisAt time.Time
}

// NewLimiter returns a limiter over client (nil: per process only); prefix begins its keys in
// Redis.
func NewLimiter(client *redis.Client, prefix string, logger *slog.Logger) *Limiter {
	return &Limiter{redis: client, prefix: prefix, memory: NewMemory(), logger: logger}
}

// Shared reports whether the buckets are Redis's now.
func (l *Limiter) Shared() bool {
	if l.redis == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.down
}

// Take spends a token of key's bucket at now.
func (l *Limiter) Take(ctx context.Context, key string, limit Limit, now time.Time) Decision {
	if l.redis != nil && l.redisWanted(now) {
		d, err := l.takeFromRedis(ctx, key, limit, now)
		l.redisAnswered(ctx, err, now)
		if err == nil {
			return d
		}
	}
	return l.memory.Take(key, limit, now)
}

func (l *Limiter) redisWanted(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.down || !now.Before(l.tryRedisAt)
}

// redisAnswered records how Redis did, and says so in the log when that changes: once when it
// goes, once when it is back, within the request that found it.
func (l *Limiter) redisAnswered(ctx context.Context, err error, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil && !l.down:
		l.down = true
		l.logger.WarnContext(ctx, "Redis cannot be reached: rate limits are kept per server until it is back", "error", err)
	case err == nil && l.down:
		l.down = false
		l.logger.InfoContext(ctx, "Redis is reachable again: rate limits are shared by every server")
	}
	if err != nil {
		l.tryRedisAt = now.Add(redisPause)
	}
}

func (l *Limiter) takeFromRedis(ctx context.Context, key string, limit Limit, now time.Time) (Decision, error) {
	// An idle bucket refills in burst/rate: kept that long, and a little more, then gone.
	keep := seconds(float64(limit.Burst)/limit.PerSecond) + time.Second
	result, err := takeScript.Run(ctx, l.redis, []string{l.prefix + key},
		strconv.FormatFloat(limit.PerSecond/1000, 'g', -1, 64), limit.Burst, now.UnixMilli(), keep.Milliseconds()).Slice()
	if err != nil {
		return Decision{}, err
	}
	allowed, _ := result[0].(int64)
	text, _ := result[1].(string)
	tokens, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return Decision{}, err
	}
	return decide(allowed == 1, tokens, limit), nil
}

// NewRedis returns a client for url (redis://[:password@]host:port/db) whose calls give up fast:
// a Redis that does not answer within 100 ms is treated as gone.
func NewRedis(url string) (*redis.Client, error) {
	opts, err := redisOptions(url)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}

func redisOptions(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	// The fallback is the retry: no command is tried twice, and no connection is dialed twice
	// (go-redis dials five times, 100 ms apart, by default: a Redis refusing connections would
	// hold a request 400 ms).
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	return opts, nil
}

// Meter takes a request's tokens and writes what the buckets say in its answer's RateLimit-*
// headers; the last bucket asked is the one the headers describe.
type Meter struct {
	limiter *Limiter
	header  http.Header
	// Addr is the client's address, for the buckets of the unauthenticated and of logins.
	Addr string
	now  func() time.Time
}

// NewMeter returns the meter of a request whose answer has header.
func NewMeter(limiter *Limiter, header http.Header, addr string, now func() time.Time) *Meter {
	return &Meter{limiter: limiter, header: header, Addr: addr, now: now}
}

// Check spends a token of key's bucket: nil, or the 429 to answer, with Retry-After set.
func (m *Meter) Check(ctx context.Context, key string, limit Limit) error {
	d := m.limiter.Take(ctx, key, limit, m.now())
	// Assigned by their canonical names, as Header.Set would store them: Set makes the canonical
	// name anew for every call, and the three values' slices each apart. Here the three values
	// share one backing array, each slice capped at its own.
	values := []string{strconv.Itoa(d.Limit), strconv.Itoa(d.Remaining), strconv.FormatInt(int64(math.Ceil(d.Reset.Seconds())), 10)}
	m.header["Ratelimit-Limit"] = values[0:1:1]
	m.header["Ratelimit-Remaining"] = values[1:2:2]
	m.header["Ratelimit-Reset"] = values[2:3:3]
	if d.Allowed {
		return nil
	}
	return m.Refuse(d.RetryAfter)
}

// Refuse is the 429 to answer a request that may come back after retryAfter, which Retry-After
// says in whole seconds, one at least.
func (m *Meter) Refuse(retryAfter time.Duration) error {
	retry := max(int64(math.Ceil(retryAfter.Seconds())), 1)
	m.header.Set("Retry-After", strconv.FormatInt(retry, 10))
	return apierror.New(apierror.RateLimited, fmt.Sprintf("too many requests: try again in %d s", retry))
}
