package web

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/ratelimit"
)

// RateLimiting spends a token per API request: from its user's bucket (whether the user calls with
// a session or with any of their API keys), or its client address's when it has none.
type RateLimiting struct {
	Limiter *ratelimit.Limiter
	// Limit is the bucket of a user or an address, as the runtime configuration says now.
	Limit      func() ratelimit.Limit
	ClientAddr func(*http.Request) string
	Now        func() time.Time
}

// addressGateFactor is how much larger than a principal's bucket the address's is for the
// credential checks memory cannot answer: a ceiling on the authentication work one address may
// cause, well above what several principals behind one address (a merchant's servers, an office)
// ask.
const addressGateFactor = 10

// Gate spends a token of the client address's bucket, for a request whose credential costs a
// check memory cannot answer (a signature, a database read), before the check is made: a flood of
// made-up API keys or tokens costs no more of them than the address's share, on any path. nil, or
// the 429 to answer, with Retry-After set; Authenticate calls it.
func (rl RateLimiting) Gate(w http.ResponseWriter, r *http.Request) error {
	meter := ratelimit.NewMeter(rl.Limiter, w.Header(), rl.AddressOf(r), rl.Now)
	limit := rl.Limit()
	limit.PerSecond *= addressGateFactor
	limit.Burst *= addressGateFactor
	return meter.Check(r.Context(), "gate:"+meter.Addr, limit)
}

// Middleware limits the API's requests (/api/v1/ and /query), answering 429 in the surface's
// shape through writeError; providers' webhooks, probes, metrics and the playground are not
// limited. Every API answer says where its bucket stands in RateLimit-*.
func (rl RateLimiting) Middleware(writeError func(http.ResponseWriter, *http.Request, error)) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/api/v1/") && r.URL.Path != "/query" {
				next.ServeHTTP(w, r)
				return
			}
			meter := ratelimit.NewMeter(rl.Limiter, w.Header(), rl.AddressOf(r), rl.Now)
			key := "addr:" + meter.Addr
			if p, ok := auth.PrincipalFrom(r.Context()); ok {
				// The user's, not the key's: a user making a hundred keys gets no hundred buckets.
				key = "user:" + p.UserID
			}
			if err := meter.Check(r.Context(), key, rl.Limit()); err != nil {
				writeError(w, r, err)
				return
			}
			values, r := withValues(r)
			values.meter = meter
			next.ServeHTTP(w, r)
		})
	}
}

// MeterFrom returns the request's meter, or nil outside a metered request.
func MeterFrom(ctx context.Context) *ratelimit.Meter {
	if values := valuesOf(ctx); values != nil {
		return values.meter
	}
	return nil
}

// AddressOf returns r's client address, as ClientAddr tells it, worked out once per request.
func (rl RateLimiting) AddressOf(r *http.Request) string {
	values := valuesOf(r.Context())
	if values == nil {
		return rl.ClientAddr(r)
	}
	if values.clientAddr == "" {
		values.clientAddr = rl.ClientAddr(r)
	}
	return values.clientAddr
}

// ClientAddr returns how to tell a request's client address: the connection's peer, or, when
// that peer is one of the trusted proxies, the right-most X-Forwarded-For address that is not
// one of them. Without trusted proxies the header is ignored: any client can write it.
func ClientAddr(trusted []netip.Prefix) func(*http.Request) string {
	isTrusted := func(addr netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(addr.Unmap()) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		peer, err := netip.ParseAddr(host)
		if err != nil || !isTrusted(peer) {
			return host
		}
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a hop that is no address: trust nothing before it
			}
			if !isTrusted(addr) {
				return addr.Unmap().String()
			}
		}
		return host
	}
}
