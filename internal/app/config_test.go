package app

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/settings"
)

const configPath = "/api/v1/admin/config"

// configFields selects the whole document over GraphQL.
const configFields = `version updatedAt updatedBy
	routing { rules { name currency brand amountGte amountLte providers { provider weight } } fallback }
	providers { name enabled timeoutMs }
	circuitBreaker { windowS minRequests errorRate openS }
	webhookRetry { baseS factor maxAttempts }
	rateLimits { perSecond burst loginPerMinute }
	alerts { providerErrorRate refundShare }`

const updateConfigMutation = `mutation($in: ConfigInput!) { updateConfig(input: $in) { ` + configFields + ` } }`

// jsonValue is v as a client decodes it, so documents compare whatever Go type built them.
func jsonValue(t testing.TB, v any) any {
	t.Helper()
	var decoded any
	dec := json.NewDecoder(strings.NewReader(mustJSON(t, v)))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		t.Fatal(err)
	}
	return decoded
}

// withoutAuthor is a document without who wrote it and when, to compare what was written.
func withoutAuthor(doc map[string]any) map[string]any {
	rest := map[string]any{}
	for k, v := range doc {
		if k != "updated_at" && k != "updated_by" {
			rest[k] = v
		}
	}
	return rest
}

// copyDocument is a deep copy of a decoded document, to edit.
func copyDocument(t testing.TB, doc map[string]any) map[string]any {
	t.Helper()
	return jsonValue(t, doc).(map[string]any)
}

// gqlConfigInput is a document in GraphQL's ConfigInput shape.
func gqlConfigInput(doc settings.Document) map[string]any {
	rules := []any{}
	for _, r := range doc.Routing.Rules {
		providers := []any{}
		for _, w := range r.Providers {
			providers = append(providers, map[string]any{"provider": w.Provider, "weight": w.Weight})
		}
		rule := map[string]any{"name": r.Name, "providers": providers}
		if r.Currency != nil {
			rule["currency"] = r.Currency
		}
		if r.Brand != nil {
			rule["brand"] = r.Brand
		}
		if r.AmountGTE != nil {
			rule["amountGte"] = *r.AmountGTE
		}
		if r.AmountLTE != nil {
			rule["amountLte"] = *r.AmountLTE
		}
		rules = append(rules, rule)
	}
	providers := []any{}
	for name, p := range doc.Providers {
		providers = append(providers, map[string]any{"name": name, "enabled": p.Enabled, "timeoutMs": p.TimeoutMS})
	}
	return map[string]any{
		"version":        doc.Version,
		"routing":        map[string]any{"rules": rules, "fallback": doc.Routing.Fallback},
		"providers":      providers,
		"circuitBreaker": map[string]any{"windowS": doc.CircuitBreaker.WindowS, "minRequests": doc.CircuitBreaker.MinRequests, "errorRate": doc.CircuitBreaker.ErrorRate, "openS": doc.CircuitBreaker.OpenS},
		"webhookRetry":   map[string]any{"baseS": doc.WebhookRetry.BaseS, "factor": doc.WebhookRetry.Factor, "maxAttempts": doc.WebhookRetry.MaxAttempts},
		"rateLimits":     map[string]any{"perSecond": doc.RateLimits.PerSecond, "burst": doc.RateLimits.Burst, "loginPerMinute": doc.RateLimits.LoginPerMinute},
		"alerts":         map[string]any{"providerErrorRate": doc.Alerts.ProviderErrorRate, "refundShare": doc.Alerts.RefundShare},
	}
}

