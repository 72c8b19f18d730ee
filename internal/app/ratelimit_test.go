package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

// setRateLimits puts limits in the runtime configuration, in force on every server given at once.
func setRateLimits(t *testing.T, servers []*testEnv, perSecond, burst, loginPerMinute int) {
	t.Helper()
	doc := servers[0].app.services.configs.Current()
	doc.RateLimits.PerSecond, doc.RateLimits.Burst, doc.RateLimits.LoginPerMinute = perSecond, burst, loginPerMinute
	if _, err := servers[0].app.services.configs.Update(context.Background(), doc, "usr_test"); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if err := s.app.services.configs.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.limitedByConfig()
	}
}

// TestRateLimits: two servers over one Redis spend one bucket per user and one per address;
// every answer says where the bucket stands; a spent bucket answers 429 rate_limited with
// Retry-After on both surfaces; logins are throttled per account and address before the password
// is checked.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	redisURL := os.Getenv("PAYGATE_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("PAYGATE_TEST_REDIS_URL is not set (CI sets it): no Redis to share limits through")
	}
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		// Each run has keys of its own: the buckets are named by principal and address, which
		// the run on the other database shares.
		servers := newTestServers(t, pools, "REDIS_URL="+redisURL, "PAYGATE_REDIS_KEY_PREFIX="+prefixid.New("test")+":")
		token := servers[0].tokenFor("viewer")
		email := servers[0].userWith("viewer")
		setRateLimits(t, servers, 1, 3, 2)

		for i, want := range []string{"2", "1", "0"} {
			r := servers[i%2].request(http.MethodGet, "/api/v1/payments", token, nil)
			if r.status != http.StatusOK || r.header.Get("RateLimit-Remaining") != want || r.header.Get("RateLimit-Limit") != "3" || r.header.Get("RateLimit-Reset") == "" {
				t.Errorf("request %d = %d, RateLimit %s/%s reset %s", i+1, r.status, r.header.Get("RateLimit-Remaining"), r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Reset"))
			}
		}
		for i, s := range servers {
			r := s.request(http.MethodGet, "/api/v1/payments", token, nil)
			code, _ := r.errorCode()
			if retry, _ := strconv.Atoi(r.header.Get("Retry-After")); r.status != http.StatusTooManyRequests || code != "rate_limited" || retry < 1 {
				t.Errorf("server %d, past the burst = %d %s, Retry-After %q", i, r.status, r.raw, r.header.Get("Retry-After"))
			}
		}
		// The bucket is the user's: GraphQL spends it too, and answers in its own shape.
		r := servers[1].request(http.MethodPost, "/query", token, map[string]any{"query": `{ __typename }`})
		if r.status != http.StatusTooManyRequests || str(get(r.body, "errors", 0, "extensions", "code")) != "rate_limited" || r.header.Get("Retry-After") == "" {
			t.Errorf("GraphQL past the burst = %d %s", r.status, r.raw)
		}
		// Another user has their own bucket; the webhooks and probes have none.
		if r := servers[0].request(http.MethodGet, "/api/v1/payments", servers[0].tokenFor("viewer"), nil); r.status != http.StatusOK {
			t.Errorf("another user = %d", r.status)
		}
		if r := servers[0].request(http.MethodGet, "/healthz", "", nil); r.header.Get("RateLimit-Limit") != "" {
			t.Error("a probe is rate limited")
		}

		// Logins: two attempts a minute per account and address, across servers, the right
		// password included once they are spent; another account is not held back. The
		// address's own bucket is wide enough for all of them.
		setRateLimits(t, servers, 100, 200, 2)
		for i := range 2 {
			r := servers[i].request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": "not the password"})
			if code, _ := r.errorCode(); code != "invalid_credentials" {
				t.Errorf("wrong password %d = %d %s", i+1, r.status, r.raw)
			}
		}
		for i, s := range servers {
			r := s.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": testPassword})
			if code, _ := r.errorCode(); r.status != http.StatusTooManyRequests || code != "rate_limited" || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Limit") != "2" {
				t.Errorf("server %d, the right password after two wrong = %d %s", i, r.status, r.raw)
			}
		}
		_, errs := servers[1].graphql("", `mutation($e: String!, $p: String!) { login(input: {email: $e, password: $p}) { accessToken } }`,
			map[string]any{"e": email, "p": testPassword})
		if len(errs) != 1 || errs[0].code() != "rate_limited" {
			t.Errorf("GraphQL login once throttled = %+v", errs)
		}
		other := servers[0].userWith("viewer")
		if r := servers[0].request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": other, "password": testPassword}); r.status != http.StatusOK {
			t.Errorf("another account's login = %d %s", r.status, r.raw)
		}
	})
}

