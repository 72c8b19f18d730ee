package database

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/golang-migrate/migrate/v4"

	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/migrations"
)

// merchantsMigration is, per dialect, the migration that adds merchants and the one before it.
var merchantsMigration = map[string]struct{ before, merchants uint }{
	dialect.SQLite:   {before: 20261126110041, merchants: 20261126133912},
	dialect.Postgres: {before: 20261126110042, merchants: 20261126133913},
}

// merchantOwnedTables are the tables the merchants migration gives a merchant_id.
var merchantOwnedTables = []string{
	"users", "api_keys", "payments", "refunds", "payment_status_changes", "events",
	"webhook_endpoints", "webhook_deliveries", "webhook_delivery_attempts", "idempotency_keys",
}

// platformWideTables are tables the merchants migration must leave alone, columns and rows:
// providers' webhooks are the platform's, as are the alerts and the sessions.
var platformWideTables = []string{"webhook_events", "webhook_attempts", "alerts", "alert_changes", "refresh_tokens"}

// TestUpgradeMovesEverythingIntoTheDefaultMerchant fills a database of the day before merchants
// with what a running Paygate holds (users, a key, payments in several states with their
// history and a refund, events, endpoints with deliveries and their tries, idempotency keys,
// providers' webhooks, an alert), applies the merchants migration, and checks that every row
// is still there with every value it had, that it all became the default merchant's, that the
// default merchant is the only one, that the admins became platform staff, and that taking the
// migration back and applying it again loses nothing either.
func TestUpgradeMovesEverythingIntoTheDefaultMerchant(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db, err := Open("sqlite://"+filepath.Join(t.TempDir(), "upgrade.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		testUpgradeIntoTheDefaultMerchant(t, db)
	})
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			db, err := Open(emptyPostgresSchema(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			testUpgradeIntoTheDefaultMerchant(t, db)
		})
	}
}

func testUpgradeIntoTheDefaultMerchant(t *testing.T, db *DB) {
	ctx := context.Background()
	versions := merchantsMigration[db.Dialect]
	if previous := migrationBefore(t, db.Dialect, versions.merchants); previous != versions.before {
		t.Fatalf("the migration before %d is %d, not %d", versions.merchants, previous, versions.before)
	}
	m, done, err := db.migrator(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	latest, err := db.LatestMigration()
	if err != nil {
		t.Fatal(err)
	}

	// 1. The schema of the day before merchants.
	for {
		version, _, err := m.Version()
		if err != nil && !errors.Is(err, migrate.ErrNilVersion) {
			t.Fatal(err)
		}
		if err == nil && version >= versions.before {
			break
		}
		if err := m.Steps(1); err != nil {
			t.Fatalf("migrating up to %d: %v", versions.before, err)
		}
	}
	requireVersion(t, m, versions.before)

	// 2. What a running Paygate held then.
	tables := upgradeFixtures()
	for _, table := range tables {
		insertRows(t, db, table)
	}
	for _, table := range tables {
		requireRows(t, db, table, "before the upgrade")
	}
	platformColumns := map[string][]string{}
	for _, name := range platformWideTables {
		platformColumns[name] = columnsOf(t, db, name)
	}

	// 3. The merchants migration, then whatever follows it.
	if err := m.Steps(1); err != nil {
		t.Fatalf("applying the merchants migration: %v", err)
	}
	requireVersion(t, m, versions.merchants)
	for name, columns := range platformColumns {
		if got := columnsOf(t, db, name); !slices.Equal(got, columns) {
			t.Errorf("the merchants migration changed the columns of %s to %v; before it they were %v", name, got, columns)
		}
	}
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		t.Fatalf("migrating up to the latest: %v", err)
	}
	requireVersion(t, m, latest)

	// 4. Nothing lost, nothing changed, everything the default merchant's.
	requireMovedIntoTheDefaultMerchant(t, db, tables, platformColumns, "after the upgrade")
	requireIdempotencyKeysUniquePerMerchant(t, db)
	requireSeenByTheDefaultMerchant(t, db, tables)

	// 5. Back before merchants (one migration down while it is the latest) and up again.
	if err := m.Migrate(versions.before); err != nil {
		t.Fatalf("rolling the merchants migration back: %v", err)
	}
	requireVersion(t, m, versions.before)
	for _, table := range tables {
		requireRows(t, db, table, "after rolling the upgrade back")
	}
	for _, name := range merchantOwnedTables {
		if slices.Contains(columnsOf(t, db, name), "merchant_id") {
			t.Errorf("rolled back, %s still has merchant_id", name)
		}
	}
	if slices.Contains(columnsOf(t, db, "users"), "platform") {
		t.Error("rolled back, users still has platform")
	}
	if _, err := db.SQL.Exec(`SELECT COUNT(*) FROM merchants`); err == nil {
		t.Error("rolled back, the merchants table is still there")
	}
	for name, columns := range platformColumns {
		if got := columnsOf(t, db, name); !slices.Equal(got, columns) {
			t.Errorf("rolled back, %s has the columns %v; before the upgrade it had %v", name, got, columns)
		}
	}

	if err := m.Up(); err != nil {
		t.Fatalf("applying the merchants migration again: %v", err)
	}
	requireVersion(t, m, latest)
	requireMovedIntoTheDefaultMerchant(t, db, tables, platformColumns, "after upgrading again")
	requireIdempotencyKeysUniquePerMerchant(t, db)
	requireSeenByTheDefaultMerchant(t, db, tables)
}

