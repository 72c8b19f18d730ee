package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

func expiredToken(t *testing.T, env *testEnv) string {
	t.Helper()
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	tokens, err := auth.NewTokens([]byte(testJWTSecret), past)
	if err != nil {
		t.Fatal(err)
	}
	token, err := tokens.Issue("usr_gone", "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func unsignedToken(t *testing.T) string {
	t.Helper()
	claims := jwt.MapClaims{
		"sub": "usr_x", "role": "admin", "scope": "payments:read", "iss": "paygate", "aud": "paygate-api",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestLoginAndRefresh(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, "PAYGATE_PASSWORD_COST=12") // the cost a server stores at unless told otherwise
		const password = "correct horse battery"
		u, err := env.app.services.auth.CreateUser(databasetest.AsMerchant(), "Ops@Example.com", password, "operator")
		if err != nil {
			t.Fatal(err)
		}
		if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != auth.PasswordCost {
			t.Errorf("password stored with bcrypt cost %d (%v), want %d", cost, err, auth.PasswordCost)
		}

		// REST login answers exactly the original document's shape.
		r := env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": "ops@example.com", "password": password})
		if r.status != http.StatusOK || r.body["success"] != true {
			t.Fatalf("login = %d %s", r.status, r.raw)
		}
		data := r.data()
		if len(data) != 4 || str(data["expires_in"]) != "900" || data["token_type"] != "Bearer" ||
			str(data["access_token"]) == "" || !strings.HasPrefix(str(data["refresh_token"]), "rt_") {
			t.Errorf("login data = %v", data)
		}
		if len(r.body) != 2 {
			t.Errorf("login body has extra keys: %s", r.raw)
		}
		access := str(data["access_token"])
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(access, claims); err != nil {
			t.Fatal(err)
		}
		for _, claim := range []string{"sub", "role", "scope", "jti", "iat", "exp", "iss", "aud"} {
			if claims[claim] == nil {
				t.Errorf("access token lacks claim %s", claim)
			}
		}
		if claims["role"] != "operator" || !strings.Contains(str(claims["scope"]), "payments:write") {
			t.Errorf("claims = %v", claims)
		}
		if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 900 {
			t.Errorf("token lifetime = %v s, want 900", exp-iat)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments", access, paymentBody("1.00", "USD", "4242424242424242")); r.status != http.StatusCreated {
			t.Errorf("payment with the login's token = %d %s", r.status, r.raw)
		}

		// Refresh rotates: the new token works once, the old one is then reuse and kills the family.
		first := str(data["refresh_token"])
		r = env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": first})
		if r.status != http.StatusOK || str(r.data()["refresh_token"]) == first || str(r.data()["access_token"]) == "" {
			t.Fatalf("refresh = %d %s", r.status, r.raw)
		}
		second := str(r.data()["refresh_token"])
		r = env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": first})
		if code, _ := r.errorCode(); r.status != http.StatusUnauthorized || code != "refresh_token_reused" {
			t.Errorf("reused refresh = %d %s", r.status, r.raw)
		}
		r = env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": second})
		if code, _ := r.errorCode(); r.status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("refresh from a revoked family = %d %s", r.status, r.raw)
		}

		// GraphQL twins answer the same tokens.
		login := env.mustGraphQL("", `mutation($in: LoginInput!) { login(input: $in) { accessToken refreshToken expiresIn tokenType } }`,
			map[string]any{"in": map[string]any{"email": "ops@example.com", "password": password}})
		if str(get(login, "login", "expiresIn")) != "900" || get(login, "login", "tokenType") != "Bearer" {
			t.Errorf("login mutation = %v", login)
		}
		refreshed := env.mustGraphQL("", `mutation($t: String!) { refreshToken(refreshToken: $t) { accessToken refreshToken } }`,
			map[string]any{"t": get(login, "login", "refreshToken")})
		if str(get(refreshed, "refreshToken", "refreshToken")) == str(get(login, "login", "refreshToken")) {
			t.Errorf("refreshToken mutation did not rotate: %v", refreshed)
		}
		_, errs := env.graphql("", `mutation($t: String!) { refreshToken(refreshToken: $t) { accessToken } }`,
			map[string]any{"t": get(login, "login", "refreshToken")})
		if len(errs) != 1 || errs[0].code() != "refresh_token_reused" {
			t.Errorf("reused refreshToken mutation = %+v", errs)
		}

		// Refused logins.
		bad := []struct {
			body        any
			status      int
			code, param string
		}{
			{map[string]any{"email": "ops@example.com", "password": "wrong password!"}, 401, "invalid_credentials", ""},
			{map[string]any{"email": "nobody@example.com", "password": password}, 401, "invalid_credentials", ""},
			{map[string]any{"email": "ops@example.com"}, 400, "missing_field", "password"},
			{map[string]any{"password": password}, 400, "missing_field", "email"},
			{map[string]any{"email": "ops@example.com", "password": password, "otp": "1"}, 400, "invalid_request", "otp"},
			{`{"email": `, 400, "invalid_request", ""},
		}
		for _, tt := range bad {
			r := env.request(http.MethodPost, "/api/v1/auth/login", "", tt.body)
			if code, param := r.errorCode(); r.status != tt.status || code != tt.code || param != tt.param {
				t.Errorf("login %v = %d %s", tt.body, r.status, r.raw)
			}
		}
		for _, token := range []string{"rt_unknown", ""} {
			r := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": token})
			if r.status != http.StatusUnauthorized && r.status != http.StatusBadRequest {
				t.Errorf("refresh %q = %d %s", token, r.status, r.raw)
			}
		}
		_, errs = env.graphql("", `mutation { login(input: {email: "ops@example.com", password: "nope nope nope"}) { accessToken } }`, nil)
		if len(errs) != 1 || errs[0].code() != "invalid_credentials" {
			t.Errorf("bad login mutation = %+v", errs)
		}
		if found := leaks(env.logs.String(), secret{"a password", password}); len(found) > 0 {
			t.Errorf("in the logs: %v", found)
		}
	})
}

