package app

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/ent/webhookdelivery"
	"github.com/paygate/paygate/ent/webhookendpoint"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/tenant"
)

// TestMerchantsSeeOnlyTheirOwn walks every operation's entry paths (the authorisation matrix's)
// as another merchant's people: a token of each role, a key of each scope, and platform staff
// acting for that merchant. Every path names the default merchant's objects (its payment, refund,
// event, endpoint, delivery, user, keys). No answer may show an object of the default merchant
// that the request did not name, and an answer to a request naming one must be exactly the
// answer to the same request naming an id that does not exist. The platform's operations are
// refused to the merchant's own people.
func TestMerchantsSeeOnlyTheirOwn(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		m := newMatrix(t, env)
		type person struct {
			name, credential string
			scopes           []string
			headers          []string
		}
		var people []person
		for _, role := range []string{"admin", "operator", "developer", "viewer"} {
			people = append(people, person{name: "its " + role, credential: env.merchantToken(m.merchant, role), scopes: auth.ScopesOf(role)})
		}
		for _, scope := range auth.ScopesOf("admin") {
			people = append(people, person{name: "its key with " + scope, credential: env.apiKey(people[0].credential, scope), scopes: []string{scope}})
		}
		people = append(people, person{name: "platform staff acting for it", credential: m.admin, scopes: env.scopesOf("admin"),
			headers: []string{"Paygate-Merchant", m.merchant}})

		checked := 0
		for _, op := range auth.Operations {
			if op.Scope == "" {
				continue // one's own session, or open to anyone
			}
			for _, who := range people {
				if !slices.Contains(who.scopes, op.Scope) {
					continue // refused for the scope, as the matrix shows
				}
				if op.Platform {
					if who.headers != nil {
						continue // platform staff see the platform's, whoever they act for
					}
					for _, e := range m.entries[op.Name](who.credential) {
						if e.path != "" {
							if r := env.request(e.method, e.path, who.credential, e.body); r.status != http.StatusForbidden {
								t.Errorf("%s %s, %s = %d %.200s; want 403: the platform's", e.method, e.path, who.name, r.status, r.raw)
							}
						}
						if e.query != "" {
							if _, errs := env.graphql(who.credential, e.query, e.variables); len(errs) == 0 || errs[0].code() != "forbidden" {
								t.Errorf("%s, %s = %+v; want forbidden: the platform's", e.query, who.name, errs)
							}
						}
					}
					continue
				}
				entries := m.entries[op.Name](who.credential)
				// Read after the entries are made: some make an object of the default merchant's
				// for each request (an authorisation to capture, an endpoint to delete).
				theirs := defaultMerchantIDs(t, env)
				for _, e := range entries {
					named := idsIn(e.path, e.body, e.variables)
					var defaults []string // the default merchant's objects the request names
					for _, id := range named {
						if _, ok := theirs[id]; ok {
							defaults = append(defaults, id)
						}
					}
					missing := func(text string) string {
						for _, id := range defaults {
							text = strings.ReplaceAll(text, id, prefixid.Prefix(id)+"_"+strings.Repeat("z", prefixid.Length))
						}
						return text
					}
					compare := func(how, got, instead string) {
						t.Helper()
						checked++
						for id := range theirs {
							if strings.Contains(got, id) && !slices.Contains(named, id) {
								t.Errorf("%s, %s: the answer shows the default merchant's %s: %.300s", how, who.name, id, got)
							}
						}
						if len(defaults) > 0 && normalized(got) != normalized(instead) {
							t.Errorf("%s, %s: naming the default merchant's %v answers\n%.400s\nnaming ids that do not exist answers\n%.400s", how, who.name, defaults, got, instead)
						}
					}
					if e.path != "" {
						r := env.request(e.method, e.path, who.credential, e.body, who.headers...)
						instead := r
						if len(defaults) > 0 {
							instead = env.request(e.method, missing(e.path), who.credential, remarshal(t, e.body, missing), who.headers...)
						}
						compare(e.method+" "+e.path, r.raw, instead.raw)
					}
					if e.query != "" {
						r := env.request(http.MethodPost, "/query", who.credential, map[string]any{"query": e.query, "variables": e.variables}, who.headers...)
						instead := r
						if len(defaults) > 0 {
							instead = env.request(http.MethodPost, "/query", who.credential,
								map[string]any{"query": e.query, "variables": remarshal(t, e.variables, missing)}, who.headers...)
						}
						compare(e.query, r.raw, instead.raw)
					}
				}
			}
		}
		if checked < 100 {
			t.Errorf("only %d answers checked: the walk shows nothing", checked)
		}
	})
}