func TestConfigIsReadAndChangedByAdminsAlone(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin, _ := env.adminOf()

		doc := env.readConfig(admin)
		if want := jsonValue(t, defaultSettings()); !reflect.DeepEqual(any(doc), want) {
			t.Errorf("before any change GET = %v, want the default %v", doc, want)
		}
		data := env.mustGraphQL(admin, `{ config { `+configFields+` } }`, nil)
		if str(get(data, "config", "version")) != "1" || get(data, "config", "updatedBy") != nil ||
			get(data, "config", "providers", 0, "name") != "adyen" || str(get(data, "config", "providers", 2, "timeoutMs")) != "10000" ||
			get(data, "config", "routing", "rules", 0, "currency", 0) != "EUR" || str(get(data, "config", "circuitBreaker", "errorRate")) != "0.5" {
			t.Errorf("GraphQL config = %v", data)
		}

		type call struct {
			method, path string
			body         any
			query        string
			variables    map[string]any
		}
		calls := []call{
			{method: http.MethodGet, path: configPath, query: `{ config { version } }`},
			{method: http.MethodPut, path: configPath, body: doc,
				query:     `mutation($in: ConfigInput!) { updateConfig(input: $in) { version } }`,
				variables: map[string]any{"in": gqlConfigInput(defaultSettings())}},
			{method: http.MethodGet, path: configPath + "/history", query: `{ configHistory { version } }`},
		}
		for _, role := range []string{"viewer", "developer", "operator", ""} {
			token, status, code := "", http.StatusUnauthorized, "unauthenticated"
			if role != "" {
				token, status, code = env.tokenFor(role), http.StatusForbidden, "forbidden"
			}
			for _, c := range calls {
				r := env.request(c.method, c.path, token, c.body)
				if got, _ := r.errorCode(); r.status != status || got != code ||
					code == "forbidden" && !strings.Contains(str(get(r.body, "error", "message")), "config:write") {
					t.Errorf("%s %s as %q = %d %s", c.method, c.path, role, r.status, r.raw)
				}
				if _, errs := env.graphql(token, c.query, c.variables); len(errs) != 1 || errs[0].code() != code {
					t.Errorf("%s as %q = %+v, want %s", c.query, role, errs, code)
				}
			}
		}
		for path, allow := range map[string]string{configPath: "GET, PUT", configPath + "/history": "GET"} {
			r := env.request(http.MethodPost, path, admin, doc)
			if code, _ := r.errorCode(); r.status != http.StatusMethodNotAllowed || code != "method_not_allowed" || r.header.Get("Allow") != allow {
				t.Errorf("POST %s = %d Allow %q %s", path, r.status, r.header.Get("Allow"), r.raw)
			}
		}
		if got := env.readConfig(admin); str(got["version"]) != "1" {
			t.Errorf("after refused changes, version %v", got["version"])
		}
		if entries, _ := env.configHistory(admin, ""); len(entries) != 0 {
			t.Errorf("after refused changes, history %v", entries)
		}
	})
}

