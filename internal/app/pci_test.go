package app

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestCardDataIsNeverStoredOrLogged runs card flows over both surfaces (approved, declined,
// provider error, invalid) and then reads every row of every table and every log line.
func TestCardDataIsNeverStoredOrLogged(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("developer")
		numbers := []string{"4242424242424242", "4000000000000002", "4000000000000119", "378282246310005", "4242424242424241"}
		cvcs := map[string]string{"378282246310005": "8642"}
		for i, number := range numbers {
			cvc := cvcs[number]
			if cvc == "" {
				cvc = "987"
			}
			body := paymentBody("12.34", "USD", number)
			body["card"].(map[string]any)["cvc"] = cvc
			env.request(http.MethodPost, "/api/v1/payments", token, body, "Idempotency-Key", fmt.Sprintf("pci-rest-%d", i))
			input := gqlPaymentInput("12.34", "USD", number)
			input["card"].(map[string]any)["cvc"] = cvc
			input["idempotencyKey"] = fmt.Sprintf("pci-graphql-%d", i)
			env.graphql(token, createPaymentMutation, map[string]any{"in": input})
		}
		// Malformed and invalid requests must not spill the card into errors, answers or logs either.
		var answers strings.Builder
		for _, bad := range []struct{ path, body string }{
			{"/api/v1/payments", `{"card": {"number": "4242424242424242", "cvc": "987"`},
			{"/api/v1/payments", `{"amount": 1, "card": {"number": 4242424242424242, "cvc": 987}}`},
			{"/query", `{"query": "x", "variables": {"n": "4242424242424242", "cvc": "987"`},
			// Literals of the wrong type, which validation messages would quote.
			{"/query", `{"query": "mutation { createPayment(input: {amount: \"1.00\", currency: \"USD\", card: {number: 4242424242424242, expMonth: 12, expYear: 2030, cvc: 987}}) { id } }"}`},
			{"/query", `{"query": "mutation { createPayment(input: {amount: \"1.00\", currency: \"USD\", card: {number: \"4\", expMonth: \"4242424242424242\", expYear: 2030, cvc: \"987\"}}) { id } }"}`},
			{"/query", `{"query": "mutation { createPayment(input: 4242424242424242) { id } }"}`},
			{"/query", `{"query": "mutation { 4242424242424242 }"}`},
			{"/query", `{"query": "mutation { __typename } 4242424242424242"}`},
			{"/query", `{"query": "query($s: PaymentStatus) { payments(where: {status: $s}) { totalCount } }", "variables": {"s": "4242424242424242"}}`},
		} {
			r := env.request(http.MethodPost, bad.path, token, bad.body)
			if r.status == http.StatusOK && get(r.body, "errors") == nil || r.status >= 500 {
				t.Errorf("%s %s = %d %s, want a client error", bad.path, bad.body, r.status, r.raw)
			}
			answers.WriteString(r.raw)
		}
		// The CVC as a number of its own: ids (req_…, pay_…) and hashes are runs of letters and
		// digits, which hold 987 now and then, so a plain search for it would fail by chance.
		if strings.Contains(answers.String(), "4242424242424242") || regexp.MustCompile(`\b987\b`).MatchString(answers.String()) {
			t.Errorf("an error answer repeats card data: %s", answers.String())
		}
		if env.paymentCount() < 6 {
			t.Fatalf("only %d payments recorded; the flows did not run", env.paymentCount())
		}

		dump, columns := dumpDatabase(t, db.SQL)
		logs := env.logs.String()
		if !strings.Contains(logs, `"path":"/api/v1/payments"`) {
			t.Fatal("the access log was not captured")
		}
		cardData := []secret{{"CVC 987", "987"}, {"CVC 8642", "8642"}}
		for _, number := range numbers {
			cardData = append(cardData, secret{"card number " + number, number})
		}
		if found := leaks(dump, cardData...); len(found) > 0 {
			t.Errorf("stored in the database: %v", found)
		}
		if found := leaks(logs, cardData...); len(found) > 0 {
			t.Errorf("in the logs: %v", found)
		}
		// By name, a column too. Not any "cvc" in the dump, which random ids and hashes spell now
		// and then.
		if slices.ContainsFunc(columns, func(c string) bool { return strings.Contains(c, "cvc") }) {
			t.Error("a column is named cvc")
		}
	})
}

// dumpDatabase renders every value of every table as |value|value|... lines, and lists the
// tables' column names.
func dumpDatabase(t *testing.T, db *sql.DB) (dump string, columnNames []string) {
	t.Helper()
	tables := []string{"payments", "payment_status_changes", "refunds", "idempotency_keys", "users", "refresh_tokens", "schema_migrations"}
	var out strings.Builder
	for _, table := range tables {
		rows, err := db.QueryContext(context.Background(), "SELECT * FROM "+table)
		if err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		columns, _ := rows.Columns()
		columnNames = append(columnNames, columns...)
		for rows.Next() {
			values := make([]any, len(columns))
			pointers := make([]any, len(columns))
			for i := range values {
				pointers[i] = &values[i]
			}
			if err := rows.Scan(pointers...); err != nil {
				t.Fatal(err)
			}
			out.WriteString(table)
			for _, v := range values {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(&out, "|%v", v)
			}
			out.WriteString("|\n")
		}
		rows.Close()
	}
	return out.String(), columnNames
}
