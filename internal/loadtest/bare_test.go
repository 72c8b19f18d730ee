package loadtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestBareStatementsUseIndexes: on PostgreSQL, over tables of some thousands of rows the planner
// has seen, every statement the yardstick runs per request finds its rows through an index, as
// Paygate's do. A statement that scans a table (as settling a key without its merchant once did)
// slows the yardstick as the table grows during a run, and flatters Paygate.
func TestBareStatementsUseIndexes(t *testing.T) {
	db := databasetest.Postgres(t)
	b := newBare(db.SQL, db.Dialect, "")
	for _, fill := range []string{
		`INSERT INTO payments (id, created_at, updated_at, amount, currency, status, payment_method, customer_email, customer_name,
			card_brand, card_last4, card_exp_month, card_exp_year, card_fingerprint, provider, amount_refunded)
			SELECT 'pay_' || i, now(), now(), 4999, 'USD', 'processing', 'credit_card', 'a@example.com', 'A', 'visa', '4242', 12, 2030,
			'f', 'sandbox', 0 FROM generate_series(1, 5000) AS i`,
		`INSERT INTO payment_status_changes (id, payment_id, "from", "to", reason, actor, at)
			SELECT 'psc_' || i, 'pay_' || i, 'pending', 'processing', 'r', 'a', now() FROM generate_series(1, 5000) AS i`,
		`INSERT INTO idempotency_keys (id, principal, key, request_hash, resource_id, expires_at, created_at)
			SELECT 'idk_' || i, 'bare', 'key_' || i, 'h', 'pay_' || i, now(), now() FROM generate_series(1, 5000) AS i`,
		`ANALYZE`,
	} {
		if _, err := db.SQL.Exec(fill); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for name, statement := range map[string]struct {
		sql  string
		args []any
	}{
		"insert":       {b.insert, []any{"pay_new", now, 4999, "USD", "credit_card", "a@example.com", "A", "4242", 12, 2030}},
		"history":      {b.history, []any{"psc_new", "pay_1", "pending", "processing", now}},
		"outcome":      {b.outcome, []any{"pi_1", now, "pay_1"}},
		"claim key":    {b.claimKey, []any{"idk_new", "key_new", "pay_new", now}},
		"settle key":   {b.settleKey, []any{now, "key_1"}},
		"get":          {b.selectOne, []any{"pay_1"}},
		"history read": {b.selectHist, []any{"pay_1"}},
		"list":         {b.selectNewer, nil},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := db.SQL.QueryContext(context.Background(), "EXPLAIN "+statement.sql, statement.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if text := strings.Join(plan, "\n"); len(plan) == 0 || strings.Contains(text, "Seq Scan") {
				t.Errorf("%s scans a table:\n%s", statement.sql, text)
			}
		})
	}
}