// requireMovedIntoTheDefaultMerchant checks the upgraded database: every row with its values,
// each merchant-owned row the default merchant's, the default merchant alone, the admins staff.
func requireMovedIntoTheDefaultMerchant(t *testing.T, db *DB, tables []fixtureTable, platformColumns map[string][]string, when string) {
	t.Helper()
	for _, table := range tables {
		requireRows(t, db, table, when)
	}
	for _, table := range tables {
		if !slices.Contains(merchantOwnedTables, table.name) {
			continue
		}
		var total, owned int
		if err := db.SQL.QueryRow(`SELECT COUNT(*), COUNT(CASE WHEN merchant_id = $1 THEN 1 END) FROM `+table.name, tenant.DefaultMerchant).Scan(&total, &owned); err != nil {
			t.Fatalf("%s: counting %s by merchant: %v", when, table.name, err)
		}
		if total != len(table.rows) || owned != total {
			t.Errorf("%s: %d of %d rows of %s are the default merchant's, of %d inserted", when, owned, total, table.name, len(table.rows))
		}
	}
	for _, name := range merchantOwnedTables {
		if !slices.ContainsFunc(tables, func(table fixtureTable) bool { return table.name == name }) {
			t.Errorf("no rows of %s were upgraded: the fixtures miss a merchant-owned table", name)
		}
	}
	// Later migrations may add columns to them, and take none away.
	for name, columns := range platformColumns {
		if got := columnsOf(t, db, name); !slices.Equal(got[:min(len(got), len(columns))], columns) {
			t.Errorf("%s: %s has the columns %v; before the upgrade it had %v", when, name, got, columns)
		}
	}

	rows, err := db.SQL.Query(`SELECT id, name, status, created_at, updated_at FROM merchants`)
	if err != nil {
		t.Fatalf("%s: reading the merchants: %v", when, err)
	}
	var merchants []string
	for rows.Next() {
		var id, name, status string
		var createdAt, updatedAt time.Time
		if err := rows.Scan(&id, &name, &status, &createdAt, &updatedAt); err != nil {
			rows.Close()
			t.Fatalf("%s: reading the merchants: %v", when, err)
		}
		merchants = append(merchants, id+" "+name+" "+status)
		if age := time.Since(createdAt); age < -time.Hour || age > time.Hour || !updatedAt.Equal(createdAt) {
			t.Errorf("%s: merchant %s was created at %v and updated at %v; want the time of the upgrade, twice", when, id, createdAt, updatedAt)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: reading the merchants: %v", when, err)
	}
	if want := []string{tenant.DefaultMerchant + " default active"}; !slices.Equal(merchants, want) {
		t.Errorf("%s: merchants %q, want %q", when, merchants, want)
	}

	platform := map[string]bool{}
	rows, err = db.SQL.Query(`SELECT id, platform FROM users`)
	if err != nil {
		t.Fatalf("%s: reading the users: %v", when, err)
	}
	for rows.Next() {
		var id string
		var staff bool
		if err := rows.Scan(&id, &staff); err != nil {
			rows.Close()
			t.Fatalf("%s: reading the users: %v", when, err)
		}
		platform[id] = staff
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: reading the users: %v", when, err)
	}
	want := map[string]bool{adminID: true, viewerID: false, formerDeveloperID: false}
	for id, staff := range want {
		if got, ok := platform[id]; !ok || got != staff {
			t.Errorf("%s: user %s platform = %v (found %v), want %v", when, id, got, ok, staff)
		}
	}
}

// requireIdempotencyKeysUniquePerMerchant checks the key's new uniqueness: the default
// merchant's keys stay unique per principal, and another merchant may reuse one.
func requireIdempotencyKeysUniquePerMerchant(t *testing.T, db *DB) {
	t.Helper()
	insert := `INSERT INTO idempotency_keys (id, merchant_id, principal, "key", request_hash, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`
	at := fixtureTime(0)
	if _, err := db.SQL.Exec(insert, "idk_probe_same_merchant", tenant.DefaultMerchant, adminID, "order-1001-create", "probe", at.Add(24*time.Hour), at); err == nil {
		db.SQL.Exec(`DELETE FROM idempotency_keys WHERE id = 'idk_probe_same_merchant'`)
		t.Error("a second idempotency key with the default merchant's principal and key was stored")
	}
	// The default merchant's staff act for other merchants too, with keys of their own there.
	if _, err := db.SQL.Exec(insert, "idk_probe_other_merchant", "mer_01JDOTHERMERCHANT000000000", adminID, "order-1001-create", "probe", at.Add(24*time.Hour), at); err != nil {
		t.Errorf("another merchant cannot use the default merchant's principal and key: %v", err)
	}
	// The rollback's (principal, key) index could not be made while it stays.
	if _, err := db.SQL.Exec(`DELETE FROM idempotency_keys WHERE id = 'idk_probe_other_merchant'`); err != nil {
		t.Fatal(err)
	}
}

// requireSeenByTheDefaultMerchant reads the upgraded rows as Paygate does: through ent, as the
// default merchant's work, which sees every one of them, and as another merchant's, which sees
// none.
func requireSeenByTheDefaultMerchant(t *testing.T, db *DB, tables []fixtureTable) {
	t.Helper()
	count := func(name string) int {
		for _, table := range tables {
			if table.name == name {
				return len(table.rows)
			}
		}
		return 0
	}
	ctx := tenant.For(context.Background(), tenant.DefaultMerchant)
	other := tenant.For(context.Background(), "mer_01JDOTHERMERCHANT000000000")
	checks := []struct {
		name  string
		count func(context.Context) (int, error)
	}{
		{"users", db.Ent.User.Query().Count},
		{"api_keys", db.Ent.APIKey.Query().Count},
		{"payments", db.Ent.Payment.Query().Count},
		{"refunds", db.Ent.Refund.Query().Count},
		{"payment_status_changes", db.Ent.PaymentStatusChange.Query().Count},
		{"events", db.Ent.Event.Query().Count},
		{"webhook_endpoints", db.Ent.WebhookEndpoint.Query().Count},
		{"webhook_deliveries", db.Ent.WebhookDelivery.Query().Count},
		{"webhook_delivery_attempts", db.Ent.WebhookDeliveryAttempt.Query().Count},
		{"idempotency_keys", db.Ent.IdempotencyKey.Query().Count},
	}
	for _, check := range checks {
		if n, err := check.count(ctx); err != nil || n != count(check.name) {
			t.Errorf("the default merchant sees %d %s (%v), want %d", n, check.name, err, count(check.name))
		}
		if n, err := check.count(other); err != nil || n != 0 {
			t.Errorf("another merchant sees %d %s (%v), want none", n, check.name, err)
		}
	}
	merchant, err := db.Ent.Merchant.Get(tenant.System(context.Background()), tenant.DefaultMerchant)
	if err != nil {
		t.Errorf("reading the default merchant through ent: %v", err)
	} else if merchant.Name != "default" || merchant.Status != "active" {
		t.Errorf("the default merchant is %q, %q through ent", merchant.Name, merchant.Status)
	}
	admin, err := db.Ent.User.Get(ctx, adminID)
	if err != nil {
		t.Errorf("reading the admin through ent: %v", err)
	} else if !admin.Platform || admin.MerchantID != tenant.DefaultMerchant || admin.PasswordHash != adminPasswordHash {
		t.Errorf("through ent the admin is platform %v, of merchant %s, with the hash %q", admin.Platform, admin.MerchantID, admin.PasswordHash)
	}
}

// A fixtureTable is rows to insert into a table, named by column, in the schema of the day
// before merchants. Every table has a text id.
type fixtureTable struct {
	name    string
	columns []string
	rows    [][]any
}

const (
	adminID           = "usr_01JD0ADMIN00000000000000000"
	viewerID          = "usr_01JD0VIEWER0000000000000000"
	formerDeveloperID = "usr_01JD0DEVELOPER0000000000000"
	adminPasswordHash = "$2a$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"
	paySucceeded      = "pay_01JD0SUCCEEDED00000000000000"
	payRefunded       = "pay_01JD0PARTREFUNDED00000000000"
	payAuthorized     = "pay_01JD0REQCAPTURE0000000000000"
	eventSucceeded    = "evt_01JD0PAYSUCCEEDED00000000000"
	eventRefunded     = "evt_01JD0REFUNDSUCCEEDED0000000"
	endpointEnabled   = "we_01JD0ENABLED000000000000000"
	deliverySucceeded = "wd_01JD0SUCCEEDED0000000000000"
	inboundProcessed  = "whe_01JD0PROCESSED000000000000"
	alertResolved     = "alr_01JD0ENDPOINTFAILING000000"
)

// fixtureTime is a moment of the day before merchants, to the microsecond PostgreSQL keeps.
func fixtureTime(minutes int) time.Time {
	return time.Date(2026, 11, 25, 9, 30, 15, 123456000, time.UTC).Add(time.Duration(minutes) * time.Minute)
}

// upgradeFixtures is what Paygate held: parents before the rows that refer to them, nullable
// columns filled where Paygate fills them, and values that are not the columns' defaults, so a
// column the migration forgot to copy shows.
func upgradeFixtures() []fixtureTable {
	at := fixtureTime
	return []fixtureTable{
		{
			name:    "users",
			columns: []string{"id", "created_at", "updated_at", "email", "password_hash", "role", "disabled"},
			rows: [][]any{
				{adminID, at(0), at(1), "ops@shop.example", adminPasswordHash, "admin", false},
				{viewerID, at(2), at(3), "finance@shop.example", "$2a$12$KIXQpK0Ly0tTBWqW5n0WTe1sPAoZ8HqN3hOvMtn0s9vW9bRZqg4Mi", "viewer", false},
				{formerDeveloperID, at(4), at(5), "dev@shop.example", "$2a$12$8h4Xn3F1iYqXfA9yqD2cJuyB0sC7pLw3yM1qV6uS2hZr5dK0tE9Gm", "developer", true},
			},
		},
		{
			name:    "refresh_tokens",
			columns: []string{"id", "created_at", "updated_at", "token_hash", "family", "expires_at", "used_at", "revoked_at", "user_id"},
			rows: [][]any{
				{"rt_01JD0ADMINSESSION00000000000", at(6), at(7), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "fam_01JD0ADMIN000000000000000", at(6 + 30*24*60), at(7), nil, adminID},
			},
		},
		{
			name:    "api_keys",
			columns: []string{"id", "created_at", "updated_at", "name", "key_hash", "prefix", "scopes", "expires_at", "revoked_at", "last_used_at", "user_id"},
			rows: [][]any{
				{"key_01JD0VIEWERREPORTS000000000", at(8), at(9), "Finance reports", "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", "pk_live_4mQx", `["payments:read","monitoring:read"]`, at(8 + 365*24*60), nil, at(300), viewerID},
			},
		},
		{
			name: "payments",
			columns: []string{"id", "created_at", "updated_at", "amount", "currency", "status", "payment_method", "customer_email", "customer_name",
				"card_brand", "card_last4", "card_exp_month", "card_exp_year", "card_fingerprint", "provider", "provider_payment_id", "provider_decline_code",
				"routing", "amount_refunded", "capture_method", "amount_capturable", "amount_captured", "capture_before", "canceled_at", "cancellation_reason",
				"pending_action", "capture_requested", "return_url", "next_action_url", "authenticate_before", "failure_code", "failure_message",
				"description", "disputed_at", "dispute_reason", "metadata"},
			rows: [][]any{
				{paySucceeded, at(10), at(11), int64(4999), "USD", "succeeded", "credit_card", "ana@customer.example", "Ana Lima",
					"visa", "4242", 12, 2030, "fp_3b1f0c9a", "stripe", "pi_3QxStripe0001", nil,
					`{"rule":"usd-to-stripe","attempts":[{"provider":"stripe","outcome":"approved","latency_ms":182}]}`, int64(0), "automatic", int64(0), int64(4999), nil, nil, nil,
					nil, nil, "https://shop.example/return/1001", nil, nil, nil, nil,
					"Order 1001", nil, nil, `{"order_id":"1001","channel":"web"}`},
				{payRefunded, at(20), at(40), int64(12000), "EUR", "partially_refunded", "credit_card", "jo@customer.example", "Jo Brandt",
					"mastercard", "4444", 3, 2029, "fp_77ad10e2", "adyen", "JDD6LKT8MPLF5X82", nil,
					`{"rule":null,"attempts":[{"provider":"stripe","outcome":"unavailable","latency_ms":5001},{"provider":"adyen","outcome":"approved","latency_ms":240}]}`, int64(2500), "automatic", int64(0), int64(12000), nil, nil, nil,
					nil, nil, nil, nil, nil, nil, nil,
					"Order 1002", at(60), "product_not_received", `{"order_id":"1002"}`},
				{payAuthorized, at(30), at(31), int64(7500), "GBP", "requires_capture", "credit_card", "sam@customer.example", "",
					"amex", "0005", 7, 2028, "fp_c01dbeef", "checkout", "pay_ckout_7h2k", nil,
					`{"rule":"gbp-to-checkout","attempts":[{"provider":"checkout","outcome":"approved","latency_ms":97}]}`, int64(0), "manual", int64(7500), int64(0), at(30 + 7*24*60), nil, nil,
					"capture", int64(5000), "https://shop.example/return/1003", "https://checkout.example/3ds/7h2k", at(45), nil, nil,
					nil, nil, nil, nil},
			},
		},
		{
			name:    "refunds",
			columns: []string{"id", "created_at", "updated_at", "amount", "currency", "status", "reason", "provider_refund_id", "failure_code", "payment_id"},
			rows: [][]any{
				{"re_01JD0PARTIAL0000000000000000", at(35), at(36), int64(2500), "EUR", "succeeded", "One item arrived damaged", "ref_adyen_8813", nil, payRefunded},
				{"re_01JD0DECLINED000000000000000", at(37), at(38), int64(1000), "EUR", "failed", nil, nil, "refund_declined", payRefunded},
			},
		},
		{
			name:    "payment_status_changes",
			columns: []string{"id", "from", "to", "reason", "actor", "at", "payment_id"},
			rows: [][]any{
				{"psc_01JD0A0000000000000000000000", nil, "pending", "", "system", at(10), paySucceeded},
				{"psc_01JD0A1000000000000000000000", "pending", "succeeded", "charge approved by stripe", "system", at(11), paySucceeded},
				{"psc_01JD0B0000000000000000000000", nil, "pending", "", "system", at(20), payRefunded},
				{"psc_01JD0B1000000000000000000000", "pending", "succeeded", "charge approved by adyen", "system", at(21), payRefunded},
				{"psc_01JD0B2000000000000000000000", "succeeded", "partially_refunded", "refund re_01JD0PARTIAL0000000000000000", adminID, at(36), payRefunded},
				{"psc_01JD0C0000000000000000000000", nil, "pending", "", "system", at(30), payAuthorized},
				{"psc_01JD0C1000000000000000000000", "pending", "requires_capture", "authorized by checkout", "key_01JD0VIEWERREPORTS000000000", at(31), payAuthorized},
			},
		},
		{
			name:    "events",
			columns: []string{"id", "type", "object_id", "body", "fanned_out", "created_at"},
			rows: [][]any{
				{eventSucceeded, "payment.succeeded", paySucceeded, []byte(`{"id":"` + eventSucceeded + `","type":"payment.succeeded","data":{"object":{"id":"` + paySucceeded + `","amount":4999,"currency":"USD"}}}`), true, at(11)},
				{eventRefunded, "refund.succeeded", "re_01JD0PARTIAL0000000000000000", []byte(`{"id":"` + eventRefunded + `", "type": "refund.succeeded", "data": {"object": {"amount": 2500}}}` + "\n"), false, at(36)},
			},
		},
		{
			name: "webhook_endpoints",
			columns: []string{"id", "created_at", "updated_at", "url", "events", "description", "status", "disabled_reason", "secret",
				"previous_secret", "previous_secret_expires_at", "failing_since", "created_by"},
			rows: [][]any{
				{endpointEnabled, at(5), at(9), "https://shop.example/hooks/paygate", `["payment.succeeded","refund.succeeded"]`, "Order system", "enabled", nil, "whsec_4f1c9e8b7a6d5c4b3a291807f6e5d4c3",
					"whsec_0a1b2c3d4e5f60718293a4b5c6d7e8f9", at(9 + 24*60), at(12), adminID},
				{"we_01JD0DISABLED00000000000000", at(6), at(50), "https://old.shop.example/hooks", `["payment.failed"]`, nil, "disabled", "failing for 3 days", "whsec_99887766554433221100ffeeddccbbaa",
					nil, nil, nil, adminID},
			},
		},
		{
			name: "webhook_deliveries",
			columns: []string{"id", "created_at", "updated_at", "event_id", "type", "test_body", "status", "attempts", "next_attempt_at",
				"last_status_code", "last_error", "latency_ms", "delivered_at", "endpoint_id"},
			rows: [][]any{
				{deliverySucceeded, at(11), at(13), eventSucceeded, "payment.succeeded", nil, "delivered", 2, nil, 200, "HTTP 503 Service Unavailable", int64(87), at(13), endpointEnabled},
				{"wd_01JD0PENDING000000000000000", at(36), at(37), eventRefunded, "refund.succeeded", nil, "pending", 1, at(42), 500, "HTTP 500 Internal Server Error", int64(1204), nil, endpointEnabled},
				{"wd_01JD0TEST000000000000000000", at(14), at(14), "evt_test_01JD0PING00000000000", "payment.succeeded", []byte(`{"type":"payment.succeeded","test":true}`), "failed", 1, nil, nil, "dial tcp: connection refused", int64(3), nil, endpointEnabled},
			},
		},
		{
			name:    "webhook_delivery_attempts",
			columns: []string{"id", "at", "status_code", "latency_ms", "error", "delivery_id"},
			rows: [][]any{
				{"wda_01JD0FIRST0000000000000000", at(12), 503, int64(1200), "HTTP 503 Service Unavailable", deliverySucceeded},
				{"wda_01JD0SECOND000000000000000", at(13), 200, int64(87), nil, deliverySucceeded},
				{"wda_01JD0PENDING00000000000000", at(37), 500, int64(1204), "HTTP 500 Internal Server Error", "wd_01JD0PENDING000000000000000"},
			},
		},
		{
			name: "idempotency_keys",
			columns: []string{"id", "principal", "key", "request_hash", "resource_id", "settled_at", "error_code", "error_message", "error_param",
				"expires_at", "created_at"},
			rows: [][]any{
				{"idk_01JD0CREATED000000000000000", adminID, "order-1001-create", "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c", paySucceeded, at(11), nil, nil, nil, at(10 + 24*60), at(10)},
				{"idk_01JD0DECLINED00000000000000", adminID, "order-1004-create", "7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730", nil, at(41), "card_declined", "The card was declined.", "card", at(40 + 24*60), at(40)},
				{"idk_01JD0VIEWER000000000000000", viewerID, "order-1001-create", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", nil, nil, nil, nil, nil, at(42 + 24*60), at(42)},
			},
		},
		{
			name: "webhook_events",
			columns: []string{"id", "provider", "event_id", "type", "status", "payload", "attempts", "next_attempt_at", "last_error",
				"ignored_reason", "payment_id", "received_at", "processed_at"},
			rows: [][]any{
				{inboundProcessed, "stripe", "evt_1QxStripe0001", "charge.succeeded", "processed", []byte(`{"id":"evt_1QxStripe0001","type":"charge.succeeded","data":{"object":{"payment_intent":"pi_3QxStripe0001"}}}`), 2, nil, "payment busy", nil, paySucceeded, at(12), at(13)},
				{"whe_01JD0IGNORED0000000000000", "adyen", "JDD6LKT8MPLF5X82:AUTHORISATION", "AUTHORISATION", "ignored", []byte("{\"live\":\"false\",\n \"notificationItems\":[]}"), 1, nil, nil, "already succeeded", payRefunded, at(22), at(22)},
				{"whe_01JD0FAILING0000000000000", "checkout", "evt_ckout_unknown", "payment_captured", "failed", []byte(`{"id":"evt_ckout_unknown"}`), 3, at(90), "no payment pay_ckout_0000", nil, nil, at(50), nil},
			},
		},
		{
			name:    "webhook_attempts",
			columns: []string{"id", "at", "status", "error", "duration_ms", "event_id"},
			rows: [][]any{
				{"wha_01JD0FIRST0000000000000000", at(12), "failed", "payment busy", int64(31), inboundProcessed},
				{"wha_01JD0SECOND000000000000000", at(13), "processed", nil, int64(12), inboundProcessed},
			},
		},
		{
			name: "alerts",
			columns: []string{"id", "rule", "subject", "severity", "status", "message", "opened_at", "acknowledged_by", "acknowledged_at",
				"resolved_by", "resolved_at", "unresolved"},
			rows: [][]any{
				{alertResolved, "endpoint_failing", endpointEnabled, "warning", "resolved", "Deliveries to https://shop.example/hooks/paygate are failing", at(12), adminID, at(12), "system", at(13), nil},
				{"alr_01JD0PROVIDERDOWN000000000", "provider_down", "stripe", "critical", "open", "stripe answered 5 of the last 20 charges with 5xx", at(55), nil, nil, nil, nil, "provider_down:stripe"},
			},
		},
		{
			name:    "alert_changes",
			columns: []string{"id", "action", "by", "at", "alert_id"},
			rows: [][]any{
				{"alc_01JD0OPENED000000000000000", "opened", "system", at(12), alertResolved},
				{"alc_01JD0ACKED0000000000000000", "acknowledged", adminID, at(12), alertResolved},
				{"alc_01JD0RESOLVED0000000000000", "resolved", "system", at(13), alertResolved},
			},
		},
	}
}

// jsonColumns are the fixtures' JSON columns, which PostgreSQL keeps as jsonb and so spells its
// own way: they compare by meaning. The other text and byte columns compare byte for byte.
var jsonColumns = map[string]bool{
	"api_keys.scopes": true, "payments.routing": true, "payments.metadata": true, "webhook_endpoints.events": true,
}

func insertRows(t *testing.T, db *DB, table fixtureTable) {
	t.Helper()
	placeholders := make([]string, len(table.columns))
	for i := range placeholders {
		placeholders[i] = "$" + strconv.Itoa(i+1)
	}
	query := fmt.Sprintf(`INSERT INTO %s (%s) VALUES (%s)`, table.name, quotedColumns(table.columns), strings.Join(placeholders, ", "))
	for _, row := range table.rows {
		if len(row) != len(table.columns) {
			t.Fatalf("a fixture row of %s has %d values for %d columns", table.name, len(row), len(table.columns))
		}
		if _, err := db.SQL.Exec(query, row...); err != nil {
			t.Fatalf("inserting %s %v: %v", table.name, row[0], err)
		}
	}
}

// requireRows checks that table holds exactly the fixture's rows, each with the values inserted.
func requireRows(t *testing.T, db *DB, table fixtureTable, when string) {
	t.Helper()
	var want []string
	for _, row := range table.rows {
		want = append(want, canonicalRow(table, row))
	}
	sort.Strings(want)

	rows, err := db.SQL.Query(fmt.Sprintf(`SELECT %s FROM %s`, quotedColumns(table.columns), table.name))
	if err != nil {
		t.Fatalf("%s: reading %s: %v", when, table.name, err)
	}
	var got []string
	for rows.Next() {
		values := make([]any, len(table.columns))
		pointers := make([]any, len(values))
		for i := range values {
			pointers[i] = &values[i]
		}
		if err := rows.Scan(pointers...); err != nil {
			rows.Close()
			t.Fatalf("%s: reading %s: %v", when, table.name, err)
		}
		got = append(got, canonicalRow(table, values))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: reading %s: %v", when, table.name, err)
	}
	sort.Strings(got)
	for _, row := range want {
		if !slices.Contains(got, row) {
			t.Errorf("%s: %s lacks the row\n\t%s", when, table.name, row)
		}
	}
	for _, row := range got {
		if !slices.Contains(want, row) {
			t.Errorf("%s: %s holds a row not inserted, or changed\n\t%s", when, table.name, row)
		}
	}
}

// canonicalRow writes a row's values the same way whichever driver read them, column by column.
func canonicalRow(table fixtureTable, values []any) string {
	parts := make([]string, len(values))
	for i, value := range values {
		parts[i] = table.columns[i] + "=" + canonicalValue(value, jsonColumns[table.name+"."+table.columns[i]])
	}
	return strings.Join(parts, " ")
}

func canonicalValue(value any, isJSON bool) string {
	if isJSON {
		var text []byte
		switch v := value.(type) {
		case string:
			text = []byte(v)
		case []byte:
			text = v
		}
		var decoded any
		if text != nil && json.Unmarshal(text, &decoded) == nil {
			encoded, _ := json.Marshal(decoded) // map keys sorted
			return "json:" + string(encoded)
		}
	}
	switch v := value.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(v)
	case []byte: // bytes stay bytes: a body is signed as it was stored
		return "bytes" + strconv.Quote(string(v))
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case bool: // SQLite keeps booleans as 0 and 1
		if v {
			return "1"
		}
		return "0"
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprintf("%T(%v)", v, v)
	}
}

func quotedColumns(columns []string) string {
	quoted := make([]string, len(columns))
	for i, column := range columns {
		quoted[i] = `"` + column + `"`
	}
	return strings.Join(quoted, ", ")
}

// columnsOf returns a table's columns, in order.
func columnsOf(t *testing.T, db *DB, table string) []string {
	t.Helper()
	// From the catalogue, not from a SELECT *: pgx would keep that statement's plan, which a
	// migration adding a column makes stale.
	query := `SELECT name FROM pragma_table_info(?) ORDER BY cid`
	if db.Dialect == dialect.Postgres {
		query = `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`
	}
	rows, err := db.SQL.Query(query, table)
	if err != nil {
		t.Fatalf("reading the columns of %s: %v", table, err)
	}
	defer rows.Close()
	var columns []string
	for rows.Next() {
		var column string
		if err := rows.Scan(&column); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, column)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return columns
}

func requireVersion(t *testing.T, m *migrate.Migrate, want uint) {
	t.Helper()
	if version, dirty, err := m.Version(); err != nil || dirty || version != want {
		t.Fatalf("at version %d (dirty %v, %v), want %d", version, dirty, err, want)
	}
}

// migrationBefore returns the version of the embedded migration of the dialect just before
// version.
func migrationBefore(t *testing.T, dialectName string, version uint) uint {
	t.Helper()
	dir := "sqlite"
	if dialectName == dialect.Postgres {
		dir = "postgres"
	}
	names, err := fs.Glob(migrations.FS, dir+"/*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	var before uint
	for _, name := range names {
		var v uint
		if _, err := fmt.Sscanf(strings.TrimPrefix(name, dir+"/"), "%d_", &v); err == nil && v < version && v > before {
			before = v
		}
	}
	return before
}

// emptyPostgresSchema creates an empty schema of PAYGATE_TEST_DATABASE_URL, dropped when the test
// ends, and returns the URL that works in it: databasetest's databases come migrated, and it
// imports this package.
func emptyPostgresSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv("PAYGATE_TEST_DATABASE_URL")
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	suffix := make([]byte, 8)
	rand.Read(suffix)
	schema := "test_upgrade_" + hex.EncodeToString(suffix)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
