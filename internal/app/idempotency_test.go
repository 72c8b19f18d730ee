package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
)

func TestIdempotentPaymentsREST(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		body := paymentBody("12.00", "USD", "4242424242424242")

		first := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "order-1")
		again := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "order-1")
		if first.status != http.StatusCreated || again.status != http.StatusCreated || again.raw != first.raw {
			t.Errorf("replay = %d %s\nfirst = %d %s", again.status, again.raw, first.status, first.raw)
		}
		if first.header.Get("Idempotent-Replayed") != "" || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("Idempotent-Replayed = %q then %q", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
		}
		// The body is compared by meaning: key order and spacing do not matter.
		reordered := `{"card": {"cvc": "123", "exp_year": ` + cardExpYearText + `, "exp_month": 12, "number": "4242424242424242"},
			"customer": {"name": "Ann Lee", "email": "ann@example.com"}, "payment_method": "credit_card", "currency": "USD", "amount": "12.00"}`
		if r := env.request(http.MethodPost, "/api/v1/payments", token, reordered, "Idempotency-Key", "order-1"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("reordered body = %d %s", r.status, r.raw)
		}
		if n := env.paymentCount(); n != 1 {
			t.Errorf("%d payments, want 1", n)
		}

		r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("13.00", "USD", "4242424242424242"), "Idempotency-Key", "order-1")
		if code, _ := r.errorCode(); r.status != http.StatusUnprocessableEntity || code != "idempotency_key_reused" {
			t.Errorf("same key, other body = %d %s", r.status, r.raw)
		}

		// A decline is an outcome: it is replayed, never charged twice.
		declined := paymentBody("5.00", "USD", "4000000000000002")
		r = env.request(http.MethodPost, "/api/v1/payments", token, declined, "Idempotency-Key", "order-2")
		replay := env.request(http.MethodPost, "/api/v1/payments", token, declined, "Idempotency-Key", "order-2")
		// Each answer's error names its own request, for support to find it in the logs.
		if r.status != http.StatusPaymentRequired || replay.status != http.StatusPaymentRequired || replay.header.Get("Idempotent-Replayed") != "true" ||
			withoutRequestID(t, replay.raw) != withoutRequestID(t, r.raw) || str(get(replay.body, "error", "request_id")) != replay.header.Get("X-Request-Id") {
			t.Errorf("declined replay = %d %s\nfirst = %s", replay.status, replay.raw, r.raw)
		}

		// A refused request did nothing: its key is free for the corrected retry.
		bad := paymentBody("0", "USD", "4242424242424242")
		if r := env.request(http.MethodPost, "/api/v1/payments", token, bad, "Idempotency-Key", "order-3"); r.status != http.StatusBadRequest {
			t.Errorf("bad amount = %d", r.status)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("1.00", "USD", "4242424242424242"), "Idempotency-Key", "order-3"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("corrected retry = %d %s", r.status, r.raw)
		}

		// Keys belong to their principal.
		if r := env.request(http.MethodPost, "/api/v1/payments", env.tokenFor("operator"), body, "Idempotency-Key", "order-1"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("another principal's key = %d %v", r.status, r.header)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", strings.Repeat("k", 256)); r.status != http.StatusBadRequest {
			t.Errorf("256-character key = %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", strings.Repeat("k", 255)); r.status != http.StatusCreated {
			t.Errorf("255-character key = %d %s", r.status, r.raw)
		}

		// A refund retried with its key refunds once.
		id := str(first.data()["id"])
		refund := map[string]any{"amount": "2.00"}
		r1 := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", token, refund, "Idempotency-Key", "refund-1")
		r2 := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", token, refund, "Idempotency-Key", "refund-1")
		if r1.status != http.StatusCreated || r2.raw != r1.raw || r2.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("refund replay = %d %s", r2.status, r2.raw)
		}
		if p := env.payment(id); p.AmountRefunded != 200 {
			t.Errorf("refunded %d, want 200", p.AmountRefunded)
		}
	})
}

