package app

import (
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// encoding/json matches field names case-insensitively, the last match winning, and merges a
// repeated object into the field it fills: a body such as {"Amount":"500.00","amount":"1.00"}
// means whatever its order says. REST accepts only the contract's exact names, each once, so what
// a client meant is never a guess, and a typo is named rather than read as a missing field.
func TestRESTFieldNamesAreExact(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		rest := `"currency":"USD","payment_method":"credit_card","customer":{"email":"ann@example.com"},"card":{"number":"4242424242424242","exp_month":12,"exp_year":` + cardExpYearText + `,"cvc":"123"}}`
		meansOne := `{"Amount":"500.00","amount":"1.00",` + rest
		meansFiveHundred := `{"amount":"1.00","Amount":"500.00",` + rest

		// The reviewer's case: both orders under one key. Each is refused and the key released,
		// so the second is never answered with the first's replay.
		for _, body := range []string{meansOne, meansFiveHundred} {
			r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "variant")
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "Amount" || r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s: %d %q %s", body, r.status, r.header.Get("Idempotent-Replayed"), r.raw)
			}
		}

		// A key that holds a valid request is not replayed to a variant of it either.
		valid := `{"amount":"1.00",` + rest
		created := env.request(http.MethodPost, "/api/v1/payments", token, valid, "Idempotency-Key", "valid")
		if created.status != http.StatusCreated {
			t.Fatalf("valid body = %d %s", created.status, created.raw)
		}
		paymentID := str(created.data()["id"])
		if r := env.request(http.MethodPost, "/api/v1/payments", token, meansFiveHundred, "Idempotency-Key", "valid"); r.status != http.StatusBadRequest || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("variant under a used key = %d %q %s", r.status, r.header.Get("Idempotent-Replayed"), r.raw)
		}
		if n := env.paymentCount(); n != 1 {
			t.Fatalf("%d payments, want only the valid one", n)
		}

		tests := []struct {
			name, path, body, param string
		}{
			{"nested card field", "/api/v1/payments", `{"amount":"1.00","currency":"USD","payment_method":"credit_card","customer":{"email":"ann@example.com"},"card":{"Number":"4242424242424242","exp_month":12,"exp_year":` + cardExpYearText + `,"cvc":"123"}}`, "card.Number"},
			{"nested customer field", "/api/v1/payments", `{"amount":"1.00","currency":"USD","payment_method":"credit_card","customer":{"EMAIL":"ann@example.com"},"card":{"number":"4242424242424242","exp_month":12,"exp_year":` + cardExpYearText + `,"cvc":"123"}}`, "customer.EMAIL"},
			{"unknown field", "/api/v1/payments", `{"amout":"1.00",` + rest, "amout"},
			{"refund", "/api/v1/payments/" + paymentID + "/refunds", `{"Amount":"1.00"}`, "Amount"},
			{"login", "/api/v1/auth/login", `{"Email":"ann@example.com","password":"secret"}`, "Email"},
			{"refresh", "/api/v1/auth/refresh", `{"Refresh_Token":"x"}`, "Refresh_Token"},
		}
		for _, tt := range tests {
			r := env.request(http.MethodPost, tt.path, token, tt.body)
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != tt.param {
				t.Errorf("%s: %d %s", tt.name, r.status, r.raw)
			}
		}
		if n := env.paymentCount(); n != 1 {
			t.Errorf("refused requests wrote payments: %d", n)
		}
		if n, err := db.Ent.Refund.Query().Count(databasetest.AsMerchant()); err != nil || n != 0 {
			t.Errorf("refused requests wrote %d refunds (%v)", n, err)
		}

		// encoding/json merges a repeated object into the struct, where the fingerprint keeps only
		// the last: two cards sent with the same repeated tail must not share a replay.
		for _, number := range []string{"4242424242424242", "5555555555554444"} {
			body := `{"amount":"1.00","currency":"USD","payment_method":"credit_card","customer":{"email":"ann@example.com"},` +
				`"card":{"number":"` + number + `","exp_month":12,"exp_year":` + cardExpYearText + `},"card":{"cvc":"123"}}`
			r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", "repeated")
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "card" || r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("repeated card %s: %d %q %s", number, r.status, r.header.Get("Idempotent-Replayed"), r.raw)
			}
		}
		repeatedMetadataKey := `{"amount":"2.00","metadata":{"order":"1","order":"2"},` + rest
		if r := env.request(http.MethodPost, "/api/v1/payments", token, repeatedMetadataKey); r.status != http.StatusBadRequest || get(r.body, "error", "param") != "metadata.order" {
			t.Errorf("repeated metadata key = %d %s", r.status, r.raw)
		}
		if n := env.paymentCount(); n != 1 {
			t.Errorf("repeated fields wrote payments: %d", n)
		}

		// A deeply nested body is refused for its depth, unauthenticated too, before reading it
		// through costs memory and time growing with the square of the depth.
		deep := `{"email":` + strings.Repeat("[", 1000) + `}`
		if r := env.request(http.MethodPost, "/api/v1/auth/login", "", deep); r.status != http.StatusBadRequest ||
			!strings.Contains(str(get(r.body, "error", "message")), "nests deeper") {
			t.Errorf("deeply nested body = %d %.300s", r.status, r.raw)
		}

		// Metadata is a map: its keys are the client's own, in any case.
		r := env.request(http.MethodPost, "/api/v1/payments", token, `{"amount":"2.00","metadata":{"Order":"1","order":"2"},`+rest)
		if r.status != http.StatusCreated || get(r.body, "data", "metadata", "Order") != "1" || get(r.body, "data", "metadata", "order") != "2" {
			t.Errorf("metadata keys = %d %s", r.status, r.raw)
		}
	})
}

