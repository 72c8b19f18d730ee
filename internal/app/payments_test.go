package app

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

func TestCreatePaymentREST(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")

		body := paymentBody(49.99, "usd", "4242 4242 4242 4242")
		body["description"] = "Order 1001"
		body["metadata"] = map[string]any{"order": "1001"}
		r := env.request(http.MethodPost, "/api/v1/payments", token, body)
		if r.status != http.StatusCreated || r.body["success"] != true {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		p := r.data()
		want := map[string]string{
			"object": "payment", "amount": "49.99", "currency": "USD", "status": "succeeded",
			"payment_method": "credit_card", "provider": "stripe", "amount_refunded": "0.00",
			"description": "Order 1001", "failure_code": "",
		}
		for field, value := range want {
			if got := str(p[field]); got != value {
				t.Errorf("%s = %q, want %q", field, got, value)
			}
		}
		if !strings.HasPrefix(str(p["id"]), "pay_") || !strings.HasPrefix(str(p["provider_payment_id"]), "pi_") {
			t.Errorf("ids = %v, %v", p["id"], p["provider_payment_id"])
		}
		if get(p, "customer", "email") != "ann@example.com" || get(p, "customer", "name") != "Ann Lee" {
			t.Errorf("customer = %v", p["customer"])
		}
		if get(p, "card", "brand") != "visa" || get(p, "card", "last4") != "4242" ||
			str(get(p, "card", "exp_month")) != "12" || str(get(p, "card", "exp_year")) != cardExpYearText ||
			len(str(get(p, "card", "fingerprint"))) != 32 {
			t.Errorf("card = %v", p["card"])
		}
		if get(p, "metadata", "order") != "1001" {
			t.Errorf("metadata = %v", p["metadata"])
		}
		for _, field := range []string{"created_at", "updated_at"} {
			if !strings.HasSuffix(str(p[field]), "Z") {
				t.Errorf("%s = %v, want RFC 3339 UTC", field, p[field])
			}
		}
		if strings.Contains(r.raw, `"amount":"`) || !strings.Contains(r.raw, `"amount":49.99`) {
			t.Errorf("amount is not a JSON number written exactly: %s", r.raw)
		}

		got := env.request(http.MethodGet, "/api/v1/payments/"+str(p["id"]), token, nil)
		if got.status != http.StatusOK || got.data()["id"] != p["id"] || str(got.data()["amount"]) != "49.99" {
			t.Errorf("get = %d %s", got.status, got.raw)
		}
		for _, field := range []string{"created_at", "updated_at"} {
			if got.data()[field] != p[field] {
				t.Errorf("%s read back = %v, answered at creation %v", field, got.data()[field], p[field])
			}
		}
		stored := env.payment(str(p["id"]))
		if stored.Amount != 4999 || stored.Currency != "USD" {
			t.Errorf("stored amount = %d %s, want 4999 USD", stored.Amount, stored.Currency)
		}
	})
}

func TestAmountsInEveryCurrencyScale(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		tests := []struct {
			amount   any
			currency string
			minor    int64
			shown    string
		}{
			{49.99, "USD", 4999, "49.99"},
			{"0.01", "eur", 1, "0.01"},
			{1000, "JPY", 1000, "1000"},
			{"5000", "jpy", 5000, "5000"},
			{1.234, "KWD", 1234, "1.234"},
			{"0.005", "BHD", 5, "0.005"},
			{999999.99, "USD", 99999999, "999999.99"},
		}
		for _, tt := range tests {
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody(tt.amount, tt.currency, "4242424242424242"))
			if r.status != http.StatusCreated {
				t.Errorf("%v %s: %d %s", tt.amount, tt.currency, r.status, r.raw)
				continue
			}
			if str(r.data()["amount"]) != tt.shown {
				t.Errorf("%v %s shown as %v, want %s", tt.amount, tt.currency, r.data()["amount"], tt.shown)
			}
			if stored := env.payment(str(r.data()["id"])); stored.Amount != tt.minor {
				t.Errorf("%v %s stored as %d, want %d", tt.amount, tt.currency, stored.Amount, tt.minor)
			}
		}
	})
}

