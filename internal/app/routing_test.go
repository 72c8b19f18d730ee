package app

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
)

// attempts is a payment's routing attempts as "provider:outcome".
func attempts(payment map[string]any) []string {
	var out []string
	list, _ := get(payment, "routing", "attempts").([]any)
	for _, a := range list {
		out = append(out, fmt.Sprintf("%s:%s", str(get(a, "provider")), str(get(a, "outcome"))))
	}
	return out
}

// TestPaymentsAreRoutedByTheDocument: euros go to Adyen, pounds to Checkout.com, the rest to
// Stripe first; each payment shows the rule, its attempts and the provider's own decline code, on
// both surfaces.
func TestPaymentsAreRoutedByTheDocument(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		for _, tc := range []struct {
			currency, card, provider, rule, status, declineCode, rawDecline, idPrefix string
		}{
			{"USD", "4242424242424242", "stripe", "", "succeeded", "", "", "pi_"},
			{"EUR", "4242424242424242", "adyen", "eur", "succeeded", "", "", ""},
			{"GBP", "4242424242424242", "checkout", "gbp", "succeeded", "", "", "pay_"},
			{"USD", "4000000000009995", "stripe", "", "failed", "insufficient_funds", "insufficient_funds", "pi_"},
			{"EUR", "4000000000009995", "adyen", "eur", "failed", "insufficient_funds", "12", ""},
			{"GBP", "4000000000000069", "checkout", "gbp", "failed", "expired_card", "20054", "pay_"},
		} {
			r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", tc.currency, tc.card))
			p := r.data()
			wantRule := any(nil)
			if tc.rule != "" {
				wantRule = tc.rule
			}
			if p["provider"] != tc.provider || p["status"] != tc.status || get(p, "routing", "rule") != wantRule ||
				fmt.Sprint(attempts(p)) != fmt.Sprintf("[%s:%s]", tc.provider, map[string]string{"succeeded": "approved", "failed": "declined"}[tc.status]) {
				t.Errorf("%s %s: %s", tc.currency, tc.card, r.raw)
				continue
			}
			if tc.declineCode != "" && (p["failure_code"] != tc.declineCode || p["provider_decline_code"] != tc.rawDecline) {
				t.Errorf("%s %s: decline %v / %v, want %s / %s", tc.currency, tc.card, p["failure_code"], p["provider_decline_code"], tc.declineCode, tc.rawDecline)
			}
			if id := str(p["provider_payment_id"]); id == "" || len(id) < len(tc.idPrefix) || id[:len(tc.idPrefix)] != tc.idPrefix {
				t.Errorf("%s: provider_payment_id %q, want prefix %q", tc.provider, id, tc.idPrefix)
			}
			if got := env.charges(str(p["id"])); got[tc.provider] != 1 || len(got) != 1 {
				t.Errorf("%s: charges %v", p["id"], got)
			}
			g := env.mustGraphQL(token, `query($id: ID!) { payment(id: $id) { provider providerDeclineCode routing { rule attempts { provider outcome latencyMs } } } }`,
				map[string]any{"id": p["id"]})
			if get(g, "payment", "provider") != tc.provider || get(g, "payment", "routing", "rule") != wantRule ||
				get(g, "payment", "routing", "attempts", 0, "provider") != tc.provider || get(g, "payment", "routing", "attempts", 0, "latencyMs") == nil {
				t.Errorf("GraphQL %s: %v", p["id"], g)
			}
			if tc.rawDecline != "" && get(g, "payment", "providerDeclineCode") != tc.rawDecline {
				t.Errorf("GraphQL %s: providerDeclineCode %v", p["id"], get(g, "payment", "providerDeclineCode"))
			}
		}
	})
}