// idPattern matches the ids Paygate makes (pay_..., re_..., usr_...).
var idPattern = regexp.MustCompile(`\b[a-z]{2,3}_[0-9a-z]{26}(?:[0-9a-z]{3})?\b`)

// idsIn returns the ids a request names in its path, body or variables.
func idsIn(path string, parts ...any) []string {
	text := path
	for _, part := range parts {
		encoded, _ := json.Marshal(part)
		text += " " + string(encoded)
	}
	return idPattern.FindAllString(text, -1)
}

// normalized is an answer with what differs from one request to the next taken out: the ids
// (what was named, what was made) and the request's id.
// GraphQL's errors come in the order the fields finished, so they are sorted.
func normalized(answer string) string {
	answer = requestIDPattern.ReplaceAllString(idPattern.ReplaceAllString(answer, "<id>"), "<request>")
	var decoded map[string]any
	if json.Unmarshal([]byte(answer), &decoded) != nil {
		return answer
	}
	if errs, ok := decoded["errors"].([]any); ok {
		slices.SortFunc(errs, func(a, b any) int {
			ea, _ := json.Marshal(a)
			eb, _ := json.Marshal(b)
			return strings.Compare(string(ea), string(eb))
		})
	}
	encoded, _ := json.Marshal(decoded)
	return string(encoded)
}

var requestIDPattern = regexp.MustCompile(`req_[0-9a-f]+`)