func TestConfigChangeIsVersionedAndAudited(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin, adminID := env.adminOf()
		original := env.readConfig(admin)

		// Big dollar payments go mostly to Adyen, and Checkout.com is turned off.
		change := copyDocument(t, original)
		rules := get(change, "routing", "rules").([]any)
		get(change, "routing").(map[string]any)["rules"] = append(rules, map[string]any{
			"name": "big-usd", "currency": []any{"USD"}, "amount_gte": "1000.00", "amount_lte": "5000.00",
			"providers": []any{map[string]any{"provider": "adyen", "weight": 3}, map[string]any{"provider": "stripe", "weight": 1}},
		})
		get(change, "providers", "checkout").(map[string]any)["enabled"] = false
		r := env.request(http.MethodPut, configPath, admin, change)
		if r.status != http.StatusOK {
			t.Fatalf("PUT = %d %s", r.status, r.raw)
		}
		updated := r.data()
		want := copyDocument(t, change)
		want["version"] = json.Number("2")
		if !reflect.DeepEqual(withoutAuthor(updated), withoutAuthor(want)) {
			t.Errorf("PUT answered %v, want %v", updated, want)
		}
		changedAt, err := time.Parse(time.RFC3339Nano, str(updated["updated_at"]))
		if updated["updated_by"] != adminID || err != nil || !strings.HasSuffix(str(updated["updated_at"]), "Z") || time.Since(changedAt) > time.Minute {
			t.Errorf("updated by %v at %v, want %s now", updated["updated_by"], updated["updated_at"], adminID)
		}
		if got := env.readConfig(admin); !reflect.DeepEqual(got, updated) {
			t.Errorf("GET after PUT = %v, want %v", got, updated)
		}

		// What GET answers is what PUT takes back: the document read, sent as it is.
		r = env.request(http.MethodPut, configPath, admin, env.readConfig(admin))
		if r.status != http.StatusOK || str(r.data()["version"]) != "3" {
			t.Fatalf("PUT of the document read = %d %s", r.status, r.raw)
		}
		want["version"] = json.Number("3")
		if !reflect.DeepEqual(withoutAuthor(r.data()), withoutAuthor(want)) {
			t.Errorf("round trip answered %v, want %v", r.data(), want)
		}

		entries, hasMore := env.configHistory(admin, "")
		if len(entries) != 3 || hasMore {
			t.Fatalf("history = %d entries, has_more %v: %v", len(entries), hasMore, entries)
		}
		for i, version := range []string{"3", "2", "1"} {
			if str(get(entries[i], "version")) != version || str(get(entries[i], "document", "version")) != version {
				t.Errorf("history[%d] = %v, want version %s", i, entries[i], version)
			}
		}
		second := entries[1]
		if get(second, "changed_by") != adminID || get(second, "changed_at") != updated["updated_at"] ||
			!reflect.DeepEqual(get(second, "document"), any(updated)) {
			t.Errorf("version 2 in history = %v", second)
		}
		previous, _ := get(second, "previous").(map[string]any)
		if !reflect.DeepEqual(withoutAuthor(previous), withoutAuthor(original)) || previous["updated_by"] != "system" {
			t.Errorf("version 2's previous = %v, want the default %v", previous, original)
		}
		if get(entries[2], "changed_by") != "system" || get(entries[2], "previous") != nil {
			t.Errorf("version 1 in history = %v", entries[2])
		}
		if r := env.request(http.MethodGet, configPath+"/history", admin, nil); !strings.Contains(r.raw, `"previous":null`) {
			t.Errorf("the first version's previous is not null: %s", r.raw)
		}
		if entries, hasMore := env.configHistory(admin, "limit=1"); len(entries) != 1 || str(get(entries[0], "version")) != "3" || !hasMore {
			t.Errorf("limit=1: %v, has_more %v", entries, hasMore)
		}
		if entries, hasMore := env.configHistory(admin, "limit=1&before=3"); len(entries) != 1 || str(get(entries[0], "version")) != "2" || !hasMore {
			t.Errorf("before=3: %v, has_more %v", entries, hasMore)
		}
		if entries, hasMore := env.configHistory(admin, "before=2"); len(entries) != 1 || str(get(entries[0], "version")) != "1" || hasMore {
			t.Errorf("before=2: %v, has_more %v", entries, hasMore)
		}
		for _, query := range []string{"limit=0", "limit=101", "limit=x", "before=0", "before=x", "after=1"} {
			param, _, _ := strings.Cut(query, "=")
			r := env.request(http.MethodGet, configPath+"/history?"+query, admin, nil)
			if code, got := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || got != param {
				t.Errorf("history?%s = %d %s", query, r.status, r.raw)
			}
		}

		// GraphQL sees the same document and history, and changes it for REST to see.
		data := env.mustGraphQL(admin, `{ config { `+configFields+` } configHistory(first: 2) { version changedBy changedAt previous { version } } }`, nil)
		rule := get(data, "config", "routing", "rules", 2)
		if str(get(data, "config", "version")) != "3" || get(data, "config", "updatedBy") != adminID ||
			get(rule, "name") != "big-usd" || get(rule, "amountGte") != "1000.00" || str(get(rule, "providers", 0, "weight")) != "3" ||
			get(data, "config", "providers", 1, "name") != "checkout" || get(data, "config", "providers", 1, "enabled") != false {
			t.Errorf("GraphQL config = %v", get(data, "config"))
		}
		if history := get(data, "configHistory"); str(get(history, 0, "version")) != "3" || str(get(history, 1, "previous", "version")) != "1" ||
			get(history, 1, "changedBy") != adminID || get(history, 1, "changedAt") != updated["updated_at"] {
			t.Errorf("GraphQL configHistory = %v", history)
		}
		in := defaultSettings()
		in.Version = 3
		in.RateLimits.PerSecond = 250
		in.RateLimits.Burst = 500
		data = env.mustGraphQL(admin, updateConfigMutation, map[string]any{"in": gqlConfigInput(in)})
		if str(get(data, "updateConfig", "version")) != "4" || get(data, "updateConfig", "updatedBy") != adminID {
			t.Errorf("updateConfig = %v", data)
		}
		got := env.readConfig(admin)
		in.Version = 4
		if !reflect.DeepEqual(withoutAuthor(got), withoutAuthor(jsonValue(t, in).(map[string]any))) {
			t.Errorf("GET after updateConfig = %v, want %v", got, jsonValue(t, in))
		}
	})
}