func TestIdempotentMutationsGraphQL(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		input := gqlPaymentInput("8.00", "USD", "4242424242424242")
		input["idempotencyKey"] = "gql-1"
		post := func(vars map[string]any, headers ...string) response {
			return env.request(http.MethodPost, "/query", token, map[string]any{"query": createPaymentMutation, "variables": vars}, headers...)
		}
		first := post(map[string]any{"in": input})
		again := post(map[string]any{"in": input})
		id := str(get(first.body, "data", "createPayment", "id"))
		if id == "" || get(again.body, "data", "createPayment", "id") != id || get(again.body, "extensions", "idempotentReplayed") != true {
			t.Errorf("replay = %s\nfirst = %s", again.raw, first.raw)
		}
		if get(first.body, "extensions", "idempotentReplayed") != nil {
			t.Errorf("the first answer says replayed: %s", first.raw)
		}
		input["amount"] = "9.00"
		if r := post(map[string]any{"in": input}); str(get(r.body, "errors", 0, "extensions", "code")) != "idempotency_key_reused" {
			t.Errorf("same key, other input = %s", r.raw)
		}

		// The header works for a single mutation; one key space with REST.
		plain := gqlPaymentInput("3.00", "EUR", "4242424242424242")
		h1 := post(map[string]any{"in": plain}, "Idempotency-Key", "shared")
		h2 := post(map[string]any{"in": plain}, "Idempotency-Key", "shared")
		if get(h2.body, "data", "createPayment", "id") != get(h1.body, "data", "createPayment", "id") {
			t.Errorf("header replay = %s", h2.raw)
		}
		// The same payment over REST with the key is the same call: it replays.
		r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("3.00", "EUR", "4242424242424242"), "Idempotency-Key", "shared")
		if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" || r.data()["id"] != get(h1.body, "data", "createPayment", "id") {
			t.Errorf("REST with a GraphQL request's key = %d %s", r.status, r.raw)
		}
		r = env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("3.01", "EUR", "4242424242424242"), "Idempotency-Key", "shared")
		if code, _ := r.errorCode(); code != "idempotency_key_reused" {
			t.Errorf("REST with a GraphQL request's key and another amount = %d %s", r.status, r.raw)
		}
		two := `mutation($a: CreatePaymentInput!, $b: CreatePaymentInput!) { a: createPayment(input: $a) { id } b: createPayment(input: $b) { id } }`
		r = env.request(http.MethodPost, "/query", token, map[string]any{"query": two, "variables": map[string]any{"a": plain, "b": plain}}, "Idempotency-Key", "two")
		if str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" {
			t.Errorf("a key on two mutations = %s", r.raw)
		}
		// A sibling would run again on every retry, or have its answer (tokens) stored: refused.
		keyedIn := gqlPaymentInput("5.00", "EUR", "4242424242424242")
		keyedIn["idempotencyKey"] = "with-sibling"
		withSibling := `mutation($in: CreatePaymentInput!) { createPayment(input: $in) { id } refreshToken(refreshToken: "rt_x") { accessToken } }`
		before := env.paymentCount()
		for range 3 {
			r := env.request(http.MethodPost, "/query", token, map[string]any{"query": withSibling, "variables": map[string]any{"in": keyedIn}})
			if str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" || get(r.body, "data") != nil {
				t.Errorf("a keyed mutation beside another = %s", r.raw)
			}
		}
		r = env.request(http.MethodPost, "/query", token, map[string]any{"query": withSibling, "variables": map[string]any{"in": keyedIn}}, "Accept", "application/graphql-response+json")
		if _, hasData := r.body["data"]; r.status != http.StatusBadRequest || hasData {
			t.Errorf("a keyed mutation beside another, under application/graphql-response+json = %d %s", r.status, r.raw)
		}
		if made := env.paymentCount() - before; made != 0 {
			t.Errorf("a refused keyed request made %d payments", made)
		}
		// An empty key in the input would silently drop the header's key: refused.
		emptyKey := gqlPaymentInput("5.00", "EUR", "4242424242424242")
		emptyKey["idempotencyKey"] = ""
		r = post(map[string]any{"in": emptyKey}, "Idempotency-Key", "header-key")
		if str(get(r.body, "errors", 0, "extensions", "code")) != "invalid_request" || env.paymentCount() != before {
			t.Errorf("an empty idempotencyKey = %s", r.raw)
		}

		// The key is applied however the mutation is written: beside __typename, in a fragment.
		for i, query := range []string{
			`mutation($in: CreatePaymentInput!) { __typename createPayment(input: $in) { id } }`,
			`mutation($in: CreatePaymentInput!) { ... on Mutation { createPayment(input: $in) { id } } }`,
		} {
			in := gqlPaymentInput("4.00", "EUR", "4242424242424242")
			in["idempotencyKey"] = fmt.Sprintf("shape-%d", i)
			before := env.paymentCount()
			a := env.mustGraphQL(token, query, map[string]any{"in": in})
			b := env.mustGraphQL(token, query, map[string]any{"in": in})
			if env.paymentCount()-before != 1 || get(a, "createPayment", "id") != get(b, "createPayment", "id") {
				t.Errorf("%s: %d payments (%v, %v)", query, env.paymentCount()-before, a, b)
			}
		}
		// Answers holding secrets are never stored.
		keysBefore, _ := db.Ent.IdempotencyKey.Query().Count(databasetest.AsMerchant())
		env.graphql(token, `mutation { refreshToken(refreshToken: "rt_x") { accessToken } }`, nil, "Idempotency-Key", "tokens")
		if keysAfter, _ := db.Ent.IdempotencyKey.Query().Count(databasetest.AsMerchant()); keysAfter != keysBefore {
			t.Error("a refreshToken answer was stored under an idempotency key")
		}

		refund := `mutation($in: RefundPaymentInput!) { refundPayment(input: $in) { id amount } }`
		in := map[string]any{"paymentId": id, "amount": "1.00", "idempotencyKey": "gql-refund"}
		a := env.mustGraphQL(token, refund, map[string]any{"in": in})
		b := env.mustGraphQL(token, refund, map[string]any{"in": in})
		if get(a, "refundPayment", "id") != get(b, "refundPayment", "id") || env.payment(id).AmountRefunded != 100 {
			t.Errorf("refund replay: %v then %v, refunded %d", a, b, env.payment(id).AmountRefunded)
		}
	})
}

