package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestCardDataIsNeverStoredOrLogged runs card flows over both surfaces (approved, declined,
// provider error, invalid) and then reads every row of every table and every log line.
func TestCardDataIsNeverStoredOrLogged(t *testing.T) {
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
		// Malformed and invalid requests must not spill the card into errors or logs either.
		env.request(http.MethodPost, "/api/v1/payments", token, `{"card": {"number": "4242424242424242", "cvc": "987"`)
		env.request(http.MethodPost, "/query", token, `{"query": "x", "variables": {"n": "4242424242424242", "cvc": "987"`)
		if env.paymentCount() < 6 {
			t.Fatalf("only %d payments recorded; the flows did not run", env.paymentCount())
		}

		dump := dumpDatabase(t, db.SQL)
		logs := env.logs.String()
		if !strings.Contains(logs, `"path":"/api/v1/payments"`) {
			t.Fatal("the access log was not captured")
		}
		for _, number := range numbers {
			if strings.Contains(dump, number) {
				t.Errorf("card number %s is stored in the database", number)
			}
			if strings.Contains(logs, number) {
				t.Errorf("card number %s is in the logs", number)
			}
		}
		for _, cvc := range []string{"987", "8642"} {
			if strings.Contains(dump, "|"+cvc+"|") {
				t.Errorf("CVC %s is stored in the database", cvc)
			}
			if strings.Contains(logs, `"`+cvc+`"`) {
				t.Errorf("CVC %s is in the logs", cvc)
			}
		}
		if strings.Contains(strings.ToLower(dump), "cvc") || strings.Contains(strings.ToLower(logs), "cvc") {
			t.Error("something named cvc is stored or logged")
		}
	})
}

// dumpDatabase renders every value of every table as |value|value|... lines.
func dumpDatabase(t *testing.T, db *sql.DB) string {
	t.Helper()
	tables := []string{"payments", "payment_status_changes", "refunds", "idempotency_keys", "users", "refresh_tokens", "schema_migrations"}
	var out strings.Builder
	for _, table := range tables {
		rows, err := db.QueryContext(context.Background(), "SELECT * FROM "+table)
		if err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		columns, _ := rows.Columns()
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
	return out.String()
}