// remarshal returns v with its JSON rewritten by edit (nil stays nil).
func remarshal(t *testing.T, v any, edit func(string) string) any {
	t.Helper()
	if v == nil {
		return nil
	}
	encoded, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal([]byte(edit(string(encoded))), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// defaultMerchantIDs are the ids of everything the default merchant owns now.
func defaultMerchantIDs(t *testing.T, env *testEnv) map[string]struct{} {
	t.Helper()
	ctx := tenant.For(context.Background(), tenant.DefaultMerchant)
	client := env.db.Ent
	ids := map[string]struct{}{}
	for _, list := range [][]string{
		client.Payment.Query().Select(payment.FieldID).StringsX(ctx),
		client.Refund.Query().Select(refund.FieldID).StringsX(ctx),
		client.Event.Query().Select(event.FieldID).StringsX(ctx),
		client.WebhookEndpoint.Query().Select(webhookendpoint.FieldID).StringsX(ctx),
		client.WebhookDelivery.Query().Select(webhookdelivery.FieldID).StringsX(ctx),
		client.User.Query().Select(user.FieldID).StringsX(ctx),
		client.APIKey.Query().Select(apikey.FieldID).StringsX(ctx),
	} {
		for _, id := range list {
			ids[id] = struct{}{}
		}
	}
	return ids
}

// TestPlatformStaffManageMerchants: platform staff make, list, rename and disable merchants over
// REST and GraphQL, and act for one with Paygate-Merchant; a merchant's admin manages its own
// users and nothing of the platform's; an unknown or disabled merchant is refused clearly, and a
// disabled merchant's credentials stop.
func TestPlatformStaffManageMerchants(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	staff := env.tokenFor("admin")
	r := env.request(http.MethodPost, "/api/v1/merchants", staff, map[string]any{"name": "  Shop One "})
	shop := str(get(r.body, "data", "id"))
	if r.status != http.StatusCreated || !strings.HasPrefix(shop, "mer_") || str(get(r.body, "data", "name")) != "Shop One" ||
		str(get(r.body, "data", "status")) != "active" || str(get(r.body, "data", "object")) != "merchant" {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	made := env.mustGraphQL(staff, `mutation { createMerchant(input: {name: "Shop Two"}) { id name status } }`, nil)
	if str(get(made, "createMerchant", "status")) != "active" {
		t.Errorf("createMerchant = %v", made)
	}
	for _, bad := range []struct {
		body        any
		status      int
		code, param string
	}{
		{map[string]any{"name": ""}, 400, "missing_field", "name"},
		{map[string]any{"name": "   "}, 400, "missing_field", "name"},
		{map[string]any{"name": strings.Repeat("x", 101)}, 400, "invalid_request", "name"},
		{map[string]any{"name": "a\u0001b"}, 400, "invalid_request", "name"},
		{map[string]any{"name": "x", "extra": true}, 400, "invalid_request", "extra"},
	} {
		r := env.request(http.MethodPost, "/api/v1/merchants", staff, bad.body)
		if code, param := r.errorCode(); r.status != bad.status || code != bad.code || param != bad.param {
			t.Errorf("create %v = %d %s", bad.body, r.status, r.raw)
		}
	}
	listed, _ := env.listIDs(staff, "/api/v1/merchants")
	if len(listed) != 3 || listed[0] != tenant.DefaultMerchant {
		t.Errorf("merchants = %v, want the default one and the two made", listed)
	}
	if page := env.mustGraphQL(staff, `{ merchants(first: 1) { hasMore merchants { id } } }`, nil); get(page, "merchants", "hasMore") != true {
		t.Errorf("merchants(first: 1) = %v", page)
	}

	// Acting for the shop, the staff make its admin, who logs in and takes a payment.
	forShop := []string{"Paygate-Merchant", shop}
	r = env.request(http.MethodPost, "/api/v1/users", staff, map[string]any{"email": "owner@shop.example", "password": testPassword, "role": "admin"}, forShop...)
	if r.status != http.StatusCreated || str(get(r.body, "data", "merchant_id")) != shop || get(r.body, "data", "platform") != false {
		t.Fatalf("the shop's admin = %d %s", r.status, r.raw)
	}
	owner, _ := env.login("owner@shop.example")
	// A rule routes the shop's dollars to Checkout.com; everyone else's go to Stripe still.
	doc := env.readConfig(staff)
	doc["routing"].(map[string]any)["rules"] = append(doc["routing"].(map[string]any)["rules"].([]any),
		map[string]any{"name": "the shop", "merchants": []string{shop}, "providers": []map[string]any{{"provider": "checkout", "weight": 1}}})
	if r := env.request(http.MethodPut, configPath, staff, withoutAuthor(doc)); r.status != http.StatusOK {
		t.Fatalf("PUT = %d %s", r.status, r.raw)
	}
	paid := str(get(env.request(http.MethodPost, "/api/v1/payments", owner, paymentBody("12.00", "USD", "4242424242424242")).body, "data", "id"))
	if routed := env.request(http.MethodGet, "/api/v1/payments/"+paid, owner, nil); str(get(routed.data(), "provider")) != "checkout" {
		t.Errorf("the shop's payment = %s, want it routed to checkout by the shop's rule", routed.raw)
	}
	ours := str(get(env.request(http.MethodPost, "/api/v1/payments", staff, paymentBody("12.00", "USD", "4242424242424242")).body, "data", "id"))
	if routed := env.request(http.MethodGet, "/api/v1/payments/"+ours, staff, nil); str(get(routed.data(), "provider")) != "stripe" {
		t.Errorf("the default merchant's payment = %s, want stripe", routed.raw)
	}
	// The system figures are the platform's, or one merchant's for the staff acting for it.
	counted := func(headers ...string) string {
		r := env.request(http.MethodGet, "/api/v1/monitoring/metrics", staff, nil, headers...)
		return str(get(r.data(), "payments", "by_status", "succeeded"))
	}
	if all, shops := counted(), counted("Paygate-Merchant", shop); all != "2" || shops != "1" {
		t.Errorf("succeeded payments: %s on the platform, %s of the shop; want 2 and 1", all, shops)
	}
	if ids, _ := env.listIDs(owner, "/api/v1/payments"); !slices.Equal(ids, []string{paid}) {
		t.Errorf("the shop's payments = %v, want its one", ids)
	}
	if ids, _ := env.listIDs(staff, "/api/v1/payments"); slices.Contains(ids, paid) {
		t.Errorf("the default merchant's list shows the shop's payment")
	}
	if r := env.request(http.MethodGet, "/api/v1/payments/"+paid, staff, nil, forShop...); r.status != http.StatusOK {
		t.Errorf("the staff acting for the shop read its payment: %d %s", r.status, r.raw)
	}
	key := env.apiKey(owner, auth.ScopePaymentsRead)
	if r := env.request(http.MethodPost, "/api/v1/api-keys", staff, map[string]any{"name": "x", "scopes": []string{auth.ScopePaymentsRead}}, forShop...); r.status != http.StatusForbidden {
		t.Errorf("a key made by the staff acting for the shop = %d %s", r.status, r.raw)
	}

	// The shop's admin is no platform staff.
	for _, refused := range []struct{ method, path, code string }{
		{http.MethodGet, "/api/v1/merchants", "forbidden"},
		{http.MethodGet, configPath, "forbidden"},
		{http.MethodGet, "/api/v1/monitoring/alerts", "forbidden"},
		{http.MethodGet, "/api/v1/webhooks/logs", "forbidden"},
	} {
		if r := env.request(refused.method, refused.path, owner, nil); r.status != http.StatusForbidden {
			t.Errorf("the shop's admin: %s %s = %d %s", refused.method, refused.path, r.status, r.raw)
		}
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", owner, nil, "Paygate-Merchant", tenant.DefaultMerchant); r.status != http.StatusForbidden {
		t.Errorf("the shop's admin acting for the default merchant = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", owner, nil, forShop...); r.status != http.StatusOK {
		t.Errorf("the shop's admin naming its own merchant = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPost, "/api/v1/users", owner, map[string]any{"email": "x@shop.example", "password": testPassword, "role": "viewer", "platform": true}); r.status != http.StatusForbidden {
		t.Errorf("the shop's admin making platform staff = %d %s", r.status, r.raw)
	}
	if users, _ := env.listIDs(owner, "/api/v1/users"); len(users) != 1 {
		t.Errorf("the shop's admin lists %d users, want itself alone", len(users))
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", staff, nil, "Paygate-Merchant", "mer_"+strings.Repeat("z", 26)); r.status != http.StatusForbidden ||
		str(get(r.body, "error", "code")) != "merchant_unavailable" || str(get(r.body, "error", "param")) != "Paygate-Merchant" {
		t.Errorf("acting for an unknown merchant = %d %s", r.status, r.raw)
	}

	// Disabled, the shop's token and key stop, and no one acts for it; enabled again, they work.
	if r := env.request(http.MethodPatch, "/api/v1/merchants/"+tenant.DefaultMerchant, staff, map[string]any{"status": "disabled"}); r.status != http.StatusConflict {
		t.Errorf("disabling one's own merchant = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPatch, "/api/v1/merchants/"+shop, staff, map[string]any{"status": "paused"}); r.status != http.StatusBadRequest {
		t.Errorf("an unknown status = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPatch, "/api/v1/merchants/mer_"+strings.Repeat("z", 26), staff, map[string]any{"name": "x"}); r.status != http.StatusNotFound {
		t.Errorf("renaming no merchant = %d %s", r.status, r.raw)
	}
	renamed := env.mustGraphQL(staff, `mutation($id: ID!) { updateMerchant(id: $id, input: {status: "disabled"}) { status } }`, map[string]any{"id": shop})
	if str(get(renamed, "updateMerchant", "status")) != "disabled" {
		t.Fatalf("disable = %v", renamed)
	}
	for _, credential := range []string{owner, key} {
		if r := env.request(http.MethodGet, "/api/v1/payments", credential, nil); r.status != http.StatusUnauthorized || str(get(r.body, "error", "code")) != "token_revoked" {
			t.Errorf("a disabled merchant's credential = %d %s", r.status, r.raw)
		}
	}
	if r := env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": "owner@shop.example", "password": testPassword}); r.status != http.StatusForbidden {
		t.Errorf("a disabled merchant's user logging in = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", staff, nil, forShop...); str(get(r.body, "error", "code")) != "merchant_unavailable" {
		t.Errorf("acting for a disabled merchant = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPatch, "/api/v1/merchants/"+shop, staff, map[string]any{"status": "active"}); r.status != http.StatusOK {
		t.Fatalf("enable = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
		t.Errorf("the key, its merchant enabled again = %d %s", r.status, r.raw)
	}

	// An admin of the default merchant who is no platform staff touches no staff member's account,
	// key or token, and does not count as the platform's last admin.
	r = env.request(http.MethodPost, "/api/v1/users", staff, map[string]any{"email": "clerk@example.com", "password": testPassword, "role": "admin"})
	if r.status != http.StatusCreated || get(r.body, "data", "platform") != false {
		t.Fatalf("a plain admin = %d %s", r.status, r.raw)
	}
	clerk, _ := env.login("clerk@example.com")
	staffKey := str(get(env.request(http.MethodPost, "/api/v1/api-keys", staff, map[string]any{"name": "prometheus", "scopes": []string{auth.ScopeMonitoringRead}}).body, "data", "id"))
	if keys, _ := env.listIDs(clerk, "/api/v1/api-keys"); slices.Contains(keys, staffKey) {
		t.Errorf("a plain admin lists the staff's keys: %v", keys)
	}
	if r := env.request(http.MethodDelete, "/api/v1/api-keys/"+staffKey, clerk, nil); r.status != http.StatusNotFound {
		t.Errorf("a plain admin revoking the staff's key = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPost, "/api/v1/auth/revoke", clerk, map[string]any{"token": staff}); r.status != http.StatusForbidden {
		t.Errorf("a plain admin revoking the staff's token = %d %s", r.status, r.raw)
	}
	staffID := env.subjectOf(staff)
	if r := env.request(http.MethodPatch, "/api/v1/users/"+staffID, clerk, map[string]any{"disabled": true}); r.status != http.StatusForbidden {
		t.Errorf("a plain admin disabling the staff = %d %s", r.status, r.raw)
	}
	if r := env.request(http.MethodPatch, "/api/v1/users/"+staffID, staff, map[string]any{"role": "viewer"}); r.status != http.StatusConflict {
		t.Errorf("the platform's last admin demoting themselves = %d %s", r.status, r.raw)
	}
}

// TestDisablingAMerchantStopsItsKeysOnEveryServer: two servers on one database; a merchant
// disabled through one refuses its keys there at once, and on the other once it reads the
// merchants, which it does every second.
func TestDisablingAMerchantStopsItsKeysOnEveryServer(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		one, two := servers[0], servers[1]
		staff := one.tokenFor("admin")
		shop := str(get(one.request(http.MethodPost, "/api/v1/merchants", staff, map[string]any{"name": "Shop"}).body, "data", "id"))
		owner := one.merchantToken(shop, "admin")
		key := one.apiKey(owner, auth.ScopePaymentsRead)
		for i, s := range servers {
			if r := s.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
				t.Fatalf("server %d, before = %d %s", i, r.status, r.raw)
			}
		}
		if r := one.request(http.MethodPatch, "/api/v1/merchants/"+shop, staff, map[string]any{"status": "disabled"}); r.status != http.StatusOK {
			t.Fatalf("disable = %d %s", r.status, r.raw)
		}
		if r := one.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusUnauthorized {
			t.Errorf("the server that disabled it, at once = %d %s", r.status, r.raw)
		}
		// What the other server's loop does every second.
		if err := two.app.services.auth.Directory().Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := two.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusUnauthorized {
			t.Errorf("the other server, after its next read = %d %s", r.status, r.raw)
		}
	})
}