// TestConcurrentIdenticalIdempotentRequests fires 20 identical requests with one key at once, on
// each surface: exactly one payment is made; every answer is that payment or "still running".
func TestConcurrentIdenticalIdempotentRequests(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools, "PAYGATE_SANDBOX_LATENCY=20ms")
		env := servers[0]
		token := env.tokenFor("operator")
		const attempts = 20
		for _, surface := range []string{"rest", "graphql"} {
			before := env.paymentCount()
			ids := make([]string, attempts)
			statuses := make([]int, attempts)
			var wg sync.WaitGroup
			for i := range attempts {
				wg.Go(func() {
					server := servers[i%len(servers)]
					if surface == "rest" {
						r := server.request(http.MethodPost, "/api/v1/payments", token, paymentBody("7.00", "USD", "4242424242424242"), "Idempotency-Key", "same-"+surface)
						statuses[i], ids[i] = r.status, str(r.data()["id"])
						return
					}
					r := server.request(http.MethodPost, "/query", token, map[string]any{"query": createPaymentMutation,
						"variables": map[string]any{"in": gqlPaymentInput("7.00", "USD", "4242424242424242")}}, "Idempotency-Key", "same-"+surface)
					ids[i] = str(get(r.body, "data", "createPayment", "id"))
					statuses[i] = http.StatusCreated
					if code := str(get(r.body, "errors", 0, "extensions", "code")); code != "" {
						statuses[i] = map[string]int{"idempotency_key_in_use": http.StatusConflict}[code]
					}
				})
			}
			wg.Wait()
			if n := env.paymentCount() - before; n != 1 {
				t.Errorf("%s: %d payments made, want 1", surface, n)
			}
			made := ""
			for i := range attempts {
				switch statuses[i] {
				case http.StatusCreated:
					if made == "" {
						made = ids[i]
					}
					if ids[i] != made {
						t.Errorf("%s: answers name two payments: %s and %s", surface, made, ids[i])
					}
				case http.StatusConflict:
				default:
					t.Errorf("%s: answer %d", surface, statuses[i])
				}
			}
			if made == "" {
				t.Errorf("%s: no answer named the payment made", surface)
			}
		}
	})
}

func TestIdempotencyKeyInUseAndExpiry(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) { testIdempotencyKeyInUseAndExpiry(t, db) })
}

