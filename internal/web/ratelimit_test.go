package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/ratelimit"
)

// TestGateChargesTheAddressBeforeAuthentication: made-up API keys sent from one address, on a
// path no limit otherwise covers (/healthz), cost a credential check each only up to the
// address's share; beyond it they are answered 429 before the key is looked at. An
// authentication that checks twice pays once. A credential answered from memory, and a request
// with no credential, pay nothing: any number of them leave the address's share whole.
func TestGateChargesTheAddressBeforeAuthentication(t *testing.T) {
	var checked atomic.Int64
	const remembered = "pk_test_remembered"
	authenticate := func(_ context.Context, credential, _ string, pay func() error) (auth.Principal, error) {
		if credential == remembered {
			return auth.Principal{Subject: "usr_1"}, nil
		}
		// Made up: not in memory, so its signature, or its key and then its user, are checked.
		for range 2 {
			if err := pay(); err != nil {
				return auth.Principal{}, err
			}
		}
		checked.Add(1)
		return auth.Principal{}, apierror.New(apierror.TokenInvalid, "no such key")
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	gate := RateLimiting{
		Limiter:    ratelimit.NewLimiter(nil, "", nil),
		Limit:      func() ratelimit.Limit { return ratelimit.Limit{PerSecond: 1, Burst: 5} },
		ClientAddr: func(*http.Request) string { return "192.0.2.1" },
		Now:        func() time.Time { return now },
	}
	refused := func(w http.ResponseWriter, r *http.Request, err error) { WriteError(w, r, err, nil) }
	server := httptest.NewServer(Authenticate(authenticate, gate.Gate, refused)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer server.Close()
	get := func(key string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, server.URL+"/healthz", nil)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	madeUp := func() string {
		raw := make([]byte, 32)
		rand.Read(raw)
		return auth.TestKeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
	}

	share := 5 * addressGateFactor
	for range 3 * share {
		if resp := get(remembered); resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Limit") != "" {
			t.Fatalf("a remembered credential = %d, RateLimit-Limit %q", resp.StatusCode, resp.Header.Get("RateLimit-Limit"))
		}
		if resp := get(""); resp.StatusCode != http.StatusOK {
			t.Fatalf("a request without a credential = %d", resp.StatusCode)
		}
	}
	answers := map[int]int{}
	var last *http.Response
	for range 200 {
		last = get(madeUp())
		answers[last.StatusCode]++
	}
	if n := checked.Load(); n != int64(share) || answers[http.StatusTooManyRequests] != 200-share {
		t.Errorf("200 made-up keys: %d checked, answers %v; want %d checked, the rest 429", n, answers, share)
	}
	if last.Header.Get("Retry-After") == "" || last.Header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("a refused key's answer: Retry-After %q, RateLimit-Remaining %q", last.Header.Get("Retry-After"), last.Header.Get("RateLimit-Remaining"))
	}
	// What memory answers still passes once the address's share is spent.
	if resp := get(remembered); resp.StatusCode != http.StatusOK {
		t.Errorf("a remembered credential after the flood = %d", resp.StatusCode)
	}
}

// TestAuthenticateRefusesRepeatedCredentials: two Authorization headers, or two X-API-Key ones,
// are refused unread, as one of each is: which of two a proxy would pass on is anyone's guess.
func TestAuthenticateRefusesRepeatedCredentials(t *testing.T) {
	var checked atomic.Int64
	authenticate := func(context.Context, string, string, func() error) (auth.Principal, error) {
		checked.Add(1)
		return auth.Principal{Subject: "usr_1", Scopes: []string{auth.ScopePaymentsRead}}, nil
	}
	h := Authenticate(authenticate, nil, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := auth.Authorize(r.Context(), auth.ListPayments); err != nil {
			WriteError(w, r, err, nil)
		}
	}))
	for name, headers := range map[string][][2]string{
		"two Authorization": {{"Authorization", "Bearer one"}, {"Authorization", "Bearer two"}},
		"two X-API-Key":     {{"X-API-Key", auth.TestKeyPrefix + "one"}, {"X-API-Key", auth.TestKeyPrefix + "two"}},
		"one of each":       {{"Authorization", "Bearer one"}, {"X-API-Key", auth.TestKeyPrefix + "two"}},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/payments", nil)
		for _, h := range headers {
			r.Header.Add(h[0], h[1])
		}
		w := serve(h, r)
		if w.Code != http.StatusUnauthorized || errorOf(t, w)["code"] != "token_invalid" {
			t.Errorf("%s = %d %s", name, w.Code, w.Body)
		}
	}
	if n := checked.Load(); n != 0 {
		t.Errorf("%d repeated credentials were checked", n)
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/payments", nil)
	r.Header.Set("Authorization", "Bearer one")
	if w := serve(h, r); w.Code != http.StatusOK || checked.Load() != 1 {
		t.Errorf("one credential = %d %s", w.Code, w.Body)
	}
}