// TestFailoverChargesOnce: a provider down (503) is passed over for the next of the plan, a
// decline is final, and a provider whose answer is in doubt (500) is never passed over, so no
// payment is charged twice.
func TestFailoverChargesOnce(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("operator")
		stripeSandbox := env.app.services.providers.sandboxes["stripe"].Switches()

		stripeSandbox.Outage.Store(true)
		p := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4242424242424242")).data()
		if p["status"] != "succeeded" || p["provider"] != "adyen" || fmt.Sprint(attempts(p)) != "[stripe:unavailable adyen:approved]" {
			t.Errorf("with Stripe down: %v %v %v", p["status"], p["provider"], attempts(p))
		}
		if got := env.charges(str(p["id"])); got["adyen"] != 1 || len(got) != 1 {
			t.Errorf("charges %v", got)
		}
		declined := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4000000000000002")).data()
		if declined["status"] != "failed" || fmt.Sprint(attempts(declined)) != "[stripe:unavailable adyen:declined]" {
			t.Errorf("a decline after failover: %v %v", declined["status"], attempts(declined))
		}
		stripeSandbox.Outage.Store(false)

		// The provider-error card fails at every provider: each is asked once, nothing is charged.
		failed := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4000000000000119")).data()
		if failed["status"] != "failed" || failed["failure_code"] != "provider_unavailable" ||
			fmt.Sprint(attempts(failed)) != "[stripe:unavailable adyen:unavailable checkout:unavailable]" {
			t.Errorf("the provider-error card: %v %v %v", failed["status"], failed["failure_code"], attempts(failed))
		}

		stripeSandbox.Fault.Store(true)
		r := env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4242424242424242"))
		stripeSandbox.Fault.Store(false)
		if r.status != http.StatusAccepted || r.data()["status"] != "processing" {
			t.Errorf("a charge in doubt answered %d: %s", r.status, r.raw)
		}
		payments := db.Ent.Payment.Query().AllX(databasetest.AsMerchant())
		inDoubt := payments[len(payments)-1]
		for _, candidate := range payments {
			if candidate.CreatedAt.After(inDoubt.CreatedAt) {
				inDoubt = candidate
			}
		}
		if inDoubt.Status != "processing" || inDoubt.Provider != "stripe" || inDoubt.Routing == nil ||
			fmt.Sprint(inDoubt.Routing.Attempts) != "[{stripe unknown "+fmt.Sprint(inDoubt.Routing.Attempts[0].LatencyMS)+"}]" {
			t.Errorf("payment in doubt: %s via %s, routing %+v", inDoubt.Status, inDoubt.Provider, inDoubt.Routing)
		}
		if got := env.charges(inDoubt.ID); len(got) != 0 {
			t.Errorf("a payment in doubt was charged elsewhere: %v", got)
		}
	})
}

// TestFailoverUnderConcurrency: payments sent at once through two servers while Stripe is down
// each end charged exactly once, at the next provider, and the circuit opens so later payments
// go straight there.
func TestFailoverUnderConcurrency(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools, "PAYGATE_SANDBOX_LATENCY=5ms")
		token := servers[0].tokenFor("operator")
		for _, s := range servers {
			s.app.services.providers.sandboxes["stripe"].Switches().Outage.Store(true)
		}
		const n = 24
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ids[i] = str(servers[i%2].request(http.MethodPost, "/api/v1/payments", token, paymentBody("7.00", "USD", "4242424242424242")).data()["id"])
			})
		}
		wg.Wait()
		for _, id := range ids {
			p := servers[0].payment(id)
			if p == nil || p.Status != "succeeded" || p.Provider != "adyen" {
				var logged []string // what the servers said of it: a failover that could not be recorded
				for _, s := range servers {
					for line := range strings.Lines(s.logs.String()) {
						if strings.Contains(line, id) {
							logged = append(logged, line)
						}
					}
				}
				t.Errorf("payment %q: %+v\nlogged: %s", id, p, strings.Join(logged, ""))
				continue
			}
			if got := servers[0].charges(id); got["adyen"] != 1 || len(got) != 1 {
				t.Errorf("%s charged %v", id, got)
			}
		}
		// Each server has offered Stripe at least 10 of its 12 payments, all failed: its circuit
		// is open (the breaker's own tests show it half-opening and closing on a clock).
		after := servers[1].request(http.MethodPost, "/api/v1/payments", token, paymentBody("7.00", "USD", "4242424242424242")).data()
		if fmt.Sprint(attempts(after)) != "[adyen:approved]" {
			t.Errorf("with Stripe's circuit open: %v", attempts(after))
		}
	})
}