func TestConcurrentRefreshesHonourSingleUse(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		if _, err := env.app.services.auth.CreateUser(databasetest.AsMerchant(), "race@example.com", "correct horse battery", "viewer"); err != nil {
			t.Fatal(err)
		}
		session, err := env.app.services.auth.Login(context.Background(), "race@example.com", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		const attempts = 10
		statuses := make(chan int, attempts)
		for range attempts {
			go func() {
				r := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": session.RefreshToken})
				statuses <- r.status
			}()
		}
		succeeded := 0
		for range attempts {
			if <-statuses == http.StatusOK {
				succeeded++
			}
		}
		// Exactly one: none would pass a test of "at most one" too.
		if succeeded != 1 {
			t.Errorf("%d concurrent refreshes with one token succeeded, want exactly 1", succeeded)
		}
	})
}

// TestPasswordsAreNeverTruncated: bcrypt reads 72 bytes, so a longer password is refused at
// creation and never logs in: a password of 72 bytes plus any suffix is refused as longer than
// any password, not taken as the same.
func TestPasswordsAreNeverTruncated(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	ctx := databasetest.AsMerchant()
	password := strings.Repeat("p", 60) + "0123456789ab" // 72 bytes, and no repetition the policy refuses
	if _, err := env.app.services.auth.CreateUser(ctx, "long@example.com", password, "viewer"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		password string
		status   int
	}{{password, http.StatusOK}, {password + "x", http.StatusBadRequest}, {password + strings.Repeat("y", 1000), http.StatusBadRequest}} {
		r := env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": "long@example.com", "password": tc.password})
		if code, param := r.errorCode(); r.status != tc.status || r.status == http.StatusBadRequest && (code != "invalid_request" || param != "password") {
			t.Errorf("a password of %d bytes: %d %s, want %d", len(tc.password), r.status, r.raw, tc.status)
		}
	}
	for _, tc := range []struct {
		password string
		ok       bool
	}{
		{strings.Repeat("q", 73), false},
		{strings.Repeat("é", 37), false},       // 74 bytes
		{strings.Repeat("é", 35) + "ab", true}, // 72 bytes
		{strings.Repeat("é", 11), false},       // too short, in characters
		{strings.Repeat("é", 11) + "a", true},
	} {
		_, err := env.app.services.auth.CreateUser(ctx, prefixid.New("u")+"@example.com", tc.password, "viewer")
		if (err == nil) != tc.ok {
			t.Errorf("creating a user with a password of %d bytes: %v, want ok %v", len(tc.password), err, tc.ok)
		}
	}
}