func TestDeclinesAreRecordedAndAnswered402(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		tests := []struct {
			card, code string
			status     int
		}{
			{"4000000000000002", "card_declined", http.StatusPaymentRequired},
			{"4000000000009995", "insufficient_funds", http.StatusPaymentRequired},
			{"4000000000000069", "expired_card", http.StatusPaymentRequired},
			{"4000000000000119", "provider_unavailable", http.StatusBadGateway},
		}
		for _, tt := range tests {
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", tt.card))
			code, _ := r.errorCode()
			if r.status != tt.status || code != tt.code || r.body["success"] != false {
				t.Errorf("%s: %d %s, want %d %s", tt.card, r.status, r.raw, tt.status, tt.code)
				continue
			}
			id := str(r.data()["id"])
			if r.data()["status"] != "failed" || r.data()["failure_code"] != tt.code || !strings.HasPrefix(id, "pay_") {
				t.Errorf("%s: data = %v", tt.card, r.data())
				continue
			}
			if stored := env.payment(id); string(stored.Status) != "failed" || *stored.FailureCode != tt.code {
				t.Errorf("%s: stored %s %v", tt.card, stored.Status, stored.FailureCode)
			}
		}
	})
}

func TestBadPaymentRequestsWriteNothing(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		with := func(change func(map[string]any)) map[string]any {
			body := paymentBody("10.00", "USD", "4242424242424242")
			change(body)
			return body
		}
		card := func(b map[string]any) map[string]any { return b["card"].(map[string]any) }
		tests := []struct {
			name        string
			body        any
			status      int
			code, param string
		}{
			{"malformed JSON", `{"amount": 10.00,`, 400, "invalid_request", ""},
			{"not an object", `[1,2]`, 400, "invalid_request", ""},
			{"empty body", ``, 400, "invalid_request", ""},
			{"trailing data", `{"amount": 1} {}`, 400, "invalid_request", ""},
			{"unknown field", with(func(b map[string]any) { b["amout"] = 1 }), 400, "invalid_request", "amout"},
			{"currency not a string", with(func(b map[string]any) { b["currency"] = 840 }), 400, "invalid_request", "currency"},
			{"exp_month not a number", with(func(b map[string]any) { card(b)["exp_month"] = "12" }), 400, "invalid_request", "card.exp_month"},
			{"amount not a number", with(func(b map[string]any) { b["amount"] = true }), 400, "invalid_amount", "amount"},
			{"amount garbage", with(func(b map[string]any) { b["amount"] = "ten" }), 400, "invalid_amount", "amount"},
			{"amount zero", with(func(b map[string]any) { b["amount"] = 0 }), 400, "invalid_amount", "amount"},
			{"amount negative", with(func(b map[string]any) { b["amount"] = -5 }), 400, "invalid_amount", "amount"},
			{"amount too precise", with(func(b map[string]any) { b["amount"] = "10.001" }), 400, "invalid_amount", "amount"},
			{"amount above maximum", with(func(b map[string]any) { b["amount"] = "1000000.00" }), 400, "invalid_amount", "amount"},
			{"amount exponent", `{"amount": 1e3, "currency": "USD"}`, 400, "invalid_amount", "amount"},
			{"yen with decimals", with(func(b map[string]any) { b["currency"] = "JPY"; b["amount"] = "10.5" }), 400, "invalid_amount", "amount"},
			{"unknown currency", with(func(b map[string]any) { b["currency"] = "ABC" }), 400, "invalid_currency", "currency"},
			{"non-tender currency", with(func(b map[string]any) { b["currency"] = "XXX" }), 400, "invalid_currency", "currency"},
			{"withdrawn currency", with(func(b map[string]any) { b["currency"] = "HRK" }), 400, "invalid_currency", "currency"},
			{"two-letter currency", with(func(b map[string]any) { b["currency"] = "US" }), 400, "invalid_currency", "currency"},
			{"bad method", with(func(b map[string]any) { b["payment_method"] = "paypal" }), 400, "invalid_payment_method", "payment_method"},
			{"luhn", with(func(b map[string]any) { card(b)["number"] = "4242424242424241" }), 400, "invalid_card", "card.number"},
			{"expired card", with(func(b map[string]any) { card(b)["exp_year"] = 2020 }), 400, "invalid_card", "card.exp_year"},
			{"month 13", with(func(b map[string]any) { card(b)["exp_month"] = 13 }), 400, "invalid_card", "card.exp_month"},
			{"month 0", with(func(b map[string]any) { card(b)["exp_month"] = 0 }), 400, "invalid_card", "card.exp_month"},
			{"year 0", with(func(b map[string]any) { card(b)["exp_year"] = 0 }), 400, "invalid_card", "card.exp_year"},
			{"no month", with(func(b map[string]any) { delete(card(b), "exp_month") }), 400, "missing_field", "card.exp_month"},
			{"no year", with(func(b map[string]any) { delete(card(b), "exp_year") }), 400, "missing_field", "card.exp_year"},
			{"short cvc", with(func(b map[string]any) { card(b)["cvc"] = "12" }), 400, "invalid_card", "card.cvc"},
			{"bad email", with(func(b map[string]any) { b["customer"] = map[string]any{"email": "not-an-email"} }), 400, "invalid_request", "customer.email"},
			{"missing amount", with(func(b map[string]any) { delete(b, "amount") }), 400, "missing_field", "amount"},
			{"missing currency", with(func(b map[string]any) { delete(b, "currency") }), 400, "missing_field", "currency"},
			{"missing method", with(func(b map[string]any) { delete(b, "payment_method") }), 400, "missing_field", "payment_method"},
			{"missing customer", with(func(b map[string]any) { delete(b, "customer") }), 400, "missing_field", "customer.email"},
			{"missing card", with(func(b map[string]any) { delete(b, "card") }), 400, "missing_field", "card"},
			{"missing cvc", with(func(b map[string]any) { delete(card(b), "cvc") }), 400, "missing_field", "card.cvc"},
			{"missing card number", with(func(b map[string]any) { delete(card(b), "number") }), 400, "missing_field", "card.number"},
			{"body over 1 MiB", with(func(b map[string]any) { b["description"] = strings.Repeat("x", 1<<20) }), 413, "payload_too_large", ""},
		}
		for _, tt := range tests {
			r := env.request(http.MethodPost, "/api/v1/payments", token, tt.body)
			code, param := r.errorCode()
			if r.status != tt.status || code != tt.code || param != tt.param || r.body["success"] != false {
				t.Errorf("%s: %d %s/%s, want %d %s/%s (%s)", tt.name, r.status, code, param, tt.status, tt.code, tt.param, r.raw)
			}
			if get(r.body, "error", "request_id") != r.header.Get("X-Request-Id") || r.header.Get("X-Request-Id") == "" {
				t.Errorf("%s: request id missing from error %s", tt.name, r.raw)
			}
		}
		if n := env.paymentCount(); n != 0 {
			t.Errorf("bad requests wrote %d payments", n)
		}
	})
}

