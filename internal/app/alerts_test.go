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
		admin, operator, viewer := one.tokenFor("admin"), one.tokenFor("operator"), one.tokenFor("viewer")
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
			SetStatus(state.WebhookDead).SetError("database busy").SetDurationMs(3).Exec(context.Background()); err != nil {
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
			SetStatus(state.WebhookDead).SetError("database busy").SetDurationMs(3).Exec(context.Background()); err != nil {
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

// TestRefundShareWeighsWhatWasPaid: refunds are weighed against what the hour's payments took,
// those refunded since included: a refund of 30% of a payment Stripe refunded at once raises no
// alert at 50%; refunding the rest, 100% of it, does.
func TestRefundShareWeighsWhatWasPaid(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		doc := env.app.services.configs.Current()
		doc.Alerts.RefundShare = 0.5
		if _, err := env.app.services.configs.Update(context.Background(), doc, "usr_test"); err != nil {
			t.Fatal(err)
		}
		paid := env.succeededPayment(admin, "10.00", "USD", "stripe")
		refundShareAlerts := func(refund string) []string {
			t.Helper()
			if r := env.request(http.MethodPost, "/api/v1/payments/"+paid+"/refunds", admin, map[string]any{"amount": refund}); r.status != http.StatusCreated {
				t.Fatalf("refund of %s = %d %s", refund, r.status, r.raw)
			}
			if _, err := env.app.services.alerts.Evaluate(context.Background()); err != nil {
				t.Fatal(err)
			}
			var messages []string
			for _, a := range db.Ent.Alert.Query().AllX(context.Background()) {
				if a.Rule == alerting.RuleRefundShare {
					messages = append(messages, a.Message)
				}
			}
			return messages
		}
		if alerts := refundShareAlerts("3.00"); len(alerts) != 0 {
			t.Errorf("30%% refunded of a payment refunded in part: %v", alerts)
		}
		if alerts := refundShareAlerts("7.00"); len(alerts) != 1 || !strings.Contains(alerts[0], "10.00 against 10.00 paid") {
			t.Errorf("all of it refunded: %v", alerts)
		}
	})
}
