package app

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

func createPayment(t *testing.T, env *testEnv, amount, currency, number string) string {
	t.Helper()
	r := env.request(http.MethodPost, "/api/v1/payments", env.tokenFor("operator"), paymentBody(amount, currency, number))
	id := str(r.data()["id"])
	if !strings.HasPrefix(id, "pay_") {
		t.Fatalf("create payment: %d %s", r.status, r.raw)
	}
	return id
}

func TestRefundsREST(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		operator := env.tokenFor("operator")
		id := createPayment(t, env, "100.00", "USD", "4242424242424242")
		refundsPath := "/api/v1/payments/" + id + "/refunds"

		r := env.request(http.MethodPost, refundsPath, operator, map[string]any{"amount": 30, "reason": "requested_by_customer"})
		if r.status != http.StatusCreated {
			t.Fatalf("partial refund = %d %s", r.status, r.raw)
		}
		first := r.data()
		if !strings.HasPrefix(str(first["id"]), "re_") || first["payment_id"] != id || str(first["amount"]) != "30.00" ||
			first["currency"] != "USD" || first["status"] != "succeeded" || first["reason"] != "requested_by_customer" {
			t.Errorf("refund = %v", first)
		}
		p := env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil).data()
		if str(p["amount_refunded"]) != "30.00" || p["status"] != "partially_refunded" {
			t.Errorf("after a partial refund: %v %v", p["amount_refunded"], p["status"])
		}

		r = env.request(http.MethodPost, refundsPath, operator, map[string]any{"amount": "70.01"})
		if code, param := r.errorCode(); r.status != http.StatusUnprocessableEntity || code != "refund_exceeds_payment" || param != "amount" {
			t.Errorf("refund above what is left = %d %s", r.status, r.raw)
		}
		r = env.request(http.MethodPost, refundsPath, operator, nil) // no body: all that is left
		if r.status != http.StatusCreated || str(r.data()["amount"]) != "70.00" {
			t.Fatalf("refund of the rest = %d %s", r.status, r.raw)
		}
		p = env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil).data()
		if str(p["amount_refunded"]) != "100.00" || p["status"] != "refunded" {
			t.Errorf("after refunding all: %v %v", p["amount_refunded"], p["status"])
		}
		r = env.request(http.MethodPost, refundsPath, operator, map[string]any{"amount": 1})
		if code, _ := r.errorCode(); r.status != http.StatusConflict || code != "invalid_state" {
			t.Errorf("refund of a refunded payment = %d %s", r.status, r.raw)
		}

		// The history holds every move, oldest first, with who made it.
		var moves []string
		for _, entry := range p["status_history"].([]any) {
			moves = append(moves, str(get(entry, "from"))+">"+str(get(entry, "to"))+" by "+strings.SplitN(str(get(entry, "actor")), "_", 2)[0])
		}
		want := "" + ">pending by usr,pending>processing by usr,processing>succeeded by provider:stripe," +
			"succeeded>partially_refunded by usr,partially_refunded>refunded by usr"
		if strings.Join(moves, ",") != want {
			t.Errorf("status history = %v\nwant %s", moves, want)
		}

		list := env.request(http.MethodGet, refundsPath, env.tokenFor("viewer"), nil)
		items, _ := list.body["data"].([]any)
		if list.status != http.StatusOK || len(items) != 2 || get(items, 0, "id") != first["id"] || list.body["has_more"] != false {
			t.Errorf("refund list = %d %s", list.status, list.raw)
		}

		declined := createPayment(t, env, "5.00", "USD", "4000000000000002")
		bad := []struct {
			name, path, token string
			body              any
			status            int
			code              string
		}{
			{"failed payment", "/api/v1/payments/" + declined + "/refunds", operator, map[string]any{"amount": 1}, 409, "invalid_state"},
			{"unknown payment", "/api/v1/payments/pay_missing/refunds", operator, map[string]any{"amount": 1}, 404, "not_found"},
			{"developer lacks refunds:write", refundsPath, env.tokenFor("developer"), map[string]any{"amount": 1}, 403, "forbidden"},
			{"no token", refundsPath, "", map[string]any{"amount": 1}, 401, "unauthenticated"},
			{"too precise", "/api/v1/payments/" + createPayment(t, env, "5.00", "USD", "4242424242424242") + "/refunds", operator, map[string]any{"amount": "1.001"}, 400, "invalid_amount"},
			{"refunded payment", refundsPath, operator, map[string]any{"amount": 1}, 409, "invalid_state"},
			{"zero", "/api/v1/payments/" + createPayment(t, env, "5.00", "USD", "4242424242424242") + "/refunds", operator, map[string]any{"amount": 0}, 400, "invalid_amount"},
			{"empty amount", "/api/v1/payments/" + createPayment(t, env, "5.00", "USD", "4242424242424242") + "/refunds", operator, map[string]any{"amount": ""}, 400, "invalid_amount"},
			{"unknown field", refundsPath, operator, map[string]any{"amount": 1, "currency": "USD"}, 400, "invalid_request"},
			{"long reason", refundsPath, operator, map[string]any{"reason": strings.Repeat("x", 501)}, 400, "invalid_request"},
		}
		for _, tt := range bad {
			r := env.request(http.MethodPost, tt.path, tt.token, tt.body)
			if code, _ := r.errorCode(); r.status != tt.status || code != tt.code {
				t.Errorf("%s: %d %s, want %d %s", tt.name, r.status, r.raw, tt.status, tt.code)
			}
		}
		if n, _ := db.Ent.Refund.Query().Count(databasetest.AsMerchant()); n != 2 {
			t.Errorf("%d refunds stored, want 2", n)
		}
	})
}