func TestAuthenticationAndScopesOnPayments(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		expired := expiredToken(t, env)
		body := paymentBody("10.00", "USD", "4242424242424242")
		tests := []struct {
			name, method, path string
			headers            []string
			status             int
			code               string
		}{
			{"no token", "POST", "/api/v1/payments", nil, 401, "unauthenticated"},
			{"garbage token", "POST", "/api/v1/payments", []string{"Authorization", "Bearer not.a.jwt"}, 401, "token_invalid"},
			{"wrong scheme", "GET", "/api/v1/payments", []string{"Authorization", "Basic YTpi"}, 401, "token_invalid"},
			{"expired token", "GET", "/api/v1/payments", []string{"Authorization", "Bearer " + expired}, 401, "token_expired"},
			{"alg none", "GET", "/api/v1/payments", []string{"Authorization", "Bearer " + unsignedToken(t)}, 401, "token_invalid"},
			{"viewer cannot pay", "POST", "/api/v1/payments", []string{"Authorization", "Bearer " + env.tokenFor("viewer")}, 403, "forbidden"},
			{"unknown route", "GET", "/api/v1/nothing", nil, 404, "not_found"},
		}
		for _, tt := range tests {
			var b any
			if tt.method == "POST" {
				b = body
			}
			r := env.request(tt.method, tt.path, "", b, tt.headers...)
			if code, _ := r.errorCode(); r.status != tt.status || code != tt.code {
				t.Errorf("%s: %d %s, want %d %s", tt.name, r.status, r.raw, tt.status, tt.code)
			}
		}
		if n := env.paymentCount(); n != 0 {
			t.Errorf("refused requests wrote %d payments", n)
		}
		viewer := env.tokenFor("viewer")
		if r := env.request("GET", "/api/v1/payments", viewer, nil); r.status != http.StatusOK {
			t.Errorf("viewer list = %d %s", r.status, r.raw)
		}
		if r := env.request("GET", "/api/v1/payments/pay_nope", viewer, nil); r.status != http.StatusNotFound {
			t.Errorf("unknown payment = %d %s", r.status, r.raw)
		} else if code, _ := r.errorCode(); code != "not_found" {
			t.Errorf("unknown payment code = %s", code)
		}
	})
}

