package app

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestAPIKeys: a key is made once (shown once, with scopes its maker holds), works as a bearer
// token or in X-API-Key on every server, is listed without its secret with its last use, and
// stops at once when it is revoked or its user is disabled; a demoted user's key loses the
// scopes the user lost.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		one, two := servers[0], servers[1]
		admin := one.tokenFor("admin")
		developerEmail := one.userWith("developer")
		developer, _ := one.login(developerEmail)

		r := one.request(http.MethodPost, "/api/v1/api-keys", developer, map[string]any{
			"name": "checkout service", "scopes": []string{auth.ScopePaymentsWrite, auth.ScopePaymentsRead}})
		key := str(get(r.body, "data", "key"))
		if r.status != http.StatusCreated || !strings.HasPrefix(key, auth.TestKeyPrefix) ||
			!strings.HasPrefix(key, str(get(r.body, "data", "prefix"))) || len(str(get(r.body, "data", "prefix"))) != len(auth.TestKeyPrefix)+8 ||
			!strings.HasPrefix(str(get(r.body, "data", "id")), "key_") || get(r.body, "data", "last_used_at") != nil ||
			get(r.body, "data", "expires_at") != nil || str(get(r.body, "data", "scopes", 0)) != auth.ScopePaymentsRead {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		keyID := str(get(r.body, "data", "id"))
		stored, err := one.db.Ent.APIKey.Get(databasetest.AsMerchant(), keyID)
		if err != nil || strings.Contains(stored.KeyHash, key[len(auth.TestKeyPrefix):]) || len(stored.KeyHash) != 64 {
			t.Errorf("stored key = %+v, %v", stored, err)
		}

		// Refused keys, and nothing made.
		for _, tt := range []struct {
			body        any
			status      int
			code, param string
		}{
			{map[string]any{"name": "x", "scopes": []string{auth.ScopeRefundsWrite}}, 403, "forbidden", "scopes"},
			{map[string]any{"name": "x", "scopes": []string{"payments:everything"}}, 400, "invalid_request", "scopes"},
			{map[string]any{"name": "x", "scopes": []string{}}, 400, "invalid_request", "scopes"},
			{map[string]any{"name": "x"}, 400, "missing_field", "scopes"},
			{map[string]any{"scopes": []string{auth.ScopePaymentsRead}}, 400, "missing_field", "name"},
			{map[string]any{"name": strings.Repeat("n", 101), "scopes": []string{auth.ScopePaymentsRead}}, 400, "invalid_request", "name"},
			{map[string]any{"name": "x\x00", "scopes": []string{auth.ScopePaymentsRead}}, 400, "invalid_request", "name"},
			{map[string]any{"name": "x", "scopes": []string{auth.ScopePaymentsRead}, "expires_at": "2020-01-01T00:00:00Z"}, 400, "invalid_request", "expires_at"},
			{map[string]any{"name": "x", "scopes": []string{auth.ScopePaymentsRead}, "expires_at": "2999-01-01T00:00:00Z"}, 400, "invalid_request", "expires_at"},
			{map[string]any{"name": "x", "scopes": []string{auth.ScopePaymentsRead}, "expires_at": "tomorrow"}, 400, "invalid_request", "expires_at"},
		} {
			r := one.request(http.MethodPost, "/api/v1/api-keys", developer, tt.body)
			if code, param := r.errorCode(); r.status != tt.status || code != tt.code || param != tt.param {
				t.Errorf("create %v = %d %s", tt.body, r.status, r.raw)
			}
		}
		if n, _ := one.db.Ent.APIKey.Query().Count(databasetest.AsMerchant()); n != 1 {
			t.Errorf("refused requests made keys: %d in all", n)
		}

		// The key works on both servers, either way it is sent, with its scopes alone.
		for i, s := range servers {
			if r := s.request(http.MethodPost, "/api/v1/payments", key, paymentBody("3.00", "USD", "4242424242424242")); r.status != http.StatusCreated {
				t.Errorf("server %d, payment by bearer key = %d %s", i, r.status, r.raw)
			}
			if r := s.request(http.MethodGet, "/api/v1/payments", "", nil, "X-API-Key", key); r.status != http.StatusOK {
				t.Errorf("server %d, list by X-API-Key = %d %s", i, r.status, r.raw)
			}
			r := s.request(http.MethodPost, "/api/v1/payments/pay_x/refunds", key, map[string]any{"amount": "1.00"})
			if code, _ := r.errorCode(); r.status != http.StatusForbidden || code != "forbidden" || !strings.Contains(r.raw, auth.ScopeRefundsWrite) {
				t.Errorf("server %d, refund by a key without refunds:write = %d %s", i, r.status, r.raw)
			}
		}
		if status, _ := one.answers(key); status != http.StatusOK {
			t.Errorf("key answered %d", status)
		}
		// A key made over GraphQL works the same.
		made := one.mustGraphQL(developer, `mutation { createAPIKey(input: {name: "reports", scopes: ["payments:read"]}) { key apiKey { id prefix scopes lastUsedAt } } }`, nil)
		reportsKey := str(get(made, "createAPIKey", "key"))
		if !strings.HasPrefix(reportsKey, str(get(made, "createAPIKey", "apiKey", "prefix"))) {
			t.Errorf("createAPIKey = %v", made)
		}
		if status, _ := two.answers(reportsKey); status != http.StatusOK {
			t.Errorf("GraphQL-made key answered %d", status)
		}

		// Listed without the keys, with their last use (to the minute), to their user alone.
		waitFor(t, "the key's last use to be recorded", func() bool {
			used, err := one.db.Ent.APIKey.Get(databasetest.AsMerchant(), keyID)
			return err == nil && used.LastUsedAt != nil
		})
		r = two.request(http.MethodGet, "/api/v1/api-keys", developer, nil)
		if r.status != http.StatusOK || len(get(r.body, "data").([]any)) != 2 || strings.Contains(r.raw, key) || strings.Contains(r.raw, reportsKey) ||
			strings.Contains(r.raw, `"key":`) || get(r.body, "data", 0, "last_used_at") == nil || get(r.body, "data", 0, "id") != keyID {
			t.Errorf("list = %d %s", r.status, r.raw)
		}
		other := one.tokenFor("developer")
		if r := one.request(http.MethodGet, "/api/v1/api-keys", other, nil); r.status != http.StatusOK || len(get(r.body, "data").([]any)) != 0 {
			t.Errorf("another developer's list = %d %s", r.status, r.raw)
		}
		if r := one.request(http.MethodGet, "/api/v1/api-keys?limit=1", admin, nil); r.status != http.StatusOK || len(get(r.body, "data").([]any)) != 1 || get(r.body, "has_more") != true {
			t.Errorf("an admin's first page = %d %s", r.status, r.raw)
		}
		listed := one.mustGraphQL(admin, `{ apiKeys(first: 10) { hasMore keys { id name userId } } }`, nil)
		if keys, _ := get(listed, "apiKeys", "keys").([]any); len(keys) != 2 {
			t.Errorf("an admin's list = %v", listed)
		}
		// To another developer the key does not exist.
		if r := one.request(http.MethodDelete, "/api/v1/api-keys/"+keyID, other, nil); r.status != http.StatusNotFound {
			t.Errorf("another developer revoking = %d %s", r.status, r.raw)
		}

		// The user demoted: the key keeps the scopes the user still holds.
		if r := one.request(http.MethodPatch, "/api/v1/users/"+stored.UserID, admin, map[string]any{"role": "viewer"}); r.status != http.StatusOK {
			t.Fatalf("demote = %d %s", r.status, r.raw)
		}
		if r := one.request(http.MethodPost, "/api/v1/payments", key, paymentBody("3.00", "USD", "4242424242424242")); r.status != http.StatusForbidden {
			t.Errorf("a demoted user's key paid: %d %s", r.status, r.raw)
		}
		waitFor(t, "the demotion on the other server", func() bool {
			return two.request(http.MethodPost, "/api/v1/payments", key, paymentBody("3.00", "USD", "4242424242424242")).status == http.StatusForbidden
		})
		if status, _ := two.answers(key); status != http.StatusOK {
			t.Errorf("a demoted user's key cannot read: %d", status)
		}

		// The user disabled: every key stops, here at once and soon everywhere; enabled (and
		// promoted back), they work again.
		if r := one.request(http.MethodPatch, "/api/v1/users/"+stored.UserID, admin, map[string]any{"disabled": true}); r.status != http.StatusOK {
			t.Fatalf("disable = %d %s", r.status, r.raw)
		}
		if status, code := one.answers(key); status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("a disabled user's key: %d %s", status, code)
		}
		waitFor(t, "the disabling on the other server", func() bool {
			_, code := two.answers(reportsKey)
			return code == "token_revoked"
		})
		if r := one.request(http.MethodPatch, "/api/v1/users/"+stored.UserID, admin, map[string]any{"disabled": false, "role": "developer"}); r.status != http.StatusOK {
			t.Fatalf("enable = %d %s", r.status, r.raw)
		}
		if status, _ := one.answers(key); status != http.StatusOK {
			t.Errorf("an enabled user's key: %d", status)
		}

		// Revoked: at once on the server asked, within a second or two on the other, which had
		// the key in memory.
		developer, _ = one.login(developerEmail) // the disabling ended the user's sessions
		r = one.request(http.MethodDelete, "/api/v1/api-keys/"+keyID, developer, nil)
		if r.status != http.StatusOK || get(r.body, "data", "revoked_at") == nil {
			t.Fatalf("revoke = %d %s", r.status, r.raw)
		}
		if status, code := one.answers(key); status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("a revoked key on the server asked: %d %s", status, code)
		}
		waitFor(t, "the revocation on the other server", func() bool {
			_, code := two.answers(key)
			return code == "token_revoked"
		})
		revoked := one.mustGraphQL(admin, `mutation($id: ID!) { revokeAPIKey(id: $id) { revokedAt } }`, map[string]any{"id": keyID})
		if get(revoked, "revokeAPIKey", "revokedAt") == nil {
			t.Errorf("revoking again = %v", revoked)
		}
		// A key has no session to log out of.
		if r := one.request(http.MethodPost, "/api/v1/auth/logout", reportsKey, nil); r.status != http.StatusBadRequest {
			t.Errorf("logout with a key = %d %s", r.status, r.raw)
		}
		if found := leaks(one.logs.String()+two.logs.String(), secret{"an API key", key}); len(found) > 0 {
			t.Errorf("in the logs: %v", found)
		}
	})
}