func TestRefundsGraphQL(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		operator := env.tokenFor("operator")
		id := createPayment(t, env, "10.000", "KWD", "4242424242424242")
		const refund = `mutation($in: RefundPaymentInput!) { refundPayment(input: $in) { id amount currency status reason payment { id status amountRefunded } } }`
		data := env.mustGraphQL(operator, refund, map[string]any{"in": map[string]any{"paymentId": id, "amount": "2.5", "reason": "damaged"}})
		re := data["refundPayment"].(map[string]any)
		if str(re["amount"]) != "2.500" || re["status"] != "SUCCEEDED" || get(re, "payment", "status") != "PARTIALLY_REFUNDED" ||
			str(get(re, "payment", "amountRefunded")) != "2.500" {
			t.Errorf("refundPayment = %v", re)
		}
		data = env.mustGraphQL(operator, `query($p: ID!, $r: ID!) {
			payment(id: $p) { refunds { id amount } statusHistory { from to reason actor at } }
			refund(id: $r) { id paymentId payment { id } }
			node(id: $r) { __typename id }
		}`, map[string]any{"p": id, "r": re["id"]})
		if get(data, "payment", "refunds", 0, "id") != re["id"] || get(data, "refund", "payment", "id") != id || get(data, "refund", "paymentId") != id || get(data, "node", "__typename") != "Refund" {
			t.Errorf("read back = %v", data)
		}
		history := get(data, "payment", "statusHistory").([]any)
		if len(history) != 4 || get(history, 0, "from") != nil || get(history, 3, "to") != "PARTIALLY_REFUNDED" || get(history, 3, "reason") != "refund "+str(re["id"]) {
			t.Errorf("statusHistory = %v", history)
		}

		_, errs := env.graphql(operator, refund, map[string]any{"in": map[string]any{"paymentId": id, "amount": "7.501"}})
		if len(errs) != 1 || errs[0].code() != "refund_exceeds_payment" || str(errs[0].Extensions["param"]) != "amount" {
			t.Errorf("too much = %+v", errs)
		}
		_, errs = env.graphql(env.tokenFor("viewer"), refund, map[string]any{"in": map[string]any{"paymentId": id}})
		if len(errs) != 1 || errs[0].code() != "forbidden" {
			t.Errorf("viewer = %+v", errs)
		}
		_, errs = env.graphql(operator, refund, map[string]any{"in": map[string]any{"paymentId": id, "amount": ""}})
		if len(errs) != 1 || errs[0].code() != "invalid_amount" {
			t.Errorf("empty amount = %+v", errs)
		}
		_, errs = env.graphql(operator, `{ refund(id: "re_missing") { id } }`, nil)
		if len(errs) != 1 || errs[0].code() != "not_found" {
			t.Errorf("missing refund = %+v", errs)
		}
		data = env.mustGraphQL(operator, refund, map[string]any{"in": map[string]any{"paymentId": id}})
		if str(get(data, "refundPayment", "amount")) != "7.500" || get(data, "refundPayment", "payment", "status") != "REFUNDED" {
			t.Errorf("refund of the rest = %v", data)
		}
		_, errs = env.graphql(operator, refund, map[string]any{"in": map[string]any{"paymentId": id}})
		if len(errs) != 1 || errs[0].code() != "invalid_state" {
			t.Errorf("refund of a refunded payment = %+v", errs)
		}
	})
}

func TestRefundAmountsInEveryCurrencyScale(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		operator := env.tokenFor("operator")
		tests := []struct {
			amount, currency string
			refunds          []string
			refunded         string
			minor            int64
		}{
			{"1000", "JPY", []string{"1", "499"}, "500", 500},
			{"0.03", "USD", []string{"0.01", "0.01", "0.01"}, "0.03", 3},
			{"1.001", "KWD", []string{"0.001", "1"}, "1.001", 1001},
		}
		for _, tt := range tests {
			id := createPayment(t, env, tt.amount, tt.currency, "4242424242424242")
			for _, amount := range tt.refunds {
				if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, map[string]any{"amount": amount}); r.status != http.StatusCreated {
					t.Errorf("%s %s refund %s = %d %s", tt.amount, tt.currency, amount, r.status, r.raw)
				}
			}
			p := env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil).data()
			if str(p["amount_refunded"]) != tt.refunded || env.payment(id).AmountRefunded != tt.minor {
				t.Errorf("%s %s: refunded %v (%d minor), want %s", tt.amount, tt.currency, p["amount_refunded"], env.payment(id).AmountRefunded, tt.refunded)
			}
		}
	})
}