// TestProviderStatusFromTraffic: the status shows each provider's traffic through this server,
// on both surfaces, and a provider down with its circuit open.
func TestProviderStatusFromTraffic(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	token := env.staffToken("operator")
	env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "EUR", "4242424242424242"))
	env.app.services.providers.sandboxes["checkout"].Switches().Outage.Store(true)
	for range 10 {
		env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "GBP", "4242424242424242"))
	}
	// A decline at Stripe: answered, so no less available, but one approval fewer.
	env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("5.00", "USD", "4000000000000002"))
	r := env.request(http.MethodGet, "/api/v1/monitoring/providers", token, nil)
	byProvider := map[string]map[string]any{}
	for _, s := range r.body["data"].([]any) {
		byProvider[str(get(s, "provider"))] = s.(map[string]any)
	}
	adyen, checkout, stripe := byProvider["adyen"], byProvider["checkout"], byProvider["stripe"]
	if str(adyen["requests"]) != "1" || str(adyen["success_rate"]) != "1" || str(adyen["approval_rate"]) != "1" || adyen["p50_ms"] == nil ||
		adyen["circuit"] != "closed" || adyen["enabled"] != true {
		t.Errorf("adyen: %v", adyen)
	}
	// Its outages decided nothing: no approval rate.
	if str(checkout["requests"]) != "10" || str(checkout["success_rate"]) != "0" || checkout["approval_rate"] != nil || checkout["circuit"] != "open" ||
		checkout["last_error"] == nil || checkout["last_error_at"] == nil {
		t.Errorf("checkout: %v", checkout)
	}
	// The ten pounds payments failed over to Stripe, which declined the dollars.
	if str(stripe["requests"]) != "11" || str(stripe["success_rate"]) != "1" || str(stripe["approval_rate"]) != strconv.FormatFloat(10.0/11, 'g', -1, 64) ||
		stripe["last_error"] != nil {
		t.Errorf("stripe: %v", stripe)
	}
	g := env.mustGraphQL(token, `{ providerStatus { provider circuit requests successRate approvalRate p50Ms p99Ms lastError lastErrorAt enabled } }`, nil)
	if get(g, "providerStatus", 2, "provider") != "checkout" || get(g, "providerStatus", 2, "circuit") != "open" || get(g, "providerStatus", 2, "lastErrorAt") == nil ||
		str(get(g, "providerStatus", 0, "approvalRate")) != strconv.FormatFloat(10.0/11, 'g', -1, 64) {
		t.Errorf("GraphQL: %v", g)
	}
}

// TestConfigChangeRoutesPaymentsOnEveryServer: a routing change made through one server decides
// the next payments on another within 5 seconds: a new rule, a provider switched off, and a
// provider's time limit.
func TestConfigChangeRoutesPaymentsOnEveryServer(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		a, b := servers[0], servers[1]
		b.watchConfig(50 * time.Millisecond)
		admin, _ := a.adminOf()
		token := a.tokenFor("operator")

		doc := a.readConfig(admin)
		routes := doc["routing"].(map[string]any)
		routes["rules"] = append([]any{map[string]any{"name": "dollars", "currency": []any{"USD"},
			"providers": []any{map[string]any{"provider": "checkout", "weight": 1}}}}, routes["rules"].([]any)...)
		providers := doc["providers"].(map[string]any)
		providers["adyen"] = map[string]any{"enabled": false, "timeout_ms": 10000}
		change := func(version int) {
			if r := a.request(http.MethodPut, configPath, admin, withoutAuthor(doc)); r.status != http.StatusOK {
				t.Fatalf("PUT = %d %s", r.status, r.raw)
			}
			deadline := time.Now().Add(5 * time.Second)
			for b.app.services.configs.Current().Version != version {
				if time.Now().After(deadline) {
					t.Fatal("the change was not in force on the second server within 5 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			doc["version"] = version
		}
		change(2)
		dollars := b.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4242424242424242")).data()
		if dollars["provider"] != "checkout" || get(dollars, "routing", "rule") != "dollars" {
			t.Errorf("dollars after the change: %v by rule %v", dollars["provider"], get(dollars, "routing", "rule"))
		}
		// The euro rule's only provider is switched off: the fallback order takes it, without Adyen.
		euros := b.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "EUR", "4242424242424242")).data()
		if euros["provider"] != "stripe" || get(euros, "routing", "rule") != "eur" || fmt.Sprint(attempts(euros)) != "[stripe:approved]" {
			t.Errorf("euros with Adyen off: %v by rule %v, %v", euros["provider"], get(euros, "routing", "rule"), attempts(euros))
		}
		// Given 100 ms, a call to Stripe that takes longer is cut off, its outcome unknown.
		providers["stripe"] = map[string]any{"enabled": true, "timeout_ms": 100}
		change(3)
		b.app.services.providers.sandboxes["stripe"].Switches().Latency.Store(int64(time.Second))
		slow := b.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "EUR", "4242424242424242"))
		if slow.status != http.StatusAccepted || slow.data()["status"] != "processing" {
			t.Errorf("a call past the provider's time limit answered %d %s", slow.status, slow.raw)
		}
	})
}