// TestRateLimitsWithoutRedis: a server whose Redis does not answer keeps serving, limits per
// server, and says so once.
func TestRateLimitsWithoutRedis(t *testing.T) {
	t.Parallel()
	nowhere, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := nowhere.Addr().String()
	nowhere.Close() // nothing listens there now
	env := newTestEnv(t, databasetest.SQLite(t), "REDIS_URL=redis://"+addr+"/0")
	setRateLimits(t, []*testEnv{env}, 1, 3, 5)
	token := env.tokenFor("viewer")
	for i := range 3 {
		if r := env.request(http.MethodGet, "/api/v1/payments", token, nil); r.status != http.StatusOK || r.header.Get("RateLimit-Remaining") != strconv.Itoa(2-i) {
			t.Errorf("request %d without Redis = %d, remaining %s", i+1, r.status, r.header.Get("RateLimit-Remaining"))
		}
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", token, nil); r.status != http.StatusTooManyRequests {
		t.Errorf("past the burst without Redis = %d", r.status)
	}
	if n := strings.Count(env.logs.String(), "Redis cannot be reached"); n != 1 {
		t.Errorf("Redis gone logged %d times", n)
	}
}

// TestAUsersKeysShareTheirBucket: a user calling through a session and many API keys spends one
// bucket, on both surfaces; another user has their own.
func TestAUsersKeysShareTheirBucket(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	developer := env.tokenFor("developer")
	keys := []string{developer}
	for range 4 {
		keys = append(keys, env.apiKey(developer, auth.ScopePaymentsRead))
	}
	setRateLimits(t, []*testEnv{env}, 1, 4, 5)
	for i, key := range keys[:4] {
		if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK || r.header.Get("RateLimit-Remaining") != strconv.Itoa(3-i) {
			t.Errorf("request %d, through credential %d = %d, remaining %s", i+1, i, r.status, r.header.Get("RateLimit-Remaining"))
		}
	}
	if r := env.request(http.MethodPost, "/query", keys[4], map[string]any{"query": `{ __typename }`}); r.status != http.StatusTooManyRequests {
		t.Errorf("a fifth request through a fifth credential of the same user = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", env.tokenFor("developer"), nil); r.status != http.StatusOK {
		t.Errorf("another user = %d %s", r.status, r.raw)
	}
}

// TestLoginsAreThrottledAcrossAccountsAndAddresses: before any password is hashed, an address
// may try so many logins over every account (a new email per try buys no new bucket), and an
// account may be tried so many times from every address; four times the per-account, per-address
// allowance each.
func TestLoginsAreThrottledAcrossAccountsAndAddresses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t), "PAYGATE_TRUSTED_PROXIES=127.0.0.1")
	email, other := env.userWith("viewer"), env.userWith("viewer")
	setRateLimits(t, []*testEnv{env}, 1000, 1000, 2)
	wide := 2 * loginsAcrossBuckets
	login := func(address, email, password string) response {
		return env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": password}, "X-Forwarded-For", address)
	}
	for i := range wide {
		if r := login("198.51.100.1", prefixid.New("nobody")+"@example.com", "a guess"); r.status != http.StatusUnauthorized {
			t.Errorf("address's try %d = %d %s", i+1, r.status, r.raw)
		}
	}
	if r := login("198.51.100.1", prefixid.New("nobody")+"@example.com", "a guess"); r.status != http.StatusTooManyRequests {
		t.Errorf("a new email past the address's tries = %d %s", r.status, r.raw)
	}
	for i := range wide {
		if r := login("203.0.113."+strconv.Itoa(i+1), email, "a guess"); r.status != http.StatusUnauthorized {
			t.Errorf("account's try %d = %d %s", i+1, r.status, r.raw)
		}
	}
	if r := login("203.0.113.100", email, testPassword); r.status != http.StatusTooManyRequests {
		t.Errorf("the right password from a new address past the account's tries = %d %s", r.status, r.raw)
	}
	if r := login("192.0.2.7", other, testPassword); r.status != http.StatusOK {
		t.Errorf("another account from another address = %d %s", r.status, r.raw)
	}
}

