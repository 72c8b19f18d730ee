package app

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/alerting"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
)

// TestAlerts: the rules find an open circuit, a dead webhook event and refunds above the
// configured share of an hour's volume; two servers evaluating at once raise each alert once;
// people list, acknowledge and resolve them, once each, and the history keeps who and when.
func TestAlerts(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		// Stripe is down: its circuit opens after two failed calls.
		servers := newTestServers(t, pools, "PAYGATE_SANDBOX_OUTAGE=stripe")
		one, two := servers[0], servers[1]
		admin, operator, viewer := one.tokenFor("admin"), one.staffToken("operator"), one.staffToken("viewer")
		doc := one.app.services.configs.Current()
		doc.CircuitBreaker.MinRequests = 2
		doc.Alerts.RefundShare = 0.7
		if _, err := one.app.services.configs.Update(context.Background(), doc, "usr_test"); err != nil {
			t.Fatal(err)
		}
		for _, s := range servers {
			if err := s.app.services.configs.Load(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range servers {
			for range 2 {
				if r := s.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242")); r.status != http.StatusCreated {
					t.Fatalf("payment failing over = %d %s", r.status, r.raw)
				}
			}
		}
		paid := str(get(one.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "EUR", "4242424242424242")).body, "data", "id"))
		if r := one.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", admin, map[string]any{"amount": "6.00"}); r.status != http.StatusCreated {
			t.Fatalf("refund = %d %s", r.status, r.raw)
		}
		dead := one.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: time.Now().UTC().Add(-time.Hour)})
		if err := one.db.Ent.WebhookAttempt.Create().SetEventID(dead.ID).SetAt(time.Now().UTC().Add(-time.Minute)).
			SetStatus(state.WebhookDead).SetError("database busy").SetDurationMs(3).Exec(databasetest.AsMerchant()); err != nil {
			t.Fatal(err)
		}

		// Both servers evaluate at once, twice: each condition is raised once. Refunds of 60% are
		// below the 70% configured.
		evaluate := func() {
			var wg sync.WaitGroup
			for _, s := range servers {
				wg.Go(func() {
					if _, err := s.app.services.alerts.Evaluate(context.Background()); err != nil {
						t.Errorf("evaluate: %v", err)
					}
				})
			}
			wg.Wait()
		}
		evaluate()
		evaluate()
		open := func() map[string]string {
			r := two.request(http.MethodGet, "/api/v1/monitoring/alerts?status=open", viewer, nil)
			if r.status != http.StatusOK {
				t.Fatalf("list = %d %s", r.status, r.raw)
			}
			found := map[string]string{}
			for _, a := range get(r.body, "data").([]any) {
				key := str(get(a, "rule")) + ":" + str(get(a, "subject"))
				if _, twice := found[key]; twice {
					t.Errorf("alert %s raised twice", key)
				}
				found[key] = str(get(a, "id"))
			}
			return found
		}
		alerts := open()
		if len(alerts) != 2 || alerts[alerting.RuleCircuitOpen+":stripe"] == "" || alerts[alerting.RuleWebhookDead+":adyen"] == "" {
			t.Fatalf("open alerts = %v", alerts)
		}
		// The threshold lowered, the refunds are alerted on.
		doc = one.app.services.configs.Current()
		doc.Alerts.RefundShare = 0.5
		if _, err := one.app.services.configs.Update(context.Background(), doc, "usr_test"); err != nil {
			t.Fatal(err)
		}
		for _, s := range servers {
			s.app.services.configs.Load(context.Background())
		}
		evaluate()
		alerts = open()
		if alerts[alerting.RuleRefundShare+":EUR"] == "" || len(alerts) != 3 {
			t.Fatalf("open alerts after lowering the refund share = %v", alerts)
		}

		// Acknowledged by an operator, once, however many ask at once; a viewer may not.
		deadAlert := alerts[alerting.RuleWebhookDead+":adyen"]
		if r := one.request(http.MethodPost, "/api/v1/monitoring/alerts/"+deadAlert+"/acknowledge", viewer, nil); r.status != http.StatusForbidden {
			t.Errorf("a viewer acknowledging = %d %s", r.status, r.raw)
		}
		statuses := make(chan int, 2)
		var wg sync.WaitGroup
		for _, s := range servers {
			wg.Go(func() {
				statuses <- s.request(http.MethodPost, "/api/v1/monitoring/alerts/"+deadAlert+"/acknowledge", operator, nil).status
			})
		}
		wg.Wait()
		close(statuses)
		won := 0
		for status := range statuses {
			switch status {
			case http.StatusOK:
				won++
			case http.StatusConflict:
			default:
				t.Errorf("acknowledging at once = %d", status)
			}
		}
		if won != 1 {
			t.Errorf("%d acknowledgements succeeded, want 1", won)
		}
		r := one.request(http.MethodPost, "/api/v1/monitoring/alerts/"+deadAlert+"/resolve", operator, nil)
		if r.status != http.StatusOK || get(r.body, "data", "status") != "resolved" || get(r.body, "data", "resolved_by") != one.subjectOf(operator) ||
			get(r.body, "data", "acknowledged_by") != one.subjectOf(operator) {
			t.Errorf("resolve = %d %s", r.status, r.raw)
		}
		if r := one.request(http.MethodPost, "/api/v1/monitoring/alerts/"+deadAlert+"/resolve", operator, nil); r.status != http.StatusConflict {
			t.Errorf("resolving again = %d %s", r.status, r.raw)
		}
		if r := one.request(http.MethodPost, "/api/v1/monitoring/alerts/alr_none/acknowledge", operator, nil); r.status != http.StatusNotFound {
			t.Errorf("acknowledging no alert = %d %s", r.status, r.raw)
		}

		// The event alerted on is not alerted on again; a new dead event is.
		evaluate()
		if _, again := open()[alerting.RuleWebhookDead+":adyen"]; again {
			t.Error("a resolved dead event was alerted on again")
		}
		another := one.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: time.Now().UTC()})
		if err := one.db.Ent.WebhookAttempt.Create().SetEventID(another.ID).SetAt(time.Now().UTC()).
			SetStatus(state.WebhookDead).SetError("database busy").SetDurationMs(3).Exec(databasetest.AsMerchant()); err != nil {
			t.Fatal(err)
		}
		evaluate()
		if open()[alerting.RuleWebhookDead+":adyen"] == "" {
			t.Error("a new dead event raised no alert")
		}

		// GraphQL: the history, and node(id:).
		data := two.mustGraphQL(viewer, `query($id: ID!) { node(id: $id) { ... on Alert { status history { action by at } } } }`, map[string]any{"id": deadAlert})
		history, _ := get(data, "node", "history").([]any)
		if get(data, "node", "status") != "RESOLVED" || len(history) != 3 || get(history[0], "by") != "system" ||
			get(history[1], "action") != "ACKNOWLEDGED" || get(history[2], "by") != one.subjectOf(operator) {
			t.Errorf("history = %v", data)
		}
		listed := two.mustGraphQL(viewer, `{ alerts(first: 10, where: {status: OPEN}) { totalCount edges { node { rule subject severity } } } }`, nil)
		if str(get(listed, "alerts", "totalCount")) != "3" {
			t.Errorf("open alerts over GraphQL = %v", listed)
		}
		circuit := alerts[alerting.RuleCircuitOpen+":stripe"]
		resolved := two.mustGraphQL(admin, `mutation($id: ID!) { acknowledgeAlert(id: $id) { status } resolveAlert(id: $id) { status resolvedAt } }`, map[string]any{"id": circuit})
		if get(resolved, "resolveAlert", "status") != "RESOLVED" {
			t.Errorf("acknowledged and resolved over GraphQL = %v", resolved)
		}
	})
}

