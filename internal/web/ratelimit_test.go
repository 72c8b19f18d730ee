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
// address's share; beyond it they are answered 429 before the key is looked at. Requests with no
// credential pass the gate untouched.
func TestGateChargesTheAddressBeforeAuthentication(t *testing.T) {
	var checked atomic.Int64
	authenticate := func(context.Context, string, string) (auth.Principal, error) {
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
	server := httptest.NewServer(Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		gate.Gate(refused), Authenticate(authenticate)))
	defer server.Close()

	answers := map[int]int{}
	for range 200 {
		raw := make([]byte, 32)
		rand.Read(raw)
		req, _ := http.NewRequest(http.MethodGet, server.URL+"/healthz", nil)
		req.Header.Set("X-API-Key", auth.TestKeyPrefix+base64.RawURLEncoding.EncodeToString(raw))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		answers[resp.StatusCode]++
	}
	if n := checked.Load(); n != 5*addressGateFactor || answers[http.StatusTooManyRequests] != 200-5*addressGateFactor {
		t.Errorf("200 made-up keys: %d checked, answers %v; want %d checked, the rest 429", n, answers, 5*addressGateFactor)
	}
	for range 100 {
		resp, err := http.Get(server.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a request without a credential = %d", resp.StatusCode)
		}
	}
}

// TestAuthenticateRefusesRepeatedCredentials: two Authorization headers, or two X-API-Key ones,
// are refused unread, as one of each is: which of two a proxy would pass on is anyone's guess.
func TestAuthenticateRefusesRepeatedCredentials(t *testing.T) {
	var checked atomic.Int64
	authenticate := func(context.Context, string, string) (auth.Principal, error) {
		checked.Add(1)
		return auth.Principal{Subject: "usr_1", Scopes: []string{auth.ScopePaymentsRead}}, nil
	}
	h := Authenticate(authenticate)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