func TestConfigBadDocumentsChangeNothing(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin, _ := env.adminOf()
		if r := env.request(http.MethodPut, configPath, admin, env.readConfig(admin)); r.status != http.StatusOK {
			t.Fatalf("PUT = %d %s", r.status, r.raw)
		}
		stored := env.readConfig(admin)

		for _, tc := range []struct {
			name        string
			edit        func(doc map[string]any)
			code, param string
		}{
			{"unknown provider in a rule", func(d map[string]any) {
				get(d, "routing", "rules", 0, "providers", 0).(map[string]any)["provider"] = "paypal"
			},
				"invalid_request", "routing.rules[0].providers[0].provider"},
			{"unknown provider's settings", func(d map[string]any) {
				d["providers"].(map[string]any)["paypal"] = map[string]any{"enabled": true, "timeout_ms": 1000}
			}, "invalid_request", "providers.paypal"},
			{"unknown provider in the fallback", func(d map[string]any) { get(d, "routing").(map[string]any)["fallback"] = []any{"stripe", "bank"} },
				"invalid_request", "routing.fallback[1]"},
			{"weight 0", func(d map[string]any) { get(d, "routing", "rules", 1, "providers", 0).(map[string]any)["weight"] = 0 },
				"invalid_request", "routing.rules[1].providers[0].weight"},
			{"inverted amount range", func(d map[string]any) {
				rule := get(d, "routing", "rules", 0).(map[string]any)
				rule["amount_gte"], rule["amount_lte"] = "500.00", "100.00"
			}, "invalid_amount", "routing.rules[0].amount_gte"},
			{"no fallback", func(d map[string]any) { get(d, "routing").(map[string]any)["fallback"] = []any{} }, "invalid_request", "routing.fallback"},
			{"timeout too short", func(d map[string]any) { get(d, "providers", "stripe").(map[string]any)["timeout_ms"] = 5 },
				"invalid_request", "providers.stripe.timeout_ms"},
			{"error rate above 1", func(d map[string]any) { get(d, "circuit_breaker").(map[string]any)["error_rate"] = 1.5 },
				"invalid_request", "circuit_breaker.error_rate"},
			{"missing routing", func(d map[string]any) { delete(d, "routing") }, "missing_field", "routing"},
			{"missing providers", func(d map[string]any) { delete(d, "providers") }, "missing_field", "providers"},
			{"missing circuit_breaker", func(d map[string]any) { delete(d, "circuit_breaker") }, "missing_field", "circuit_breaker"},
			{"missing webhook_retry", func(d map[string]any) { delete(d, "webhook_retry") }, "missing_field", "webhook_retry"},
			{"null rate_limits", func(d map[string]any) { d["rate_limits"] = nil }, "missing_field", "rate_limits"},
			{"missing version", func(d map[string]any) { delete(d, "version") }, "missing_field", "version"},
			{"empty circuit_breaker", func(d map[string]any) { d["circuit_breaker"] = map[string]any{} }, "invalid_request", "circuit_breaker.window_s"},
			{"version as a string", func(d map[string]any) { d["version"] = "2" }, "invalid_request", "version"},
			{"unknown field", func(d map[string]any) { d["routing_rules"] = []any{} }, "invalid_request", "routing_rules"},
			{"unknown nested field", func(d map[string]any) { get(d, "routing", "rules", 0).(map[string]any)["Name"] = "x" }, "invalid_request", "routing.rules[0].Name"},
			{"unknown provider field", func(d map[string]any) { get(d, "providers", "adyen").(map[string]any)["timeout"] = 100 },
				"invalid_request", "providers.adyen.timeout"},
		} {
			doc := copyDocument(t, stored)
			tc.edit(doc)
			r := env.request(http.MethodPut, configPath, admin, doc)
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != tc.code || param != tc.param {
				t.Errorf("%s: %d %s, want 400 %s %s", tc.name, r.status, r.raw, tc.code, tc.param)
			}
		}
		for _, body := range []string{"", "[]", "{", `{"version":2}{}`} {
			if r := env.request(http.MethodPut, configPath, admin, body); r.status != http.StatusBadRequest {
				t.Errorf("body %q: %d %s", body, r.status, r.raw)
			}
		}
		if strings.Contains(env.request(http.MethodPut, configPath, admin, `{"versoin":2}`).raw, "unknown field versoin") == false {
			t.Error("an unknown field is not named in the answer")
		}

		// GraphQL refuses the same, with the parameter in its own names.
		bad := defaultSettings()
		bad.Version = 2
		bad.CircuitBreaker.WindowS = 0
		input := gqlConfigInput(bad)
		if _, errs := env.graphql(admin, updateConfigMutation, map[string]any{"in": input}); len(errs) != 1 || errs[0].code() != "invalid_request" ||
			errs[0].Extensions["param"] != "circuitBreaker.windowS" {
			t.Errorf("updateConfig with windowS 0 = %+v", errs)
		}
		input = gqlConfigInput(defaultSettings())
		input["version"] = 2
		input["providers"] = append(input["providers"].([]any), map[string]any{"name": "stripe", "enabled": false, "timeoutMs": 1000})
		if _, errs := env.graphql(admin, updateConfigMutation, map[string]any{"in": input}); len(errs) != 1 || errs[0].code() != "invalid_request" ||
			errs[0].Extensions["param"] != "providers.stripe" {
			t.Errorf("updateConfig with stripe twice = %+v", errs)
		}
		input = gqlConfigInput(defaultSettings())
		delete(input, "rateLimits")
		if _, errs := env.graphql(admin, updateConfigMutation, map[string]any{"in": input}); len(errs) != 1 {
			t.Errorf("updateConfig without rateLimits = %+v", errs)
		}

		if got := env.readConfig(admin); !reflect.DeepEqual(got, stored) {
			t.Errorf("after refusals GET = %v, want %v", got, stored)
		}
		if entries, _ := env.configHistory(admin, ""); len(entries) != 2 {
			t.Errorf("after refusals the history has %d versions, want 2", len(entries))
		}
	})
}