func testIdempotencyKeyInUseAndExpiry(t *testing.T, db *database.DB) {
	env := newTestEnv(t, db)
	token := env.tokenFor("operator")
	principal := principalOf(t, env, token)
	ctx := databasetest.AsMerchant()

	// A request still holding the key (its server died mid-call): a retry is told to wait, over
	// either surface. The held key is written as the claim writes it, with the fingerprint of the
	// same payment made under another key.
	body := paymentBody("1.00", "USD", "4242424242424242")
	if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "done"); r.status != http.StatusCreated {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	done, err := db.Ent.IdempotencyKey.Query().Where(idempotencykey.KeyEQ("done")).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ent.IdempotencyKey.Create().SetPrincipal(principal).SetKey("running").SetRequestHash(done.RequestHash).
		SetResourceID("pay_running").SetExpiresAt(time.Now().Add(idempotency.TTL)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "running")
	if code, _ := r.errorCode(); r.status != http.StatusConflict || code != "idempotency_key_in_use" {
		t.Errorf("key in use = %d %s", r.status, r.raw)
	}
	variables := map[string]any{"in": gqlPaymentInput("1.00", "USD", "4242424242424242")}
	_, errs := env.graphql(token, createPaymentMutation, variables, "Idempotency-Key", "running")
	if len(errs) != 1 || errs[0].code() != "idempotency_key_in_use" {
		t.Errorf("GraphQL key in use = %+v", errs)
	}

	// A held key is never taken over, however long it is held: running the request again could
	// charge twice. It waits for its request, or for expiry.
	hourLater := idempotency.NewStore(db.Ent, nil, func() time.Time { return time.Now().Add(time.Hour) })
	held := &idempotency.Key{Principal: principal, Value: "running", Fingerprint: done.RequestHash}
	if _, _, err := hourLater.Previous(ctx, held); !hasCode(err, "idempotency_key_in_use") {
		t.Errorf("an hour-old held key = %v", err)
	}
	for _, key := range []string{"clé", "tab\tkey", strings.Repeat("k", 256)} {
		if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", key); r.status != http.StatusBadRequest {
			t.Errorf("key %q = %d %s", key, r.status, r.raw)
		}
	}

	// After 24 hours a key is purged and may be used afresh.
	if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "old"); r.status != http.StatusCreated {
		t.Fatalf("create = %d", r.status)
	}
	// A day later the server's purge job deletes every key.
	keysLeft := func() int {
		n, err := db.Ent.IdempotencyKey.Query().Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := keysLeft(); n != 3 {
		t.Fatalf("%d keys before the purge, want 3 (done, running, old)", n)
	}
	env.clock.Advance(idempotency.TTL + time.Minute)
	if err := env.app.purge(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysLeft(); n != 0 {
		t.Errorf("%d keys left after the purge ran a day later; want every one purged", n)
	}
	// The same user, whose token of a day ago has expired, may use the key afresh.
	token, err = env.app.services.auth.Tokens().Issue(principal, "operator", "")
	if err != nil {
		t.Fatal(err)
	}
	if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "old"); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("after purge = %d replayed=%q", r.status, r.header.Get("Idempotent-Replayed"))
	}
}

// withoutRequestID is an answer's body without its error's request_id.
func withoutRequestID(t *testing.T, raw string) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if e, ok := body["error"].(map[string]any); ok {
		delete(e, "request_id")
	}
	return mustJSON(t, body)
}

func hasCode(err error, code string) bool {
	apiErr, ok := errors.AsType[*apierror.Error](err)
	return ok && string(apiErr.Code) == code
}

func principalOf(t *testing.T, env *testEnv, token string) string {
	t.Helper()
	p, err := env.app.services.auth.Tokens().Verify(token)
	if err != nil {
		t.Fatal(err)
	}
	return p.Subject
}

