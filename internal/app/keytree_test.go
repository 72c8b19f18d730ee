package app

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/tenant"
)

// TestKeysMadeByKeysNeverOutliveThem: a key that makes keys passes on no more than its own life.
// The keys it makes expire with it (by default) or sooner, say which key made them, and stop on
// every server when it is revoked, down the generations; a key made while its parent is being
// revoked is refused or revoked with it, never left working.
func TestKeysMadeByKeysNeverOutliveThem(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		one, two := servers[0], servers[1]
		developer := one.tokenFor("developer")
		makerScopes := []string{auth.ScopeAPIKeysManage, auth.ScopePaymentsRead}
		expiry := one.clock.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)

		// A parent with an expiry; a child asking for none gets the parent's.
		r := one.request(http.MethodPost, "/api/v1/api-keys", developer, map[string]any{"name": "deployer", "scopes": makerScopes, "expires_at": expiry.Format(time.RFC3339)})
		parent, parentID := str(get(r.body, "data", "key")), str(get(r.body, "data", "id"))
		if r.status != http.StatusCreated || get(r.body, "data", "parent_id") != nil {
			t.Fatalf("the parent = %d %s", r.status, r.raw)
		}
		r = two.request(http.MethodPost, "/api/v1/api-keys", parent, map[string]any{"name": "ci job", "scopes": makerScopes})
		child, childID := str(get(r.body, "data", "key")), str(get(r.body, "data", "id"))
		if r.status != http.StatusCreated || str(get(r.body, "data", "parent_id")) != parentID || str(get(r.body, "data", "expires_at")) != expiry.Format(time.RFC3339) {
			t.Fatalf("a child asking no expiry = %d %s, want the parent's %s", r.status, r.raw, expiry.Format(time.RFC3339))
		}
		// Asking to outlive the parent is refused, through either surface, and nothing is made.
		later := expiry.Add(time.Minute).Format(time.RFC3339)
		r = one.request(http.MethodPost, "/api/v1/api-keys", child, map[string]any{"name": "x", "scopes": []string{auth.ScopePaymentsRead}, "expires_at": later})
		if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "expires_at" {
			t.Errorf("a grandchild outliving its parent = %d %s", r.status, r.raw)
		}
		_, errs := two.graphql(child, `mutation($at: Time) { createAPIKey(input: {name: "x", scopes: ["payments:read"], expiresAt: $at}) { key } }`, map[string]any{"at": later})
		if len(errs) != 1 || errs[0].code() != "invalid_request" {
			t.Errorf("a grandchild outliving its parent over GraphQL: %v", errs)
		}
		// A sooner expiry is kept, and GraphQL says who made the key.
		sooner := expiry.Add(-time.Hour)
		made := two.mustGraphQL(child, `mutation($at: Time) { createAPIKey(input: {name: "grandchild", scopes: ["payments:read"], expiresAt: $at}) { key apiKey { id parentId expiresAt } } }`,
			map[string]any{"at": sooner.Format(time.RFC3339)})
		grandchild := str(get(made, "createAPIKey", "key"))
		if str(get(made, "createAPIKey", "apiKey", "parentId")) != childID || !strings.HasPrefix(str(get(made, "createAPIKey", "apiKey", "expiresAt")), sooner.Format("2006-01-02T15:04:05")) {
			t.Errorf("the grandchild = %v", made)
		}
		if n := keysMadeBy(t, one, childID); n != 1 {
			t.Errorf("refused requests made keys: %d keys made by the child", n)
		}
		// The list says which key made which.
		r = one.request(http.MethodGet, "/api/v1/api-keys", developer, nil)
		parents := map[string]any{}
		for _, k := range get(r.body, "data").([]any) {
			parents[str(get(k, "id"))] = get(k, "parent_id")
		}
		if len(parents) != 3 || parents[parentID] != nil || parents[childID] != parentID {
			t.Errorf("the list = %d %s", r.status, r.raw)
		}

		// When the parent expires, so has every key below it, on both servers.
		for _, s := range servers {
			s.clock.Advance(2*time.Hour + time.Second)
		}
		for _, key := range []string{parent, child, grandchild} {
			for i, s := range servers {
				if status, code := s.answers(key); status != http.StatusUnauthorized || code != "token_expired" {
					t.Errorf("server %d: a key below an expired parent = %d %s", i, status, code)
				}
			}
		}

		// Revoking a key revokes what it made, and what those made, on every server.
		developer = one.tokenFor("developer") // the first one's token has expired with the keys
		root := one.apiKey(developer, makerScopes...)
		rootID := keyIDOf(t, one, root)
		middle := two.apiKey(root, makerScopes...)
		leaf := one.apiKey(middle, auth.ScopePaymentsRead)
		unrelated := one.apiKey(developer, auth.ScopePaymentsRead)
		for _, s := range servers {
			if status, _ := s.answers(leaf); status != http.StatusOK {
				t.Fatalf("the leaf before the revocation answered %d", status)
			}
		}
		if r := two.request(http.MethodDelete, "/api/v1/api-keys/"+rootID, developer, nil); r.status != http.StatusOK {
			t.Fatalf("revoke = %d %s", r.status, r.raw)
		}
		for _, key := range []string{root, middle, leaf} {
			for _, s := range servers {
				waitFor(t, "a key below a revoked one to be refused", func() bool {
					status, code := s.answers(key)
					return status == http.StatusUnauthorized && code == "token_revoked"
				})
			}
		}
		if status, _ := one.answers(unrelated); status != http.StatusOK {
			t.Errorf("a key of the same user made by no revoked key answered %d", status)
		}
		revoked, err := one.db.Ent.APIKey.Query().Where(apikey.RevokedAtNotNil(), apikey.IDIn(rootID, keyIDOf(t, one, middle), keyIDOf(t, one, leaf))).Count(databasetest.AsMerchant())
		if err != nil || revoked != 3 {
			t.Errorf("revoked rows = %d, %v; want the root, the middle and the leaf", revoked, err)
		}

		// Keys made while their parent is revoked: each is refused, or revoked with it.
		racer := one.apiKey(developer, makerScopes...)
		racerID := keyIDOf(t, one, racer)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				servers[i%2].request(http.MethodPost, "/api/v1/api-keys", racer, map[string]any{"name": "racing", "scopes": []string{auth.ScopePaymentsRead}})
			})
		}
		wg.Go(func() { two.request(http.MethodDelete, "/api/v1/api-keys/"+racerID, developer, nil) })
		wg.Wait()
		inForce, err := one.db.Ent.APIKey.Query().Where(apikey.ParentID(racerID), apikey.RevokedAtIsNil()).Count(databasetest.AsMerchant())
		if err != nil || inForce != 0 {
			t.Errorf("keys made by a revoked key left in force: %d, %v", inForce, err)
		}
	})
}

