package app

import (
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
	"github.com/paygate/paygate/internal/tenant"
)

// TestPlatformStaffListEveryMerchantsPayments: allPayments lists every merchant's payments in one
// list, newest first, each with its merchantId and with what lies below it (refunds, history)
// read across merchants too; it filters and pages as payments does; a merchant's own people, and
// platform staff without payments:read, are refused.
func TestPlatformStaffListEveryMerchantsPayments(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		staff := env.staffToken("operator")
		acme := str(get(env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "Acme"}).data(), "id"))
		acmeAdmin := env.merchantToken(acme, "admin")
		pay := func(token, amount, currency string) string {
			t.Helper()
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody(amount, currency, "4242424242424242"))
			if r.status != http.StatusCreated {
				t.Fatalf("payment = %d %s", r.status, r.raw)
			}
			return str(get(r.data(), "id"))
		}
		ours := pay(admin, "10.00", "USD")
		theirs := pay(acmeAdmin, "20.00", "EUR")
		if r := env.request(http.MethodPost, "/api/v1/payments/"+theirs+"/refunds", acmeAdmin, map[string]any{"amount": "5.00"}); r.status != http.StatusCreated {
			t.Fatalf("refund = %d %s", r.status, r.raw)
		}

		const list = `query($first: Int, $after: Cursor, $where: PaymentWhereInput) { allPayments(first: $first, after: $after, where: $where) {
			edges { cursor node { id merchantId amount currency refunds { amount } statusHistory { to } } } pageInfo { hasNextPage } } }`
		all := env.mustGraphQL(staff, list, nil)
		edges, _ := get(all, "allPayments", "edges").([]any)
		if len(edges) != 2 || str(get(edges[0], "node", "id")) != theirs || str(get(edges[1], "node", "id")) != ours {
			t.Fatalf("every merchant's payments = %s", mustJSON(t, all))
		}
		if got := str(get(edges[0], "node", "merchantId")) + " " + str(get(edges[1], "node", "merchantId")); got != acme+" "+tenant.DefaultMerchant {
			t.Errorf("their merchants = %s", got)
		}
		if refunds, _ := get(edges[0], "node", "refunds").([]any); len(refunds) != 1 || str(get(refunds[0], "amount")) != "5.00" {
			t.Errorf("another merchant's payment's refunds = %v", refunds)
		}
		if history, _ := get(edges[0], "node", "statusHistory").([]any); len(history) < 2 {
			t.Errorf("another merchant's payment's history = %v", history)
		}
		// A page of one, then the next, across merchants; a filter narrows to one.
		first := env.mustGraphQL(staff, list, map[string]any{"first": 1})
		next := env.mustGraphQL(staff, list, map[string]any{"first": 1, "after": get(first, "allPayments", "edges", 0, "cursor")})
		if str(get(first, "allPayments", "edges", 0, "node", "id")) != theirs || str(get(next, "allPayments", "edges", 0, "node", "id")) != ours ||
			get(next, "allPayments", "pageInfo", "hasNextPage") != false {
			t.Errorf("paging = %s then %s", mustJSON(t, first), mustJSON(t, next))
		}
		euros := env.mustGraphQL(staff, list, map[string]any{"where": map[string]any{"currency": "EUR"}})
		if got, _ := get(euros, "allPayments", "edges").([]any); len(got) != 1 || str(get(got[0], "node", "id")) != theirs {
			t.Errorf("EUR payments = %s", mustJSON(t, euros))
		}

		// A merchant's admin is refused, and so are platform staff who may not read payments.
		noPayments := env.apiKey(admin, "monitoring:read")
		for name, token := range map[string]string{"a merchant's admin": acmeAdmin, "a key without payments:read": noPayments} {
			r := env.request(http.MethodPost, "/query", token, map[string]any{"query": `{ allPayments { edges { node { id } } } }`})
			if r.status != http.StatusOK || get(r.body, "data", "allPayments") != nil || str(get(r.body, "errors", 0, "extensions", "code")) != "forbidden" {
				t.Errorf("%s asking allPayments = %d %s", name, r.status, r.raw)
			}
		}
	})
}

// TestPlatformStaffFollowEveryMerchantsPayments: allPaymentsUpdated tells platform staff of every
// merchant's payments as they change, each with its merchantId and, below it, its refunds.
func TestPlatformStaffFollowEveryMerchantsPayments(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	env.app.Start(t.Context()) // the feed that tells subscribers of payments
	admin := env.tokenFor("admin")
	acme := str(get(env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "Acme"}).data(), "id"))
	acmeAdmin := env.merchantToken(acme, "admin")
	watcher := subscribe(t, env, "ws", env.staffToken("operator"), `subscription { allPaymentsUpdated { id merchantId status refunds { amount } } }`)
	waitFor(t, "the subscription to be in place", func() bool { return env.app.services.hub.Subscribers(live.Payment) == 1 })

	paid := env.succeededPayment(acmeAdmin, "20.00", "EUR", "adyen")
	if r := env.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", acmeAdmin, map[string]any{"amount": "5.00"}); r.status != http.StatusCreated {
		t.Fatalf("refund = %d %s", r.status, r.raw)
	}
	for {
		heard := get(watcher.next(), "next", "allPaymentsUpdated")
		if str(get(heard, "id")) != paid {
			t.Fatalf("heard %v, want payment %s", heard, paid)
		}
		if str(get(heard, "merchantId")) != acme {
			t.Errorf("payment heard of merchant %v, want %s", get(heard, "merchantId"), acme)
		}
		if refunds, _ := get(heard, "refunds").([]any); len(refunds) == 1 {
			if str(get(refunds[0], "amount")) != "5.00" {
				t.Errorf("its refund heard = %v", refunds)
			}
			return // the refund is heard with the payment
		}
	}
}