// TestRefundSequencesKeepTheBooks is a property test: random rounds of concurrent payments and
// refunds over both surfaces and two servers, some retried with the same key, always leave
// amount_refunded equal to the sum of succeeded refunds and never above the amount, no refund
// pending, and at most one payment or refund per key, each named in an answer.
func TestRefundSequencesKeepTheBooks(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		db := pools[0]
		seed := time.Now().UnixNano()
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 0))
		servers := newTestServers(t, pools, "PAYGATE_SANDBOX_LATENCY=5ms")
		env := servers[0]
		token := env.tokenFor("operator")
		currencies := []string{"USD", "JPY", "KWD"}
		scale := map[string]int64{"USD": 100, "JPY": 1, "KWD": 1000} // minor units per major unit
		decimal := func(minor, scale int64) string {
			switch scale {
			case 1:
				return fmt.Sprint(minor)
			case 100:
				return fmt.Sprintf("%d.%02d", minor/100, minor%100)
			default:
				return fmt.Sprintf("%d.%03d", minor/1000, minor%1000)
			}
		}
		var mu sync.Mutex
		var payments []string
		made := map[string]map[string]bool{} // key -> the ids of what requests with it answered
		answered := func(key, id string) {
			if id == "" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if made[key] == nil {
				made[key] = map[string]bool{}
			}
			made[key][id] = true
		}
		firstUse := map[string]func(){} // key -> the request it was first sent with, to retry
		for round := range 8 {
			var ops []func()
			for range 2 + rng.IntN(6) {
				key := fmt.Sprintf("k%d", rng.IntN(16))
				if retry, used := firstUse[key]; used && rng.IntN(3) == 0 {
					ops = append(ops, retry)
					continue
				}
				currency := currencies[rng.IntN(len(currencies))]
				graphQL := rng.IntN(2) == 0
				server := servers[rng.IntN(len(servers))]
				var op func()
				if mu.Lock(); len(payments) == 0 || rng.IntN(3) == 0 {
					amount := decimal(1+rng.Int64N(5*scale[currency]), scale[currency])
					op = func() {
						var id string
						if graphQL {
							in := gqlPaymentInput(amount, currency, "4242424242424242")
							in["idempotencyKey"] = key
							data, _ := server.graphql(token, createPaymentMutation, map[string]any{"in": in})
							id = str(get(data, "createPayment", "id"))
						} else {
							id = str(server.request(http.MethodPost, "/api/v1/payments", token, paymentBody(amount, currency, "4242424242424242"), "Idempotency-Key", key).data()["id"])
						}
						answered(key, id)
						if id != "" {
							mu.Lock()
							payments = append(payments, id)
							mu.Unlock()
						}
					}
				} else {
					id := payments[rng.IntN(len(payments))]
					p := env.payment(id)
					amount := decimal(1+rng.Int64N(p.Amount/2+1), scale[p.Currency])
					op = func() {
						if graphQL {
							data, _ := server.graphql(token, `mutation($in: RefundPaymentInput!) { refundPayment(input: $in) { id } }`,
								map[string]any{"in": map[string]any{"paymentId": id, "amount": amount, "idempotencyKey": key}})
							answered(key, str(get(data, "refundPayment", "id")))
							return
						}
						r := server.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", token, map[string]any{"amount": amount}, "Idempotency-Key", key)
						if r.status >= 500 {
							t.Errorf("round %d: refund %s of %s = %d %s", round, amount, id, r.status, r.raw)
						}
						if r.status == http.StatusCreated {
							answered(key, str(r.data()["id"]))
						}
					}
				}
				mu.Unlock()
				if _, used := firstUse[key]; !used {
					firstUse[key] = op
				}
				ops = append(ops, op)
			}
			var wg sync.WaitGroup
			for _, op := range ops {
				wg.Go(op)
			}
			wg.Wait()
		}

		ctx := databasetest.AsMerchant()
		all, err := db.Ent.Payment.Query().WithRefunds().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		refunds := 0
		for _, p := range all {
			var sum int64
			for _, r := range p.Edges.Refunds {
				refunds++
				if r.Status == "succeeded" {
					sum += r.Amount
				} else {
					t.Errorf("refund %s left %s", r.ID, r.Status)
				}
			}
			if p.AmountRefunded != sum || p.AmountRefunded > p.Amount {
				t.Errorf("%s: amount_refunded %d, succeeded refunds %d, amount %d", p.ID, p.AmountRefunded, sum, p.Amount)
			}
		}
		// Every key made at most one thing, and nothing was made that no answer named.
		answers := 0
		for key, ids := range made {
			if len(ids) > 1 {
				t.Errorf("key %s made %d payments or refunds: %v", key, len(ids), ids)
			}
			answers += len(ids)
		}
		if len(all)+refunds != answers {
			t.Errorf("%d payments and %d refunds in the database, %d in answers", len(all), refunds, answers)
		}
	})
}