// TestAPIKeyLimitHoldsAcrossServers: with a user 5 keys short of the limit, 30 creates at once
// through two servers make exactly 5.
func TestAPIKeyLimitHoldsAcrossServers(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		developer := servers[0].tokenFor("developer")
		userID := servers[0].subjectOf(developer)
		ctx := tenant.For(context.Background(), tenant.DefaultMerchant)
		now := time.Now()
		for i := range auth.MaxAPIKeysPerUser - 5 {
			// Made behind the API's back, fast: only their count matters.
			if err := servers[0].db.Ent.APIKey.Create().SetName("filler").SetKeyHash(fmt.Sprintf("%064d", i)).
				SetPrefix("pk_test_filler").SetScopes([]string{auth.ScopePaymentsRead}).SetUserID(userID).SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		statuses := make([]int, 30)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = servers[i%2].request(http.MethodPost, "/api/v1/api-keys", developer, map[string]any{"name": "racing", "scopes": []string{auth.ScopePaymentsRead}}).status
			})
		}
		wg.Wait()
		created := 0
		for _, status := range statuses {
			if status == http.StatusCreated {
				created++
			}
		}
		held, err := servers[0].db.Ent.APIKey.Query().Where(apikey.UserID(userID), apikey.RevokedAtIsNil()).Count(ctx)
		if err != nil || held != auth.MaxAPIKeysPerUser || created != 5 {
			t.Errorf("%d keys in force (%v), %d created (%v); want %d and 5", held, err, created, statuses, auth.MaxAPIKeysPerUser)
		}
	})
}

// keysMadeBy counts the keys whose parent is parentID.
func keysMadeBy(t *testing.T, e *testEnv, parentID string) int {
	t.Helper()
	n, err := e.db.Ent.APIKey.Query().Where(apikey.ParentID(parentID)).Count(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keyIDOf returns the id of the key with this value.
func keyIDOf(t *testing.T, e *testEnv, key string) string {
	t.Helper()
	id, err := e.db.Ent.APIKey.Query().Where(apikey.Prefix(key[:len(auth.TestKeyPrefix)+8])).OnlyID(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return id
}
