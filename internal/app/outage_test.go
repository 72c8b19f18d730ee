package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
)

// TestDatabaseOutageAnswers503UntilItIsBack: while the database cannot be reached, as during a
// failover, REST answers 503 service_unavailable with Retry-After and GraphQL the same code,
// never internal_error, and /readyz says so; once it is back, the same server takes payments
// again, without a restart, and a create refused meanwhile, sent again with its key, is made once.
func TestDatabaseOutageAnswers503UntilItIsBack(t *testing.T) {
	t.Parallel()
	db, proxy := databasetest.PostgresThroughProxy(t)
	env := newTestEnv(t, db)
	token := env.tokenFor("admin")
	body := paymentBody("12.00", "EUR", provider.ApprovedCard)
	key := []string{"Idempotency-Key", "across-an-outage"}

	proxy.Down()
	refused := env.request(http.MethodPost, "/api/v1/payments", token, body, key...)
	if code, _ := refused.errorCode(); refused.status != http.StatusServiceUnavailable || code != "service_unavailable" || refused.header.Get("Retry-After") == "" {
		t.Errorf("a create without the database = %d %s, Retry-After %q", refused.status, refused.raw, refused.header.Get("Retry-After"))
	}
	if r := env.request(http.MethodGet, "/api/v1/payments", token, nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("a list without the database = %d %s", r.status, r.raw)
	}
	if _, errs := env.graphql(token, `{ payments(first: 1) { totalCount } }`, nil); len(errs) != 1 || errs[0].code() != "service_unavailable" {
		t.Errorf("a GraphQL read without the database = %+v", errs)
	}
	if r := env.request(http.MethodGet, "/readyz", "", nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz without the database = %d", r.status)
	}

	proxy.Up()
	env.clock.Advance(time.Minute) // past /readyz's answer of a second ago
	made := env.request(http.MethodPost, "/api/v1/payments", token, body, key...)
	if made.status != http.StatusCreated || made.data()["status"] != "succeeded" {
		t.Fatalf("the create sent again once the database is back = %d %s", made.status, made.raw)
	}
	if again := env.request(http.MethodPost, "/api/v1/payments", token, body, key...); again.data()["id"] != made.data()["id"] {
		t.Errorf("the key sent a third time = %s; want payment %v", again.raw, made.data()["id"])
	}
	if n := env.paymentCount(); n != 1 {
		t.Errorf("%d payments; want 1", n)
	}
	if r := env.request(http.MethodGet, "/readyz", "", nil); r.status != http.StatusOK {
		t.Errorf("/readyz once the database is back = %d", r.status)
	}
	if t.Failed() {
		t.Log(env.logs.String())
	}
}
