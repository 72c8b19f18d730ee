// Package loadtest measures Paygate against a yardstick: a bare Go handler that does the least
// any durable payment API must do for the same requests, over the same database. It holds that
// handler and the load driver that the paygate-load command and the benchmarks run.
package loadtest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/tenant"
)

// Bare is the yardstick handler over Paygate's own tables, with database/sql and nothing else:
// no validation beyond decoding, no authentication, no middleware, no GraphQL. It writes what a
// payment writes, but records its payments as failed with failure_code load_test, so that none
// can be refunded through Paygate; still, point it only at a database made for measuring.
//
//	POST /payments       two transactions, the least a durable design writes: the payment, its
//	                     first two history entries and (with an Idempotency-Key) the key before
//	                     the provider is asked; the outcome, its history entry and the key's
//	                     outcome after
//	GET  /payments/{id}  the payment and its status history: on PostgreSQL in one statement, the
//	                     history aggregated as JSON, as Paygate reads it; elsewhere in two
//	GET  /payments       the 20 newest payments
//
// Like Paygate it reads and answers whole payments, every column. With a stripeURL it charges
// each payment between its two transactions through the Stripe API there (one confirmed
// PaymentIntent, keyed by the payment's id), as Paygate does when pointed at the same address, so
// that both pay the same provider's cost.
func Bare(db *sql.DB, dialectName, stripeURL string) http.Handler {
	b := newBare(db, dialectName, stripeURL)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /payments", b.create)
	mux.HandleFunc("GET /payments/{id}", b.get)
	mux.HandleFunc("GET /payments", b.list)
	return mux
}

// newBare is the yardstick's statements, for its handlers and for a test of their plans.
func newBare(db *sql.DB, dialectName, stripeURL string) *bare {
	q := func(query string) string {
		if dialectName == dialect.SQLite {
			return strings.ReplaceAll(query, "$", "?")
		}
		return query
	}
	selectOne := `SELECT ` + paymentColumns + ` FROM payments WHERE id = $1`
	if dialectName == dialect.Postgres {
		selectOne = `SELECT ` + paymentColumns + `, (SELECT COALESCE(json_agg(json_build_object('from', h."from", 'to', h."to", ` +
			`'reason', h.reason, 'actor', h.actor, 'at', h.at) ORDER BY h.at, h.id), '[]') FROM payment_status_changes AS h ` +
			`WHERE h.payment_id = payments.id) FROM payments WHERE id = $1`
	}
	return &bare{
		db:           db,
		historyInRow: dialectName == dialect.Postgres,
		stripeURL:    stripeURL,
		client:       &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		insert:       q(`INSERT INTO payments (id, created_at, updated_at, amount, currency, status, payment_method, customer_email, customer_name, card_brand, card_last4, card_exp_month, card_exp_year, card_fingerprint, provider, amount_refunded) VALUES ($1, $2, $2, $3, $4, 'processing', $5, $6, $7, 'visa', $8, $9, $10, 'f', 'sandbox', 0)`),
		history:      q(`INSERT INTO payment_status_changes (id, payment_id, "from", "to", reason, actor, at) VALUES ($1, $2, $3, $4, 'r', 'a', $5)`),
		outcome:      q(`UPDATE payments SET status = 'failed', failure_code = 'load_test', provider_payment_id = $1, updated_at = $2 WHERE id = $3 AND status = 'processing'`),
		claimKey: q(`INSERT INTO idempotency_keys (id, merchant_id, principal, key, request_hash, resource_id, expires_at, created_at) VALUES ($1, '` +
			tenant.DefaultMerchant + `', 'bare', $2, 'h', $3, $4, $4)`),
		// By the key's unique index (merchant, principal, key), as Paygate settles it: without the
		// merchant every settle scans the table, and the yardstick slows as the run goes on.
		settleKey: q(`UPDATE idempotency_keys SET settled_at = $1 WHERE merchant_id = '` + tenant.DefaultMerchant +
			`' AND principal = 'bare' AND key = $2`),
		selectOne:   q(selectOne),
		selectHist:  q(`SELECT "from", "to", reason, actor, at FROM payment_status_changes WHERE payment_id = $1 ORDER BY at, id`),
		selectNewer: q(`SELECT ` + paymentColumns + ` FROM payments ORDER BY created_at DESC, id DESC LIMIT 21`),
	}
}

// paymentColumns are every column of a payment.
const paymentColumns = `id, merchant_id, created_at, updated_at, amount, currency, status, payment_method, customer_email, customer_name,
	card_brand, card_last4, card_exp_month, card_exp_year, card_fingerprint, provider, provider_payment_id, provider_decline_code,
	routing, amount_refunded, capture_method, amount_capturable, amount_captured, capture_before, canceled_at, cancellation_reason,
	pending_action, capture_requested, return_url, next_action_url, authenticate_before, failure_code, failure_message, description,
	disputed_at, dispute_reason, reversal_status, reversal_failure_message, reversal_refund, reversal_due, reversal_attempts, metadata`

