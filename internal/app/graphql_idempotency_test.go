package app

import (
	"net/http"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestGraphQLKeyOfRequestRefusedBeforeExecutionIsReleased: a request refused before the mutation's
// resolver ran did nothing, so its key stays free for the corrected retry, as over REST.
func TestGraphQLKeyOfRequestRefusedBeforeExecutionIsReleased(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		post := func(query string, in map[string]any, headers ...string) response {
			return env.request(http.MethodPost, "/query", token, map[string]any{"query": query, "variables": map[string]any{"in": in}}, headers...)
		}

		// Variables that fail coercion: nothing ran, and another bad request is not a replay.
		noCurrency := gqlPaymentInput("8.00", "EUR", "4242424242424242")
		delete(noCurrency, "currency")
		badMonth := gqlPaymentInput("8.00", "EUR", "4242424242424242")
		badMonth["card"].(map[string]any)["expMonth"] = "twelve"
		for _, in := range []map[string]any{noCurrency, badMonth} {
			r := post(createPaymentMutation, in, "Idempotency-Key", "coercion")
			if get(r.body, "errors", 0, "path", 0) != "variable" || get(r.body, "extensions", "idempotentReplayed") != nil {
				t.Errorf("invalid variables = %s", r.raw)
			}
		}
		r := post(createPaymentMutation, gqlPaymentInput("8.00", "EUR", "4242424242424242"), "Idempotency-Key", "coercion")
		if get(r.body, "data", "createPayment", "id") == nil || get(r.body, "extensions", "idempotentReplayed") != nil {
			t.Errorf("corrected retry after invalid variables = %s", r.raw)
		}

		// Over the cost limit (lists of refunds within lists of refunds): nothing ran, nothing is
		// stored, a smaller selection runs.
		tooComplex := `mutation($in: CreatePaymentInput!) { createPayment(input: $in) {
			refunds { payment { refunds { payment { refunds { id } } } } } } }`
		in := gqlPaymentInput("9.00", "EUR", "4242424242424242")
		in["idempotencyKey"] = "complex"
		if r := post(tooComplex, in); str(get(r.body, "errors", 0, "extensions", "code")) != "query_too_complex" {
			t.Errorf("over the complexity limit = %.300s", r.raw)
		}
		if n, _ := db.Ent.IdempotencyKey.Query().Where(idempotencykey.KeyEQ("complex")).Count(databasetest.AsMerchant()); n != 0 {
			t.Error("the key of a request over the complexity limit is still held")
		}
		r = post(createPaymentMutation, in)
		if get(r.body, "data", "createPayment", "id") == nil || get(r.body, "extensions", "idempotentReplayed") != nil {
			t.Errorf("retry within the complexity limit = %s", r.raw)
		}
		if n := env.paymentCount(); n != 2 {
			t.Errorf("%d payments, want 2", n)
		}

		// A resolver that failed before it wrote anything (the database refused the payment) did
		// nothing: its key is free, and the retry once the database is back makes the payment.
		allowPayments := refusePaymentInserts(t, db)
		failing := gqlPaymentInput("6.00", "EUR", "4242424242424242")
		failing["idempotencyKey"] = "resolver-failed"
		for range 2 {
			r := post(createPaymentMutation, failing)
			if str(get(r.body, "errors", 0, "extensions", "code")) != "internal_error" || get(r.body, "data") != nil || get(r.body, "extensions", "idempotentReplayed") != nil {
				t.Errorf("failing resolver = %s", r.raw)
			}
		}
		allowPayments()
		if r := post(createPaymentMutation, failing); get(r.body, "data", "createPayment", "status") != "SUCCEEDED" || get(r.body, "extensions", "idempotentReplayed") != nil {
			t.Errorf("retry after the outage = %s", r.raw)
		}

		// (One that failed after it wrote, when the provider may have charged, keeps its error
		// for replay: internal/payment's TestKeyedCallThatFailedAfterWritingReplaysItsError.)
		if n := env.paymentCount(); n != 3 {
			t.Errorf("%d payments, want 3", n)
		}
	})
}

// TestGraphQLReplayNeedsTheFieldScope: an idempotency key is the user's, whatever credential
// sends it; an API key of the same user without the mutation's scope is refused, as over REST,
// not answered the stored replay.
func TestGraphQLReplayNeedsTheFieldScope(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		tokens := map[string]string{
			"operator": admin,
			// Keys of the same user's with a viewer's and a developer's scopes.
			"viewer":    env.apiKey(admin, auth.ScopePaymentsRead),
			"developer": env.apiKey(admin, auth.ScopePaymentsRead, auth.ScopePaymentsWrite),
		}
		in := gqlPaymentInput("8.00", "EUR", "4242424242424242")
		in["idempotencyKey"] = "pay-once"
		id := str(get(env.mustGraphQL(tokens["operator"], createPaymentMutation, map[string]any{"in": in}), "createPayment", "id"))
		refundMutation := `mutation($in: RefundPaymentInput!) { refundPayment(input: $in) { id } }`
		refund := map[string]any{"paymentId": id, "amount": "1.00", "idempotencyKey": "refund-once"}
		env.mustGraphQL(tokens["operator"], refundMutation, map[string]any{"in": refund})

		for _, tt := range []struct {
			role, query string
			in          map[string]any
		}{
			{"viewer", createPaymentMutation, in}, // lacks payments:write
			{"developer", refundMutation, refund}, // lacks refunds:write
		} {
			r := env.request(http.MethodPost, "/query", tokens[tt.role], map[string]any{"query": tt.query, "variables": map[string]any{"in": tt.in}})
			if str(get(r.body, "errors", 0, "extensions", "code")) != "forbidden" || get(r.body, "data") != nil || get(r.body, "extensions", "idempotentReplayed") != nil {
				t.Errorf("%s replaying an operator's mutation = %s", tt.role, r.raw)
			}
		}
		rest := env.request(http.MethodPost, "/api/v1/payments", tokens["viewer"], paymentBody("8.00", "EUR", "4242424242424242"), "Idempotency-Key", "pay-once")
		if rest.status != http.StatusForbidden {
			t.Errorf("viewer over REST = %d %s", rest.status, rest.raw)
		}
		// A key that holds the scope replays the user's payment rather than making another.
		replay := env.request(http.MethodPost, "/query", tokens["developer"], map[string]any{"query": createPaymentMutation, "variables": map[string]any{"in": in}})
		if str(get(replay.body, "data", "createPayment", "id")) != id || get(replay.body, "extensions", "idempotentReplayed") != true {
			t.Errorf("the user's key replaying the user's payment = %s", replay.raw)
		}
	})
}

// refusePaymentInserts makes every new payment fail in the database, as an outage would, until
// the function it returns is called.
func refusePaymentInserts(t *testing.T, db *database.DB) (allow func()) {
	t.Helper()
	statements := []string{`CREATE TRIGGER refuse_payments BEFORE INSERT ON payments BEGIN SELECT RAISE(ABORT, 'refused'); END`}
	drop := `DROP TRIGGER refuse_payments`
	if db.Dialect != dialect.SQLite {
		statements = []string{
			`CREATE FUNCTION refuse_payments() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
			`CREATE TRIGGER refuse_payments BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION refuse_payments()`,
		}
		drop = `DROP TRIGGER refuse_payments ON payments`
	}
	for _, statement := range statements {
		if _, err := db.SQL.Exec(statement); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if _, err := db.SQL.Exec(drop); err != nil {
			t.Fatal(err)
		}
	}
}