// TestPasswordHashingIsSharedByClientAddress: passwords are hashed in turn by the client address
// the rate limits count (here X-Forwarded-For's, from a trusted proxy). With an address holding
// one of two slots, another's login is served at once; the holder's next, past what its queue
// may hold, is answered 429 rate_limited with Retry-After, over REST and GraphQL alike, and goes
// through once the slot is given back.
func TestPasswordHashingIsSharedByClientAddress(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, "PAYGATE_TRUSTED_PROXIES=127.0.0.1")
		email := env.userWith("viewer")
		// Two slots, one an address's, and no place to wait.
		hashing := auth.NewHashQueue(2, 0, 0)
		env.app.services.auth.Hashing = hashing
		login := func(address string) response {
			return env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": testPassword}, "X-Forwarded-For", address)
		}
		holding, release, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			held <- hashing.Run(context.Background(), "198.51.100.1", func(time.Duration) error { return errors.New("refused") }, func() {
				close(holding)
				<-release
			})
		}()
		<-holding
		if r := login("192.0.2.7"); r.status != http.StatusOK {
			t.Errorf("a login from another address, 198.51.100.1 holding a slot = %d %s", r.status, r.raw)
		}
		r := login("198.51.100.1")
		if code, _ := r.errorCode(); r.status != http.StatusTooManyRequests || code != "rate_limited" {
			t.Errorf("a login from the address holding its slot, no place to wait = %d %s", r.status, r.raw)
		}
		if retry, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || retry < 1 {
			t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
		}
		query := map[string]any{"query": `mutation($email: String!, $password: String!) { login(input: {email: $email, password: $password}) { accessToken } }`,
			"variables": map[string]any{"email": email, "password": testPassword}}
		r = env.request(http.MethodPost, "/query", "", query, "X-Forwarded-For", "198.51.100.1")
		if r.status != http.StatusOK || str(get(r.body, "errors", 0, "extensions", "code")) != "rate_limited" || r.header.Get("Retry-After") == "" {
			t.Errorf("the login mutation from the address holding its slot = %d %s, Retry-After %q", r.status, r.raw, r.header.Get("Retry-After"))
		}
		close(release)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		if r := login("198.51.100.1"); r.status != http.StatusOK {
			t.Errorf("a login from the address once its slot is back = %d %s", r.status, r.raw)
		}
	})
}