type bare struct {
	db *sql.DB
	// historyInRow: selectOne reads the payment's history too, as its last column.
	historyInRow                                  bool
	stripeURL                                     string
	client                                        *http.Client
	insert, history, outcome, claimKey, settleKey string
	selectOne, selectHist, selectNewer            string
}

type bareCard struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	CVC      string `json:"cvc"`
}

type bareCreate struct {
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	PaymentMethod string      `json:"payment_method"`
	Customer      struct {
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"customer"`
	Card bareCard `json:"card"`
}

func (b *bare) create(w http.ResponseWriter, r *http.Request) {
	var req bareCreate
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Card.Number) < 4 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	id, now, key, providerID := prefixid.New("pay"), time.Now().UTC(), r.Header.Get("Idempotency-Key"), prefixid.New("bare")
	err := inTx(b.db, func(tx *sql.Tx) error {
		if key != "" {
			if _, err := tx.Exec(b.claimKey, prefixid.New("idk"), key, id, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(b.insert, id, now, 4999, strings.ToUpper(req.Currency), req.PaymentMethod, req.Customer.Email,
			req.Customer.Name, req.Card.Number[len(req.Card.Number)-4:], req.Card.ExpMonth, req.Card.ExpYear); err != nil {
			return err
		}
		if _, err := tx.Exec(b.history, prefixid.New("psc"), id, nil, "pending", now); err != nil {
			return err
		}
		_, err := tx.Exec(b.history, prefixid.New("psc"), id, "pending", "processing", now)
		return err
	})
	if err == nil && b.stripeURL != "" {
		providerID, err = b.charge(id, req)
	}
	if err == nil {
		err = inTx(b.db, func(tx *sql.Tx) error {
			at := time.Now().UTC()
			if _, err := tx.Exec(b.outcome, providerID, at, id); err != nil {
				return err
			}
			if _, err := tx.Exec(b.history, prefixid.New("psc"), id, "processing", "failed", at); err != nil {
				return err
			}
			if key != "" {
				_, err := tx.Exec(b.settleKey, at, key)
				return err
			}
			return nil
		})
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	failed := "load_test"
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "data": barePayment{
		ID: id, Object: "payment", CreatedAt: now, UpdatedAt: now, Amount: 4999, Currency: strings.ToUpper(req.Currency),
		Status: "failed", PaymentMethod: req.PaymentMethod, Customer: bareCustomer{req.Customer.Email, req.Customer.Name},
		Card: bareCardOut{Brand: "visa", Last4: req.Card.Number[len(req.Card.Number)-4:], ExpMonth: req.Card.ExpMonth,
			ExpYear: req.Card.ExpYear, Fingerprint: "f"}, Provider: "sandbox", ProviderPaymentID: &providerID, FailureCode: &failed,
	}})
}

// charge confirms a PaymentIntent for the payment at Stripe's API and returns its id.
func (b *bare) charge(id string, req bareCreate) (string, error) {
	form := url.Values{"amount": {"4999"}, "currency": {strings.ToLower(req.Currency)}, "confirm": {"true"},
		"payment_method_data[type]": {"card"}, "payment_method_data[card][number]": {req.Card.Number},
		"payment_method_data[card][exp_month]": {strconv.Itoa(req.Card.ExpMonth)}, "payment_method_data[card][exp_year]": {strconv.Itoa(req.Card.ExpYear)},
		"payment_method_data[card][cvc]": {req.Card.CVC}, "metadata[paygate_id]": {id}}
	httpReq, err := http.NewRequest(http.MethodPost, b.stripeURL+"/v1/payment_intents", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	httpReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	httpReq.Header.Set("Authorization", "Bearer sk_test_load")
	httpReq.Header.Set("Idempotency-Key", id)
	resp, err := b.client.Do(httpReq)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var intent struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&intent); err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("charging at Stripe: %s", resp.Status)
	}
	return intent.ID, nil
}

// barePayment is the whole payment resource, as Paygate answers it, so that both read and encode
// the same fields.
type barePayment struct {
	ID                  string          `json:"id"`
	Object              string          `json:"object"`
	MerchantID          string          `json:"-"`
	CreatedAt           time.Time       `json:"created_at"`
	UpdatedAt           time.Time       `json:"updated_at"`
	Amount              int64           `json:"amount"`
	Currency            string          `json:"currency"`
	Status              string          `json:"status"`
	PaymentMethod       string          `json:"payment_method"`
	Customer            bareCustomer    `json:"customer"`
	Card                bareCardOut     `json:"card"`
	Provider            string          `json:"provider"`
	ProviderPaymentID   *string         `json:"provider_payment_id"`
	ProviderDeclineCode *string         `json:"provider_decline_code"`
	Routing             json.RawMessage `json:"routing"`
	AmountRefunded      int64           `json:"amount_refunded"`
	CaptureMethod       string          `json:"capture_method"`
	AmountCapturable    int64           `json:"amount_capturable"`
	AmountCaptured      int64           `json:"amount_captured"`
	CaptureBefore       *time.Time      `json:"capture_before"`
	CanceledAt          *time.Time      `json:"canceled_at"`
	CancellationReason  *string         `json:"cancellation_reason"`
	PendingAction       *string         `json:"pending_action,omitempty"`
	CaptureRequested    *int64          `json:"capture_requested,omitempty"`
	ReturnURL           *string         `json:"return_url"`
	NextActionURL       *string         `json:"next_action_url"`
	AuthenticateBefore  *time.Time      `json:"authenticate_before"`
	FailureCode         *string         `json:"failure_code"`
	FailureMessage      *string         `json:"failure_message"`
	Description         *string         `json:"description"`
	DisputedAt          *time.Time      `json:"disputed_at"`
	DisputeReason       *string         `json:"dispute_reason"`
	// ReversalStatus and ReversalFailureMessage are answered; the reversal's other columns are
	// read, as Paygate reads every column, and kept to itself.
	ReversalStatus         *string           `json:"reversal_status"`
	ReversalFailureMessage *string           `json:"reversal_failure_message"`
	ReversalRefund         int64             `json:"-"`
	ReversalDue            *time.Time        `json:"-"`
	ReversalAttempts       int64             `json:"-"`
	Metadata               map[string]string `json:"metadata"`
	History                []bareChange      `json:"status_history,omitempty"`
}

type bareChange struct {
	From   *string   `json:"from"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
	Actor  string    `json:"actor"`
	At     time.Time `json:"at"`
}

type bareCustomer struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

type bareCardOut struct {
	Brand       string `json:"brand"`
	Last4       string `json:"last4"`
	ExpMonth    int    `json:"exp_month"`
	ExpYear     int    `json:"exp_year"`
	Fingerprint string `json:"fingerprint"`
}

// scanPayment scans a payment's columns, and then the extra columns given.
func scanPayment(row interface{ Scan(...any) error }, extra ...any) (barePayment, error) {
	p := barePayment{Object: "payment"}
	var routing, metadata sql.NullString
	err := row.Scan(append([]any{&p.ID, &p.MerchantID, &p.CreatedAt, &p.UpdatedAt, &p.Amount, &p.Currency, &p.Status, &p.PaymentMethod,
		&p.Customer.Email, &p.Customer.Name, &p.Card.Brand, &p.Card.Last4, &p.Card.ExpMonth, &p.Card.ExpYear,
		&p.Card.Fingerprint, &p.Provider, &p.ProviderPaymentID, &p.ProviderDeclineCode, &routing, &p.AmountRefunded,
		&p.CaptureMethod, &p.AmountCapturable, &p.AmountCaptured, &p.CaptureBefore, &p.CanceledAt, &p.CancellationReason,
		&p.PendingAction, &p.CaptureRequested, &p.ReturnURL, &p.NextActionURL, &p.AuthenticateBefore, &p.FailureCode,
		&p.FailureMessage, &p.Description, &p.DisputedAt, &p.DisputeReason, &p.ReversalStatus, &p.ReversalFailureMessage,
		&p.ReversalRefund, &p.ReversalDue, &p.ReversalAttempts, &metadata}, extra...)...)
	if err == nil && routing.Valid {
		p.Routing = json.RawMessage(routing.String)
	}
	if err == nil && metadata.Valid {
		err = json.Unmarshal([]byte(metadata.String), &p.Metadata)
	}
	return p, err
}

func (b *bare) get(w http.ResponseWriter, r *http.Request) {
	var history []byte
	var extra []any
	if b.historyInRow {
		extra = append(extra, &history)
	}
	p, err := scanPayment(b.db.QueryRow(b.selectOne, r.PathValue("id")), extra...)
	if err == sql.ErrNoRows {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if err == nil && b.historyInRow {
		err = json.Unmarshal(history, &p.History)
	} else if err == nil {
		err = b.appendHistory(&p)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": p})
}

func (b *bare) appendHistory(p *barePayment) error {
	rows, err := b.db.Query(b.selectHist, p.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var change bareChange
		if err := rows.Scan(&change.From, &change.To, &change.Reason, &change.Actor, &change.At); err != nil {
			return err
		}
		p.History = append(p.History, change)
	}
	return rows.Err()
}

func (b *bare) list(w http.ResponseWriter, r *http.Request) {
	rows, err := b.db.Query(b.selectNewer)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	page := make([]barePayment, 0, 21)
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		page = append(page, p)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hasMore := len(page) > 20
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": page[:min(len(page), 20)], "has_more": hasMore})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
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
