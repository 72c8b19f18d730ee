package app

import (
	"net/http"
	"slices"
	"testing"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/tenant"
)

// TestViewerSaysWhoACredentialIs: viewer answers the signed-in user's email, role, scopes and
// standing, the merchant a platform user acts for beside their own, an API key's own scopes and
// no role; and nothing without a credential.
func TestViewerSaysWhoACredentialIs(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		const query = `{ viewer { email credential role scopes platform merchantId homeMerchantId } }`
		email := env.staffWith("operator")
		session, _ := env.login(email)
		merchant := str(get(env.request(http.MethodPost, "/api/v1/merchants", env.tokenFor("admin"), map[string]any{"name": "Acme Shoes"}).data(), "id"))

		r := env.request(http.MethodPost, "/query", session, map[string]any{"query": query}, "Paygate-Merchant", merchant)
		viewer, _ := get(r.body, "data", "viewer").(map[string]any)
		scopes := strs(get(viewer, "scopes"))
		if viewer["email"] != email || viewer["credential"] != "session" || viewer["role"] != "operator" || viewer["platform"] != true ||
			viewer["merchantId"] != merchant || viewer["homeMerchantId"] != tenant.DefaultMerchant || !slices.Equal(scopes, auth.ScopesOf("operator")) {
			t.Errorf("a platform operator acting for %s: %d %s", merchant, r.status, r.raw)
		}

		key := env.apiKey(env.tokenFor("admin"), "payments:read")
		out := env.mustGraphQL(key, query, nil)
		if get(out, "viewer", "credential") != "api_key" || get(out, "viewer", "role") != nil || !slices.Equal(strs(get(out, "viewer", "scopes")), []string{"payments:read"}) ||
			get(out, "viewer", "merchantId") != tenant.DefaultMerchant || get(out, "viewer", "platform") != true { // the key of a platform admin
			t.Errorf("an API key: %v", out)
		}

		if _, errs := env.graphql("", query, nil); len(errs) != 1 || errs[0].Extensions["code"] != "unauthenticated" {
			t.Errorf("no credential: %+v", errs)
		}
	})
}

func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, len(items))
	for i, item := range items {
		out[i] = str(item)
	}
	return out
}