// TestConcurrentRefundsNeverExceedThePayment fires 20 partial refunds at once whose sum is twice
// the amount, on one payment: exactly the affordable half succeed and the refunded total is the
// amount.
func TestConcurrentRefundsNeverExceedThePayment(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		// A provider round trip keeps the refunds in flight together, on two servers at once.
		servers := newTestServers(t, pools, "PAYGATE_SANDBOX_LATENCY=20ms")
		env := servers[0]
		operator := env.tokenFor("operator")
		id := createPayment(t, env, "100.00", "USD", "4242424242424242")
		const attempts = 20
		statuses := make([]int, attempts)
		var wg sync.WaitGroup
		for i := range attempts {
			wg.Go(func() {
				server := servers[i%len(servers)]
				statuses[i] = server.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, map[string]any{"amount": "10.00"}).status
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, status := range statuses {
			count[status]++
		}
		// A refusal is 422 while the payment is partly refunded and 409 once it is fully refunded.
		if count[http.StatusCreated] != 10 || count[http.StatusUnprocessableEntity]+count[http.StatusConflict] != 10 {
			t.Errorf("statuses = %v, want 10 created and 10 refused", count)
		}
		p := env.payment(id)
		if p.AmountRefunded != p.Amount || p.Status != "refunded" {
			t.Errorf("refunded %d of %d, status %s", p.AmountRefunded, p.Amount, p.Status)
		}
		if sum := sumSucceededRefunds(t, env, id); sum != p.Amount {
			t.Errorf("succeeded refunds sum to %d, want %d", sum, p.Amount)
		}
		// A refused refund was refused before the provider was asked: no refund row is left
		// pending or failed, as one would be if the money went back and the books did not follow.
		if refunds, _ := p.QueryRefunds().All(databasetest.AsMerchant()); len(refunds) != 10 {
			t.Errorf("%d refunds recorded, want the 10 that succeeded", len(refunds))
		}
	})
}

func sumSucceededRefunds(t *testing.T, env *testEnv, paymentID string) int64 {
	t.Helper()
	refunds, err := env.payment(paymentID).QueryRefunds().All(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range refunds {
		if r.Status == "succeeded" {
			sum += r.Amount
		}
	}
	return sum
}

// TestRefundWithAnEmptyStreamedBody sends no body the way a streaming client does, chunked with
// no length: it refunds all that is left, as a request without a body does.
func TestRefundWithAnEmptyStreamedBody(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	id := createPayment(t, env, "12.50", "USD", "4242424242424242")
	req, err := http.NewRequest(http.MethodPost, env.url+"/api/v1/payments/"+id+"/refunds", io.NopCloser(strings.NewReader("")))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.TransferEncoding = []string{"chunked"}
	req.Header.Set("Authorization", "Bearer "+env.tokenFor("operator"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || env.payment(id).AmountRefunded != 1250 {
		t.Errorf("empty chunked refund = %d, refunded %d", resp.StatusCode, env.payment(id).AmountRefunded)
	}
}

// TestRefundListPages: a payment's refunds page as every list does: limit, starting_after,
// ending_before, has_more, oldest first; a cursor that is no refund of the payment is refused.
func TestRefundListPages(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	operator := env.tokenFor("operator")
	paymentID := str(get(env.request(http.MethodPost, "/api/v1/payments", operator, paymentBody("50.00", "USD", "4242424242424242")).body, "data", "id"))
	var ids []string
	for range 5 {
		r := env.request(http.MethodPost, "/api/v1/payments/"+paymentID+"/refunds", operator, map[string]any{"amount": "1.00"})
		ids = append(ids, str(get(r.body, "data", "id")))
	}
	list := func(query string) ([]string, any, response) {
		r := env.request(http.MethodGet, "/api/v1/payments/"+paymentID+"/refunds"+query, operator, nil)
		var got []string
		items, _ := get(r.body, "data").([]any)
		for _, item := range items {
			got = append(got, str(get(item, "id")))
		}
		return got, get(r.body, "has_more"), r
	}
	for _, tt := range []struct {
		query string
		want  []string
		more  bool
	}{
		{"", ids, false},
		{"?limit=2", ids[:2], true},
		{"?limit=2&starting_after=" + ids[1], ids[2:4], true},
		{"?limit=2&starting_after=" + ids[3], ids[4:], false},
		{"?limit=2&ending_before=" + ids[4], ids[2:4], true},
		{"?limit=3&ending_before=" + ids[2], ids[:2], false},
	} {
		got, more, r := list(tt.query)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") || more != tt.more {
			t.Errorf("refunds%s = %v has_more %v, want %v %v (%d %s)", tt.query, got, more, tt.want, tt.more, r.status, r.raw)
		}
	}
	for _, query := range []string{"?limit=0", "?limit=101", "?starting_after=re_none", "?starting_after=" + ids[0] + "&ending_before=" + ids[1]} {
		if _, _, r := list(query); r.status != http.StatusBadRequest {
			t.Errorf("refunds%s = %d %s", query, r.status, r.raw)
		}
	}
}
