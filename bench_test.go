package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

// BenchmarkCreatePayment compares create-payment over REST and GraphQL with a bare handler that
// decodes the same body and makes the least writes a durable design makes, with database/sql: one
// transaction inserting the payment and its first two history entries (and, with an idempotency
// key, the key), one updating it to the outcome with a third (and storing the key's answer). The
// goals: REST within 15% of bare, GraphQL within 10% of REST, keyed or not.
//
//	go test -run '^$' -bench CreatePayment -benchmem .
func BenchmarkCreatePayment(b *testing.B) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.SQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.Postgres
	}
	restBody, _ := json.Marshal(paymentBody("49.99", "USD", "4242424242424242"))
	gqlBody, _ := json.Marshal(map[string]any{
		"query":     `mutation($in: CreatePaymentInput!) { createPayment(input: $in) { id amount currency status card { brand last4 } } }`,
		"variables": map[string]any{"in": gqlPaymentInput("49.99", "USD", "4242424242424242")},
	})
	for name, open := range databases {
		b.Run(name, func(b *testing.B) {
			// Each variant gets its own database, so none runs against a table the others filled.
			for _, keyed := range []bool{false, true} {
				suffix := map[bool]string{false: "", true: "-keyed"}[keyed]
				b.Run("bare"+suffix, func(b *testing.B) {
					db := open(b)
					benchmarkHandler(b, bareCreatePayment(db), "", "/bare", restBody, http.StatusCreated, keyed)
				})
				b.Run("rest"+suffix, func(b *testing.B) {
					handler, token := benchServer(b, open(b))
					benchmarkHandler(b, handler, token, "/api/v1/payments", restBody, http.StatusCreated, keyed)
				})
				b.Run("graphql"+suffix, func(b *testing.B) {
					handler, token := benchServer(b, open(b))
					benchmarkHandler(b, handler, token, "/query", gqlBody, http.StatusOK, keyed)
				})
			}
		})
	}
}

// BenchmarkDashboardPage is the largest real query, a page of 100 payments with their refunds
// and status history over GraphQL: the yardstick for what bounding a document may cost (see
// BenchmarkDocumentBounds in graph/, a small fraction of this).
//
//	go test -run '^$' -bench DashboardPage -benchmem .
func BenchmarkDashboardPage(b *testing.B) {
	db := databasetest.SQLite(b)
	env := newTestEnv(b, db)
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	for i := range 100 {
		id := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("10.00", "USD", "4242424242424242")).body, "data", "id"))
		if i%10 == 0 {
			env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, map[string]any{"amount": "2.50"})
		}
	}
	handler, token := benchServer(b, db)
	page, _ := json.Marshal(map[string]any{"query": `{ payments(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node {
		id amount amountRefunded currency status provider createdAt customer { email name } card { brand last4 }
		refunds { id amount status createdAt } statusHistory { from to at reason } } } } }`})
	benchmarkHandler(b, handler, token, "/query", page, http.StatusOK, false)
}

// benchServer is the real handler with the access log off, as a loaded server would run it
// at warn level, and a developer's token for it.
func benchServer(b *testing.B, db *database.DB) (http.Handler, string) {
	paygate := newTestApp(b, db, newLogger(io.Discard, "warn"))
	env := &testEnv{t: b, db: db, app: paygate}
	return paygate.handler, env.tokenFor("developer")
}

// benchmarkHandler posts body to h until the benchmark ends; keyed requests carry a new
// idempotency key each.
func benchmarkHandler(b *testing.B, h http.Handler, token, path string, body []byte, want int, keyed bool) {
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+token)
		if keyed {
			r.Header.Set("Idempotency-Key", prefixid.New("bench"))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s answered %d: %s", path, w.Code, w.Body.String())
		}
	}
}

// bareCreatePayment is the yardstick: no validation beyond decoding, no middleware, no GraphQL,
// two transactions through database/sql, the key in the first and its answer in the second.
func bareCreatePayment(db *database.DB) http.Handler {
	insert := `INSERT INTO payments (id, created_at, updated_at, amount, currency, status, payment_method,
		customer_email, customer_name, card_brand, card_last4, card_exp_month, card_exp_year, card_fingerprint,
		provider, amount_refunded) VALUES ($1, $2, $2, $3, $4, 'processing', $5, $6, $7, 'visa', $8, $9, $10, 'f', 'sandbox', 0)`
	update := `UPDATE payments SET status = 'succeeded', provider_payment_id = $1, updated_at = $2 WHERE id = $3 AND status = 'processing'`
	history := `INSERT INTO payment_status_changes (id, payment_id, "from", "to", reason, actor, at) VALUES ($1, $2, $3, $4, 'r', 'a', $5)`
	claimKey := `INSERT INTO idempotency_keys (id, principal, key, request_hash, locked_at, expires_at, created_at) VALUES ($1, 'bench', $2, 'h', $3, $3, $3)`
	storeAnswer := `UPDATE idempotency_keys SET locked_at = NULL, response_status = 201, response_body = $1 WHERE principal = 'bench' AND key = $2`
	if db.Dialect == dialect.SQLite {
		insert = strings.ReplaceAll(insert, "$", "?")
		update = strings.ReplaceAll(update, "$", "?")
		history = strings.ReplaceAll(history, "$", "?")
		claimKey = strings.ReplaceAll(claimKey, "$", "?")
		storeAnswer = strings.ReplaceAll(storeAnswer, "$", "?")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Amount        json.Number `json:"amount"`
			Currency      string      `json:"currency"`
			PaymentMethod string      `json:"payment_method"`
			Customer      struct{ Email, Name string }
			Card          struct {
				Number   string `json:"number"`
				ExpMonth int    `json:"exp_month"`
				ExpYear  int    `json:"exp_year"`
				CVC      string `json:"cvc"`
			}
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, now, key := prefixid.New("pay"), time.Now().UTC(), r.Header.Get("Idempotency-Key")
		err := inTx(db.SQL, func(tx *sql.Tx) error {
			if key != "" {
				if _, err := tx.Exec(claimKey, prefixid.New("idk"), key, now); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(insert, id, now, 4999, strings.ToUpper(req.Currency), req.PaymentMethod, req.Customer.Email,
				req.Customer.Name, req.Card.Number[len(req.Card.Number)-4:], req.Card.ExpMonth, req.Card.ExpYear); err != nil {
				return err
			}
			if _, err := tx.Exec(history, prefixid.New("psc"), id, nil, "pending", now); err != nil {
				return err
			}
			_, err := tx.Exec(history, prefixid.New("psc"), id, "pending", "processing", now)
			return err
		})
		if err == nil {
			err = inTx(db.SQL, func(tx *sql.Tx) error {
				if _, err := tx.Exec(update, prefixid.New("sbx_ch"), time.Now().UTC(), id); err != nil {
					return err
				}
				if _, err := tx.Exec(history, prefixid.New("psc"), id, "processing", "succeeded", time.Now().UTC()); err != nil {
					return err
				}
				if key != "" {
					_, err := tx.Exec(storeAnswer, []byte(`{"success":true,"data":{"id":"`+id+`"}}`), key)
					return err
				}
				return nil
			})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{"id": id, "status": "succeeded"}})
	})
}

func inTx(db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