// TestCredentialsPayTheGateForChecksOnly: authentication pays the client address's gate before
// each credential check memory cannot answer (a token's signature, a key, a user or a merchant
// read), and only then. A credential checked lately pays nothing however often it comes; a
// made-up one pays every time it is new; a refused payment stops the check before it is made.
// Over HTTP, made-up tokens from one address are checked up to ten times its bucket (and what
// refills meanwhile), then answered 429, while a real token goes on.
func TestCredentialsPayTheGateForChecksOnly(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		service := env.app.services.auth
		ctx := context.Background()
		paid := 0
		pay := func() error { paid++; return nil }
		pays := func(credential, merchant string) (int, error) {
			paid = 0
			_, err := service.Authenticate(ctx, credential, merchant, pay)
			return paid, err
		}
		admin := env.tokenFor("admin")
		key := env.apiKey(admin, auth.ScopePaymentsRead)
		madeUpKey := auth.TestKeyPrefix + strings.Repeat("x", len(key)-len(auth.TestKeyPrefix))
		for _, c := range []struct {
			name, credential, merchant string
			first, again               int
			fails                      bool
		}{
			{name: "a token", credential: env.tokenFor("viewer"), first: 1},
			{name: "an API key", credential: key, first: 1},
			{name: "a made-up token", credential: "eyJhbGciOiJIUzI1NiJ9.e30.made-up", first: 1, again: 1, fails: true},
			{name: "a made-up key", credential: madeUpKey, first: 1, fails: true},
			{name: "staff for a merchant that is not", credential: admin, merchant: "mer_" + strings.Repeat("z", 26), first: 1, again: 1, fails: true},
		} {
			if n, err := pays(c.credential, c.merchant); n != c.first || (err != nil) != c.fails {
				t.Errorf("%s, first: paid %d, %v; want %d", c.name, n, err, c.first)
			}
			if n, err := pays(c.credential, c.merchant); n != c.again || (err != nil) != c.fails {
				t.Errorf("%s, again: paid %d, %v; want %d", c.name, n, err, c.again)
			}
		}
		// A refused payment ends the check unmade: the key is still unread, so its next check pays.
		fresh := auth.TestKeyPrefix + strings.Repeat("y", len(key)-len(auth.TestKeyPrefix))
		spent := errors.New("spent")
		if _, err := service.Authenticate(ctx, fresh, "", func() error { return spent }); err != spent {
			t.Errorf("a refused payment = %v", err)
		}
		if n, _ := pays(fresh, ""); n != 1 {
			t.Errorf("after a refused payment, the key's check paid %d; want 1", n)
		}

		// The address's gate holds ten times a user's bucket: 20 at once, 10 more a second.
		setRateLimits(t, []*testEnv{env}, 1, 2, 100)
		viewer := env.tokenFor("viewer")
		if r := env.request(http.MethodGet, "/healthz", viewer, nil); r.status != http.StatusOK {
			t.Fatalf("a real token on /healthz = %d %s", r.status, r.raw)
		}
		// Made-up tokens, in turn on /healthz and on /query, until the gate has refused both
		// twice: however slowly they go, the share is spent at last. The gate's refusals say its
		// size, 20 (the API's own limit on /query says 2); on /query they are GraphQL's.
		gateRefused, sent, began := map[string]int{}, 0, time.Now()
		for ; sent < 400 && (gateRefused["/healthz"] < 2 || gateRefused["/query"] < 2); sent++ {
			madeUp := fmt.Sprintf("eyJhbGciOiJIUzI1NiJ9.e30.made-up-%d", sent)
			path, r := "/healthz", response{}
			if sent%2 == 0 {
				r = env.request(http.MethodGet, path, madeUp, nil)
			} else {
				path = "/query"
				r = env.request(http.MethodPost, path, madeUp, map[string]any{"query": `{ __typename }`})
			}
			if r.status != http.StatusTooManyRequests || r.header.Get("RateLimit-Limit") != "20" {
				continue
			}
			gateRefused[path]++
			if path == "/query" && (str(get(r.body, "errors", 0, "extensions", "code")) != "rate_limited" || r.header.Get("Retry-After") == "") {
				t.Errorf("the gate's refusal on /query = %s, Retry-After %q", r.raw, r.header.Get("Retry-After"))
			}
		}
		refilled := int(10*time.Since(began).Seconds()) + 1
		if checked := sent - gateRefused["/healthz"] - gateRefused["/query"]; gateRefused["/query"] < 2 || checked > 20+refilled {
			t.Errorf("%d made-up tokens: the gate refused %v; want it to check at most %d, then refuse", sent, gateRefused, 20+refilled)
		}
		// The share is spent, and a credential checked lately pays nothing from it.
		for i := range 60 {
			if r := env.request(http.MethodGet, "/healthz", viewer, nil); r.status != http.StatusOK {
				t.Fatalf("the real token's request %d once the share is spent = %d %s", i+1, r.status, r.raw)
			}
		}
	})
}