// TestRESTBodiesMustBeJSON: a body sent as anything but application/json is 415 and writes
// nothing. A browser posts text/plain (and forms) across origins without asking first, so a
// body read whatever its type would let any web page take payments with a user's cookies or
// tokens.
func TestRESTBodiesMustBeJSON(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.tokenFor("admin")
	body := mustJSON(t, paymentBody("10.00", "USD", "4242424242424242"))
	for _, contentType := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/json-patch+json", "json"} {
		r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Content-Type", contentType)
		if code, _ := r.errorCode(); r.status != http.StatusUnsupportedMediaType || code != "unsupported_media_type" {
			t.Errorf("Content-Type %q: %d %s", contentType, r.status, r.raw)
		}
	}
	if n := env.paymentCount(); n != 0 {
		t.Fatalf("%d payments made from bodies that are not JSON", n)
	}
	for _, contentType := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		if r := env.request(http.MethodPost, "/api/v1/payments", token, body, "Content-Type", contentType); r.status != http.StatusCreated {
			t.Errorf("Content-Type %q: %d %s", contentType, r.status, r.raw)
		}
	}
	// A refund of all that is left needs no body, and so no type.
	id := str(get(env.request(http.MethodPost, "/api/v1/payments", token, body).data(), "id"))
	if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", token, nil); r.status != http.StatusCreated {
		t.Errorf("refund without a body: %d %s", r.status, r.raw)
	}
}

// TestRESTURLsHoldText: a path or query holding NUL (which PostgreSQL's text refuses), another
// control character or bytes that are not UTF-8 is 400, never a database error.
func TestRESTURLsHoldText(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("admin")
		for _, path := range []string{"/api/v1/payments/pay_%00", "/api/v1/payments/%FF", "/api/v1/payments?customer_email=a%00@example.com",
			"/api/v1/payments/pay_1/refunds?starting_after=%0A", "/api/v1/webhooks/logs/whe_%00"} {
			r := env.request(http.MethodGet, path, token, nil)
			if code, _ := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" {
				t.Errorf("GET %s: %d %s", path, r.status, r.raw)
			}
		}
		if r := env.request(http.MethodGet, "/api/v1/payments/pay_nobody", token, nil); r.status != http.StatusNotFound {
			t.Errorf("an unknown id is still 404: %d", r.status)
		}
	})
}

// TestEveryListRefusesUnknownParameters: each list of the REST surface takes limit,
// starting_after and ending_before, and answers a parameter it does not know 400 naming it, rather
// than a page that quietly ignored what the caller asked.
func TestEveryListRefusesUnknownParameters(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	admin := env.tokenFor("admin")
	paymentID := env.succeededPayment(admin, "5.00", "USD", "stripe")
	endpoint := env.request(http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": "http://127.0.0.1:9/hooks", "events": []string{"*"}})
	endpointID := str(get(endpoint.body, "data", "id"))
	lists := 0
	for _, route := range apiRoutes {
		name := runtime.FuncForPC(reflect.ValueOf(route.handle).Pointer()).Name()
		if route.method != http.MethodGet || !strings.Contains(name, ".List") {
			continue
		}
		lists++
		path := strings.Replace(route.path, "{id}", paymentID, 1)
		if strings.HasPrefix(route.path, "/api/v1/webhook-endpoints/{id}") {
			path = strings.Replace(route.path, "{id}", endpointID, 1)
		}
		if r := env.request(http.MethodGet, path+"?limit=2&starting_after=&ending_before=", admin, nil); r.status != http.StatusOK {
			t.Errorf("%s with the paging parameters = %d %s", path, r.status, r.raw)
		}
		r := env.request(http.MethodGet, path+"?limit=2&colour=blue", admin, nil)
		if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "colour" {
			t.Errorf("%s with an unknown parameter = %d %s", path, r.status, r.raw)
		}
	}
	if lists < 10 {
		t.Errorf("found %d lists among the routes; the walk has lost some", lists)
	}
}