func TestConfigStaleVersionIsRefused(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin, _ := env.adminOf()
		read := env.readConfig(admin)
		if r := env.request(http.MethodPut, configPath, admin, read); r.status != http.StatusOK {
			t.Fatalf("PUT = %d %s", r.status, r.raw)
		}
		stored := env.readConfig(admin)

		// A second change made from the version read before the first.
		stale := copyDocument(t, read)
		get(stale, "rate_limits").(map[string]any)["per_second"] = 1
		for _, version := range []any{1, 5} {
			stale["version"] = version
			r := env.request(http.MethodPut, configPath, admin, stale)
			if code, _ := r.errorCode(); r.status != http.StatusConflict || code != "invalid_state" {
				t.Errorf("PUT from version %v = %d %s", version, r.status, r.raw)
			}
		}
		if _, errs := env.graphql(admin, updateConfigMutation, map[string]any{"in": gqlConfigInput(defaultSettings())}); len(errs) != 1 || errs[0].code() != "invalid_state" {
			t.Errorf("updateConfig from version 1 = %+v", errs)
		}
		if got := env.readConfig(admin); !reflect.DeepEqual(got, stored) {
			t.Errorf("after stale changes GET = %v, want %v", got, stored)
		}
		if entries, _ := env.configHistory(admin, ""); len(entries) != 2 {
			t.Errorf("after stale changes the history has %d versions, want 2", len(entries))
		}
	})
}