// TestRefundShareWeighsWhatWasRefunded: an hour's refunds are weighed against the captured volume
// they came from: what the hour's payments captured, refunded since or not, and what the older
// payments refunded in the hour captured, each once. At the default 50%: refunding 10.00 of a
// 49.99 payment made hours before is no alert; refunding most of the hour's takings is. Refunds
// made before the hour count for nothing, and a payment refunded in full within the hour alerts.
func TestRefundShareWeighsWhatWasRefunded(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		if share := env.app.services.configs.Current().Alerts.RefundShare; share != 0.5 {
			t.Fatalf("the default refund share is %v, want 0.5", share)
		}
		refund := func(id, amount string) {
			t.Helper()
			// Adyen and Checkout.com settle a refund later: pending, it counts already.
			if r := env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", admin, map[string]any{"amount": amount}); r.status != http.StatusCreated {
				t.Fatalf("refund of %s = %d %s", amount, r.status, r.raw)
			}
		}
		// refundShareAlerts evaluates the rules and returns the refund share alerts, by currency.
		refundShareAlerts := func() map[string]string {
			t.Helper()
			if _, err := env.app.services.alerts.Evaluate(context.Background()); err != nil {
				t.Fatal(err)
			}
			messages := map[string]string{}
			for _, a := range db.Ent.Alert.Query().AllX(databasetest.AsMerchant()) {
				if a.Rule == alerting.RuleRefundShare {
					messages[a.Subject] = a.Message
				}
			}
			return messages
		}

		oldUSD := env.succeededPayment(admin, "49.99", "USD", "stripe")
		oldEUR := env.succeededPayment(admin, "40.00", "EUR", "adyen")
		refund(oldEUR, "5.00")
		// Rows take their creation time from the machine's clock, not the server's: made two hours
		// ago, those payments and that refund are older than the hour.
		twoHoursAgo := time.Now().UTC().Add(-2 * time.Hour)
		for _, table := range []string{"payments", "refunds"} {
			if _, err := db.SQL.Exec(`UPDATE `+table+` SET created_at = $1`, twoHoursAgo); err != nil {
				t.Fatal(err)
			}
		}

		refund(oldUSD, "10.00")
		refund(oldEUR, "15.00")
		if alerts := refundShareAlerts(); len(alerts) != 0 {
			t.Errorf("20%% of an old USD payment and 37.5%% of an old EUR one refunded: %v", alerts)
		}
		// Most of the hour's USD takings: 90.00 refunded of the 149.99 captured.
		recent := env.succeededPayment(admin, "100.00", "USD", "stripe")
		refund(recent, "80.00")
		// A second refund of the old EUR payment counts its 40.00 once: 25.00 is above half of it.
		refund(oldEUR, "10.00")
		// GBP: a payment of the hour, a third of it refunded, then the rest.
		hourGBP := env.succeededPayment(admin, "10.00", "GBP", "checkout")
		refund(hourGBP, "3.00")
		alerts := refundShareAlerts()
		if len(alerts) != 2 ||
			alerts["USD"] != "Refunds of USD in the last hour came to 90.00 against 149.99 captured by the payments made or refunded in that hour, above the 50% alerted on." ||
			alerts["EUR"] != "Refunds of EUR in the last hour came to 25.00 against 40.00 captured by the payments made or refunded in that hour, above the 50% alerted on." {
			t.Errorf("alerts = %v", alerts)
		}
		refund(hourGBP, "7.00")
		if alerts := refundShareAlerts(); len(alerts) != 3 || !strings.Contains(alerts["GBP"], "came to 10.00 against 10.00 captured") {
			t.Errorf("a payment of the hour refunded in full: %v", alerts)
		}
	})
}