// TestCredentialAttacks: every forged, stale or misused credential is refused, with the code
// that says why, on REST and GraphQL alike.
func TestCredentialAttacks(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		now := time.Now()
		claims := func(sub, role string, lifetime time.Duration) jwt.MapClaims {
			return jwt.MapClaims{"sub": sub, "role": role, "scope": strings.Join(auth.ScopesOf(role), " "), "iss": "paygate", "aud": "paygate-api",
				"jti": "jti_forged", "iat": now.Unix(), "exp": now.Add(lifetime).Unix()}
		}
		signed := func(method jwt.SigningMethod, c jwt.MapClaims, key any) string {
			token, err := jwt.NewWithClaims(method, c).SignedString(key)
			if err != nil {
				t.Fatal(err)
			}
			return token
		}
		rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		viewer := env.tokenFor("viewer")
		viewerID := env.subjectOf(viewer)
		// A viewer's token with its payload swapped for an admin's: the signature no longer fits.
		parts := strings.Split(viewer, ".")
		adminPayload := strings.Split(signed(jwt.SigningMethodHS256, claims(viewerID, "admin", time.Minute), []byte("another secret, not Paygate's")), ".")[1]
		tampered := parts[0] + "." + adminPayload + "." + parts[2]

		email := env.userWith("developer")
		loggedOut, _ := env.login(email)
		env.request(http.MethodPost, "/api/v1/auth/logout", loggedOut, nil)
		revoked, _ := env.login(email)
		env.request(http.MethodPost, "/api/v1/auth/revoke", revoked, map[string]any{"token": revoked})
		familyAccess, firstRefresh := env.login(email)
		env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": firstRefresh})
		env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": firstRefresh}) // reused: the family ends
		_, liveRefresh := env.login(email)

		disabledEmail := env.userWith("developer")
		disabledToken, _ := env.login(disabledEmail)
		disabledKey := env.apiKey(disabledToken, auth.ScopePaymentsRead)
		staleRole := env.tokenFor("developer")
		admin := env.tokenFor("admin")
		for who, change := range map[string]map[string]any{env.subjectOf(disabledToken): {"disabled": true}, env.subjectOf(staleRole): {"role": "viewer"}} {
			if r := env.request(http.MethodPatch, "/api/v1/users/"+who, admin, change); r.status != http.StatusOK {
				t.Fatalf("changing a user: %d %s", r.status, r.raw)
			}
		}
		revokedKey := env.apiKey(admin, auth.ScopePaymentsRead)
		env.request(http.MethodDelete, "/api/v1/api-keys/"+env.subjectOf(revokedKey), admin, nil)
		expiredKey := env.apiKey(admin, auth.ScopePaymentsRead)
		// Its end brought forward behind the server's back: the server had never read it.
		expiredID, err := db.Ent.APIKey.Query().Where(apikey.Prefix(expiredKey[:len(auth.TestKeyPrefix)+8])).OnlyID(databasetest.AsMerchant())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec(`UPDATE api_keys SET expires_at = $1 WHERE id = $2`, now.Add(-time.Minute).UTC(), expiredID); err != nil {
			t.Fatal(err)
		}
		goodKey := env.apiKey(admin, auth.ScopePaymentsRead)

		for _, tt := range []struct {
			name    string
			headers []string
			code    string
		}{
			{"alg none", bearer(unsignedToken(t)), "token_invalid"},
			{"RS256 instead of HS256", bearer(signed(jwt.SigningMethodRS256, claims(viewerID, "viewer", time.Minute), rsaKey)), "token_invalid"},
			{"HS512 with the right secret", bearer(signed(jwt.SigningMethodHS512, claims(viewerID, "viewer", time.Minute), []byte(testJWTSecret))), "token_invalid"},
			{"tampered payload", bearer(tampered), "token_invalid"},
			{"expired", bearer(expiredToken(t, env)), "token_expired"},
			{"unknown subject", bearer(signed(jwt.SigningMethodHS256, claims("usr_nobody", "admin", time.Minute), []byte(testJWTSecret))), "token_invalid"},
			{"ten-year lifetime", bearer(signed(jwt.SigningMethodHS256, claims(viewerID, "viewer", 10*365*24*time.Hour), []byte(testJWTSecret))), "token_invalid"},
			{"revoked", bearer(revoked), "token_revoked"},
			{"logged out", bearer(loggedOut), "token_revoked"},
			{"family of a reused refresh token", bearer(familyAccess), "token_revoked"},
			{"refresh token as access token", bearer(liveRefresh), "token_invalid"},
			{"disabled user's token", bearer(disabledToken), "token_revoked"},
			{"disabled user's key", bearer(disabledKey), "token_revoked"},
			{"token of a role since changed", bearer(staleRole), "token_revoked"},
			{"revoked key", []string{"X-API-Key", revokedKey}, "token_revoked"},
			{"expired key", []string{"X-API-Key", expiredKey}, "token_expired"},
			{"unknown key", bearer(auth.TestKeyPrefix + strings.Repeat("A", 43)), "token_invalid"},
			{"live key on a test server", bearer(auth.LiveKeyPrefix + goodKey[len(auth.TestKeyPrefix):]), "token_invalid"},
			{"truncated key", bearer(goodKey[:len(goodKey)-1]), "token_invalid"},
			{"access token in X-API-Key", []string{"X-API-Key", viewer}, "token_invalid"},
			{"key in both headers", []string{"X-API-Key", goodKey, "Authorization", "Bearer " + goodKey}, "token_invalid"},
		} {
			r := env.request(http.MethodGet, "/api/v1/payments", "", nil, tt.headers...)
			if code, _ := r.errorCode(); r.status != http.StatusUnauthorized || code != tt.code {
				t.Errorf("REST, %s = %d %s, want %s", tt.name, r.status, r.raw, tt.code)
			}
			_, errs := env.graphql("", `{ payments(first: 1) { totalCount } }`, nil, tt.headers...)
			if len(errs) != 1 || errs[0].code() != tt.code {
				t.Errorf("GraphQL, %s = %+v, want %s", tt.name, errs, tt.code)
			}
		}
		if status, _ := env.answers(goodKey); status != http.StatusOK {
			t.Errorf("the good key answered %d", status)
		}
	})
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// TestKeyUseSurvivesAFailedWrite: when writing the keys' last use fails (the database is away),
// the uses are written by the next call rather than lost.
func TestKeyUseSurvivesAFailedWrite(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		key := env.apiKey(env.tokenFor("developer"), "payments:read")
		if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
			t.Fatalf("a request with the key = %d %s", r.status, r.raw)
		}
		keeper := env.app.services.auth.APIKeyKeeper()
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		if err := keeper.RecordUse(gone); err == nil {
			t.Fatal("recording uses with the database out of reach succeeded")
		}
		if err := keeper.RecordUse(context.Background()); err != nil {
			t.Fatal(err)
		}
		keys, err := db.Ent.APIKey.Query().All(databasetest.AsMerchant())
		if err != nil || len(keys) != 1 || keys[0].LastUsedAt == nil {
			t.Errorf("after a failed write and a good one, the key's last use = %+v, %v", keys, err)
		}
	})
}