func TestListPaymentsPagesBothWays(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		var ids []string // oldest first
		for i := 1; i <= 5; i++ {
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody(i, "USD", "4242424242424242"))
			if r.status != http.StatusCreated {
				t.Fatalf("create: %s", r.raw)
			}
			ids = append(ids, str(r.data()["id"]))
		}
		page := func(query string) ([]string, bool) { return env.listIDs(token, "/api/v1/payments"+query) }
		equal := func(got []string, want ...string) bool { return strings.Join(got, ",") == strings.Join(want, ",") }

		got, more := page("?limit=2")
		if !equal(got, ids[4], ids[3]) || !more {
			t.Errorf("first page = %v more=%v", got, more)
		}
		got, more = page("?limit=2&starting_after=" + ids[3])
		if !equal(got, ids[2], ids[1]) || !more {
			t.Errorf("second page = %v more=%v", got, more)
		}
		got, more = page("?limit=2&starting_after=" + ids[1])
		if !equal(got, ids[0]) || more {
			t.Errorf("last page = %v more=%v", got, more)
		}
		got, more = page("?limit=2&ending_before=" + ids[1])
		if !equal(got, ids[3], ids[2]) || !more {
			t.Errorf("page before %s = %v more=%v", ids[1], got, more)
		}
		got, more = page("?limit=2&ending_before=" + ids[3])
		if !equal(got, ids[4]) || more {
			t.Errorf("page before %s = %v more=%v", ids[3], got, more)
		}
		got, _ = page("")
		if len(got) != 5 {
			t.Errorf("default page = %v", got)
		}
		for _, query := range []string{"?limit=0", "?limit=101", "?limit=x", "?starting_after=pay_missing", "?starting_after=" + ids[0] + "&ending_before=" + ids[1]} {
			r := env.request(http.MethodGet, "/api/v1/payments"+query, token, nil)
			if code, _ := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" {
				t.Errorf("list %s = %d %s", query, r.status, r.raw)
			}
		}
	})
}

