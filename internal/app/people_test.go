package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/live"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// newTestAlert stores an open alert, as a rule would raise it.
func newTestAlert(t *testing.T, env *testEnv) string {
	t.Helper()
	a, err := env.db.Ent.Alert.Create().SetRule("test").SetSubject(prefixid.New("subject")).SetSeverity(state.AlertInfo).
		SetMessage("a test alert").SetOpenedAt(time.Now().UTC()).Save(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// TestPeopleAreNamedByEmail: who acknowledged or resolved an alert, and who moved a payment, are
// named by email over GraphQL, a user by theirs and an API key by its user's; Paygate and the
// providers by none. A merchant's people know one another and not the platform's staff, who know
// everyone.
func TestPeopleAreNamedByEmail(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		emailOf := func(token string) string {
			t.Helper()
			return str(get(env.mustGraphQL(token, `{ viewer { email } }`, nil), "viewer", "email"))
		}
		staff := env.staffToken("admin")
		staffKey := env.apiKey(staff, auth.ScopeWebhooksManage, auth.ScopeMonitoringRead, auth.ScopePaymentsWrite, auth.ScopePaymentsRead)

		acknowledged, viaKey, resolved := newTestAlert(t, env), newTestAlert(t, env), newTestAlert(t, env)
		env.mustGraphQL(staff, `mutation($id: ID!) { acknowledgeAlert(id: $id) { id } }`, map[string]any{"id": acknowledged})
		env.mustGraphQL(staffKey, `mutation($id: ID!) { acknowledgeAlert(id: $id) { id } }`, map[string]any{"id": viaKey})
		env.mustGraphQL(admin, `mutation($id: ID!) { resolveAlert(id: $id) { id } }`, map[string]any{"id": resolved})
		alerts, _ := get(env.mustGraphQL(admin, `{ alerts(first: 10) { edges { node { id acknowledgedBy acknowledgedByEmail resolvedBy resolvedByEmail } } } }`, nil),
			"alerts", "edges").([]any)
		named := map[string]string{}
		for _, edge := range alerts {
			node := get(edge, "node")
			named[str(get(node, "id"))] = str(get(node, "acknowledgedByEmail")) + "/" + str(get(node, "resolvedByEmail"))
			if get(node, "acknowledgedBy") == nil && get(node, "acknowledgedByEmail") != nil {
				t.Errorf("an alert nobody acknowledged names someone: %v", node)
			}
		}
		staffEmail, adminEmail := emailOf(staff), emailOf(admin)
		if want := staffEmail + "/"; named[acknowledged] != want || named[viaKey] != want {
			t.Errorf("acknowledged by staff = %q, through their key = %q, want %q", named[acknowledged], named[viaKey], want)
		}
		if want := "/" + adminEmail; named[resolved] != want {
			t.Errorf("resolved = %q, want %q", named[resolved], want)
		}
		// An API key is a program: it is told no one's email.
		monitor := env.apiKey(admin, auth.ScopeMonitoringRead)
		for _, edge := range get(env.mustGraphQL(monitor, `{ alerts(first: 10) { edges { node { acknowledgedBy acknowledgedByEmail } } } }`, nil), "alerts", "edges").([]any) {
			if get(edge, "node", "acknowledgedByEmail") != nil {
				t.Errorf("an API key is told %v", edge)
			}
		}

		// A merchant's admin cancels a payment; platform staff, acting for the merchant, cancel
		// another.
		acme := str(get(env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": "Acme"}).data(), "id"))
		acmeAdmin := env.merchantToken(acme, "admin")
		authorised := func() string {
			t.Helper()
			r := env.request(http.MethodPost, "/api/v1/payments", acmeAdmin, manualBody("10.00", "USD"))
			if r.status != http.StatusCreated {
				t.Fatalf("payment = %d %s", r.status, r.raw)
			}
			return str(get(r.data(), "id"))
		}
		byAdmin, canceled := authorised(), authorised()
		if r := env.request(http.MethodPost, "/api/v1/payments/"+byAdmin+"/cancel", acmeAdmin, map[string]any{}); r.status != http.StatusOK {
			t.Fatalf("cancel = %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments/"+canceled+"/cancel", staffKey, map[string]any{}, "Paygate-Merchant", acme); r.status != http.StatusOK {
			t.Fatalf("cancel = %d %s", r.status, r.raw)
		}
		// movedBy is each status move of the payment as "to by actor-email", as reader sees it.
		movedBy := func(reader, id string, headers ...string) map[string]string {
			t.Helper()
			query := `query($id: ID!) { payment(id: $id) { statusHistory { to actor actorEmail } } }`
			body := map[string]any{"query": query, "variables": map[string]any{"id": id}}
			r := env.request(http.MethodPost, "/query", reader, body, headers...)
			moves := map[string]string{}
			history, _ := get(r.body, "data", "payment", "statusHistory").([]any)
			for _, move := range history {
				moves[str(get(move, "to"))] = str(get(move, "actorEmail"))
			}
			if len(moves) == 0 {
				t.Fatalf("payment %s's history = %d %s", id, r.status, r.raw)
			}
			return moves
		}
		acmeEmail := emailOf(acmeAdmin)
		if got := movedBy(acmeAdmin, byAdmin)["CANCELED"]; got != acmeEmail {
			t.Errorf("a cancel by the merchant's admin is named %q to them, want %q", got, acmeEmail)
		}
		if got := movedBy(staff, byAdmin, "Paygate-Merchant", acme)["CANCELED"]; got != acmeEmail {
			t.Errorf("a cancel by the merchant's admin is named %q to platform staff, want %q", got, acmeEmail)
		}
		if got := movedBy(acmeAdmin, canceled)["CANCELED"]; got != "" {
			t.Errorf("a cancel by platform staff is named %q to the merchant, want no one", got)
		}
		if got := movedBy(staff, canceled, "Paygate-Merchant", acme)["CANCELED"]; got != staffEmail {
			t.Errorf("a cancel by platform staff's key is named %q to them, want %q", got, staffEmail)
		}
	})
}

// TestPeopleAreReadTogether: naming the people of a page of alerts, each acknowledged by someone
// else, reads them all in one query, not one per alert.
func TestPeopleAreReadTogether(t *testing.T) {
	t.Parallel()
	db := databasetest.CountingSQLite(t)
	env := newTestEnv(t, db)
	admin := env.tokenFor("admin")
	for range 8 {
		env.mustGraphQL(env.staffToken("operator"), `mutation($id: ID!) { acknowledgeAlert(id: $id) { id } }`,
			map[string]any{"id": newTestAlert(t, env)})
	}
	readTrips := func(query string) (int64, map[string]any) { return fewestRoundTrips(t, env, db, admin, query) }
	bare, _ := readTrips(`{ alerts(first: 20) { edges { node { id acknowledgedBy } } } }`)
	named, out := readTrips(`{ alerts(first: 20) { edges { node { id acknowledgedBy acknowledgedByEmail } } } }`)
	edges, _ := get(out, "alerts", "edges").([]any)
	emails := map[string]bool{}
	for _, edge := range edges {
		emails[str(get(edge, "node", "acknowledgedByEmail"))] = true
	}
	if len(edges) != 8 || len(emails) != 8 || emails[""] {
		t.Fatalf("8 alerts acknowledged by 8 people are named %v", emails)
	}
	if extra := named - bare; extra > 1 {
		t.Errorf("naming 8 people took %d round trips more than the alerts alone, want 1", extra)
	}
}

// TestPeopleAreNamedInSubscriptions: an alert heard over a subscription names who acknowledged
// it, as a query does.
func TestPeopleAreNamedInSubscriptions(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	env.app.Start(t.Context()) // the feed that tells subscribers of alerts
	staff := env.staffToken("admin")
	watcher := subscribe(t, env, "ws", staff, `subscription { alertRaised { id status acknowledgedByEmail } }`)
	waitFor(t, "the subscription to be in place", func() bool { return env.app.services.hub.Subscribers(live.Alert) == 1 })
	id := newTestAlert(t, env)
	env.mustGraphQL(staff, `mutation($id: ID!) { acknowledgeAlert(id: $id) { id } }`, map[string]any{"id": id})
	email := str(get(env.mustGraphQL(staff, `{ viewer { email } }`, nil), "viewer", "email"))
	for {
		heard := get(watcher.next(), "next", "alertRaised")
		if str(get(heard, "id")) != id || str(get(heard, "status")) != "ACKNOWLEDGED" {
			continue // the alert as it opened, first
		}
		if got := str(get(heard, "acknowledgedByEmail")); got != email {
			t.Errorf("the acknowledged alert heard names %q, want %q", got, email)
		}
		return
	}
}