// TestSandboxOutageFromTheEnvironment: a sandbox named in PAYGATE_SANDBOX_OUTAGE is down, so
// failover can be shown on a running server.
func TestSandboxOutageFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t), "PAYGATE_SANDBOX_OUTAGE=stripe")
	p := env.request(http.MethodPost, "/api/v1/payments", env.tokenFor("operator"), paymentBody("20.00", "USD", "4242424242424242")).data()
	if fmt.Sprint(attempts(p)) != "[stripe:unavailable adyen:approved]" {
		t.Errorf("with Stripe's sandbox down: %v", attempts(p))
	}
}

// TestCircuitOpensAndCloses: a provider that is down is passed over once its circuit opens, and
// used again after open_s, when one payment probes it and finds it back.
func TestCircuitOpensAndCloses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	admin, _ := env.adminOf()
	token := env.tokenFor("operator")
	doc := env.readConfig(admin)
	doc["circuit_breaker"] = map[string]any{"window_s": 60, "min_requests": 2, "error_rate": 0.5, "open_s": 1}
	if r := env.request(http.MethodPut, configPath, admin, withoutAuthor(doc)); r.status != http.StatusOK {
		t.Fatalf("PUT = %d %s", r.status, r.raw)
	}
	stripeSandbox := env.app.services.providers.sandboxes["stripe"].Switches()
	pay := func() []string {
		return attempts(env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("20.00", "USD", "4242424242424242")).data())
	}
	circuit := func() string {
		for _, s := range env.app.services.metrics.ProviderStatus() {
			if s.Provider == "stripe" {
				return s.Circuit
			}
		}
		return ""
	}
	stripeSandbox.Outage.Store(true)
	pay()
	pay()
	if got := fmt.Sprint(pay()); got != "[adyen:approved]" || circuit() != "open" {
		t.Fatalf("after two outages: %s, circuit %s", got, circuit())
	}
	stripeSandbox.Outage.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for circuit() != "half_open" {
		if time.Now().After(deadline) {
			t.Fatalf("the circuit stayed %s past open_s", circuit())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := fmt.Sprint(pay()); got != "[stripe:approved]" || circuit() != "closed" {
		t.Errorf("the probe: %s, circuit %s", got, circuit())
	}
}

// TestAmountsCrossToProvidersAsTheyCountThem: Adyen counts Chilean pesos in hundredths and Cape
// Verdean escudos whole, unlike ISO 4217. A peso payment and its refund go to Adyen's sandbox and
// come back by webhook as the same amounts; an escudo payment with cents, which Adyen cannot be
// sent, goes to the next provider without Adyen being asked, and a refund of cents is refused.
func TestAmountsCrossToProvidersAsTheyCountThem(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		env.app.Start(t.Context())
		admin := env.tokenFor("admin")
		doc := env.readConfig(admin)
		routes := doc["routing"].(map[string]any)
		routes["rules"] = append([]any{map[string]any{"name": "pesos and escudos", "currency": []any{"CLP", "CVE"},
			"providers": []any{map[string]any{"provider": "adyen", "weight": 1}}}}, routes["rules"].([]any)...)
		if r := env.request(http.MethodPut, configPath, admin, withoutAuthor(doc)); r.status != http.StatusOK {
			t.Fatalf("PUT = %d %s", r.status, r.raw)
		}

		pesos := env.succeededPayment(admin, "15000", "CLP", "adyen")
		refund := env.request(http.MethodPost, "/api/v1/payments/"+pesos+"/refunds", admin, map[string]any{"amount": "5000"})
		if refund.status != http.StatusCreated {
			t.Fatalf("refund = %d %s", refund.status, refund.raw)
		}
		refundID := str(get(refund.data(), "id"))
		waitFor(t, "the peso refund's settlement", func() bool {
			return db.Ent.Refund.GetX(databasetest.AsMerchant(), refundID).Status != state.RefundPending
		})
		if r, p := db.Ent.Refund.GetX(databasetest.AsMerchant(), refundID), env.payment(pesos); r.Status != state.RefundSucceeded ||
			p.AmountRefunded != 5000 || p.Status != state.PaymentPartiallyRefunded {
			t.Errorf("refund %s, payment %s with %d refunded; want succeeded, partially refunded 5000 CLP", r.Status, p.Status, p.AmountRefunded)
		}

		escudos := env.succeededPayment(admin, "25.00", "CVE", "adyen")
		adyenCalls := func() int64 {
			for _, status := range env.app.services.metrics.ProviderStatus() {
				if status.Provider == "adyen" {
					return status.Requests
				}
			}
			return 0
		}
		before := adyenCalls()
		for range 3 {
			withCents := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.50", "CVE", "4242424242424242"))
			if withCents.status != http.StatusCreated || str(get(withCents.data(), "provider")) == "adyen" {
				t.Fatalf("10.50 CVE = %d %s, want it taken by another provider than Adyen", withCents.status, withCents.raw)
			}
			if got := attempts(withCents.data()); len(got) != 1 || strings.HasPrefix(got[0], "adyen") {
				t.Errorf("10.50 CVE attempts = %v, want Adyen left out", got)
			}
			if charges := env.charges(str(get(withCents.data(), "id"))); charges["adyen"] != 0 {
				t.Errorf("Adyen was charged for 10.50 CVE: %v", charges)
			}
		}
		if after := adyenCalls(); after != before {
			t.Errorf("Adyen was asked %d times for amounts it cannot take", after-before)
		}
		// A refund Adyen cannot be sent is the client's error, and nothing is written.
		r := env.request(http.MethodPost, "/api/v1/payments/"+escudos+"/refunds", admin, map[string]any{"amount": "0.50"})
		if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_amount" || param != "amount" ||
			!strings.Contains(r.raw, "adyen takes CVE in whole units only") {
			t.Errorf("a refund of 0.50 CVE at Adyen = %d %s, want 400 invalid_amount", r.status, r.raw)
		}
		if n := db.Ent.Refund.Query().CountX(databasetest.AsMerchant()); n != 1 {
			t.Errorf("%d refunds recorded, want only the peso refund", n)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments/"+escudos+"/refunds", admin, map[string]any{"amount": "5"}); r.status != http.StatusCreated {
			t.Errorf("a refund of 5 CVE at Adyen = %d %s", r.status, r.raw)
		}

		// With Adyen the only provider in use, escudos with cents are the client's error, and no
		// payment is recorded; whole escudos are taken.
		doc = env.readConfig(admin)
		providers := doc["providers"].(map[string]any)
		for _, name := range []string{"stripe", "checkout"} {
			providers[name].(map[string]any)["enabled"] = false
		}
		if r := env.request(http.MethodPut, configPath, admin, withoutAuthor(doc)); r.status != http.StatusOK {
			t.Fatalf("PUT = %d %s", r.status, r.raw)
		}
		payments := env.paymentCount()
		r = env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.50", "CVE", "4242424242424242"))
		if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_amount" || param != "amount" ||
			!strings.Contains(r.raw, "adyen takes CVE in whole units only") {
			t.Errorf("10.50 CVE with Adyen alone = %d %s, want 400 invalid_amount", r.status, r.raw)
		}
		if after := env.paymentCount(); after != payments {
			t.Errorf("a payment no provider can take was recorded: %d payments, were %d", after, payments)
		}
		env.succeededPayment(admin, "11", "CVE", "adyen")
	})
}