func TestListPaymentsFilters(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		create := func(amount, currency, number, email string) string {
			body := paymentBody(amount, currency, number)
			body["customer"] = map[string]any{"email": email}
			return str(env.request(http.MethodPost, "/api/v1/payments", token, body).data()["id"])
		}
		usdOK := create("1.00", "USD", "4242424242424242", "a@example.com")
		eurFailed := create("2.00", "EUR", "4000000000000002", "b@example.com")
		before := time.Now().UTC()
		time.Sleep(10 * time.Millisecond)
		usdFailed := create("3.00", "USD", "4000000000000002", "a@example.com")
		ids := func(query string) string {
			got, _ := env.listIDs(token, "/api/v1/payments"+query)
			return strings.Join(got, ",")
		}
		tests := map[string]string{
			"?status=failed":                                  usdFailed + "," + eurFailed,
			"?status=succeeded":                               usdOK,
			"?currency=usd":                                   usdFailed + "," + usdOK,
			"?currency=USD&status=failed":                     usdFailed,
			"?customer_email=b@example.com":                   eurFailed,
			"?created_gte=" + before.Format(time.RFC3339Nano): usdFailed,
			"?created_lte=" + before.Format(time.RFC3339Nano): eurFailed + "," + usdOK,
			"?created_gte=" + before.In(time.FixedZone("", 5*3600)).Format(time.RFC3339Nano):  usdFailed,
			"?created_lte=" + before.In(time.FixedZone("", -5*3600)).Format(time.RFC3339Nano): eurFailed + "," + usdOK,
			"?created_lte=" + strconv.FormatInt(before.Add(-time.Hour).Unix(), 10):            "",
			"?currency=USD&amount_gte=1.50":                                                   usdFailed,
			"?currency=USD&amount_lte=1.00":                                                   usdOK,
			"?currency=EUR&amount_gte=2&amount_lte=2":                                         eurFailed,
		}
		for query, want := range tests {
			if got := ids(strings.ReplaceAll(query, "+", "%2B")); got != want {
				t.Errorf("list %s = %s, want %s", query, got, want)
			}
		}
		for query, code := range map[string]string{
			"?status=paid":                 "invalid_request",
			"?currency=ABC":                "invalid_currency",
			"?created_gte=monday":          "invalid_request",
			"?colour=red":                  "invalid_request",
			"?amount_gte=1":                "missing_field",
			"?currency=JPY&amount_gte=1.5": "invalid_amount",
		} {
			r := env.request(http.MethodGet, "/api/v1/payments"+query, token, nil)
			if got, _ := r.errorCode(); r.status != http.StatusBadRequest || got != code {
				t.Errorf("list %s = %d %s, want %s", query, r.status, r.raw, code)
			}
		}
	})
}

func TestRESTEdges(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("developer")

	r := env.request(http.MethodPost, "/api/v1/payments", token, `{"amount": 1, "currency": "USD"}}`)
	if code, _ := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" {
		t.Errorf("trailing brace = %d %s", r.status, r.raw)
	}
	for path, allowed := range map[string]string{"/api/v1/payments": "GET, POST", "/api/v1/payments/pay_x": "GET", "/api/v1/auth/login": "POST"} {
		r := env.request(http.MethodPut, path, token, "{}")
		if code, _ := r.errorCode(); r.status != http.StatusMethodNotAllowed || code != "method_not_allowed" || r.header.Get("Allow") != allowed {
			t.Errorf("PUT %s = %d %s %v", path, r.status, r.raw, r.header.Get("Allow"))
		}
	}

	// Names and descriptions are limited in characters, not bytes.
	body := paymentBody("1.00", "USD", "4242424242424242")
	body["customer"] = map[string]any{"email": "a@example.com", "name": strings.Repeat("é", 200)}
	body["description"] = strings.Repeat("ü", 1000)
	if r := env.request(http.MethodPost, "/api/v1/payments", token, body); r.status != http.StatusCreated {
		t.Errorf("200 accented characters = %d %s", r.status, r.raw)
	}

	// With the database gone: readiness fails without detail, and a failing request answers
	// 500 internal_error and is logged with its request id.
	env.db.SQL.Close()
	if r := env.request(http.MethodGet, "/readyz", "", nil); r.status != http.StatusServiceUnavailable || len(r.body) != 1 {
		t.Errorf("readyz without a database = %d %s", r.status, r.raw)
	}
	r = env.request(http.MethodGet, "/api/v1/payments/pay_x", token, nil)
	if code, _ := r.errorCode(); r.status != http.StatusInternalServerError || code != "internal_error" || strings.Contains(r.raw, "sql") {
		t.Errorf("get without a database = %d %s", r.status, r.raw)
	}
	if !strings.Contains(env.logs.String(), `"request_id":"`+r.header.Get("X-Request-Id")+`"`) ||
		!strings.Contains(env.logs.String(), `"msg":"request failed"`) {
		t.Errorf("the failure was not logged:\n%s", env.logs.String())
	}
}