// TestConfigConcurrentChangesThroughTwoServers: two admins change the document read at one
// version at once, through two servers: one change is stored, the other refused as stale. Run
// with -count=20.
func TestConfigConcurrentChangesThroughTwoServers(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		admin, _ := servers[0].adminOf()
		for round, version := range []string{"1", "2"} {
			read := servers[0].readConfig(admin)
			if str(read["version"]) != version {
				t.Fatalf("round %d: version %v, want %s", round, read["version"], version)
			}
			answers := make([]response, len(servers))
			var wg sync.WaitGroup
			for i, server := range servers {
				change := copyDocument(t, read)
				get(change, "rate_limits").(map[string]any)["per_second"] = 10 + i
				wg.Go(func() { answers[i] = server.request(http.MethodPut, configPath, admin, change) })
			}
			wg.Wait()
			won := -1
			for i, r := range answers {
				switch code, _ := r.errorCode(); {
				case r.status == http.StatusOK:
					won = i
				case r.status != http.StatusConflict || code != "invalid_state":
					t.Fatalf("round %d, server %d: %d %s", round, i, r.status, r.raw)
				}
			}
			if won < 0 || answers[1-won].status == http.StatusOK {
				t.Fatalf("round %d: answers %d and %d, want one 200 and one 409", round, answers[0].status, answers[1].status)
			}
			// The winner's server has it in force at once.
			if got := servers[won].readConfig(admin); str(got["version"]) != str(answers[won].data()["version"]) ||
				str(get(got, "rate_limits", "per_second")) != str(10+won) {
				t.Errorf("round %d: in force on the winner's server %v", round, got)
			}
			if err := servers[1-won].app.services.configs.Load(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if entries, _ := servers[1].configHistory(admin, ""); len(entries) != 3 {
			t.Errorf("history has %d versions, want 3", len(entries))
		}
	})
}

// TestConfigChangeReachesEveryServer: a change made through one server is in force on another
// within 5 s, read from the memory every payment reads, which the other's poll refreshes.
func TestConfigChangeReachesEveryServer(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		a, b := servers[0], servers[1]
		admin, adminID := a.adminOf()
		change := a.readConfig(admin)
		get(change, "providers", "stripe").(map[string]any)["enabled"] = false
		r := a.request(http.MethodPut, configPath, admin, change)
		if r.status != http.StatusOK {
			t.Fatalf("PUT through A = %d %s", r.status, r.raw)
		}
		// B has not polled: it serves the document in its memory, the one payments read there.
		if got := b.readConfig(admin); str(got["version"]) != "1" {
			t.Fatalf("B answered version %v before polling: GET must read the document in force", got["version"])
		}

		b.watchConfig(20 * time.Millisecond)
		deadline := time.Now().Add(5 * time.Second)
		for str(b.readConfig(admin)["version"]) != "2" {
			if time.Now().After(deadline) {
				t.Fatal("the change made through A is not in force on B after 5 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got, want := b.readConfig(admin), r.data(); !reflect.DeepEqual(got, want) {
			t.Errorf("in force on B = %v, want %v", got, want)
		}
		current := b.app.services.configs.Current()
		if current.Providers["stripe"].Enabled || current.UpdatedBy != adminID {
			t.Errorf("B's store has %+v", current)
		}
		if data := b.mustGraphQL(admin, `{ config { version providers { name enabled } } }`, nil); str(get(data, "config", "version")) != "2" ||
			get(data, "config", "providers", 2, "enabled") != false {
			t.Errorf("GraphQL on B = %v", data)
		}
	})
}
