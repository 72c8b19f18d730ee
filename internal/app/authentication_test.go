package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// merchantSite is a merchant's page that shoppers' browsers come back to after authenticating:
// it tells the browser it landed, and keeps the Referer each browser sent.
type merchantSite struct {
	url      string
	mu       sync.Mutex
	referers []string
}

func newMerchantSite(t *testing.T) *merchantSite {
	t.Helper()
	site := &merchantSite{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site.mu.Lock()
		site.referers = append(site.referers, r.Referer())
		site.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Order</title><p id="landed">Thank you</p>`)
	}))
	t.Cleanup(server.Close)
	site.url = server.URL
	return site
}

// sentReferers is what the browsers sent the site as their Referer.
func (m *merchantSite) sentReferers() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.referers, " ")
}

// authenticationBody is a payment of amount in currency by the card number, whose shopper comes
// back to returnURL.
func authenticationBody(amount, currency, number, returnURL string) map[string]any {
	body := paymentBody(amount, currency, number)
	body["return_url"] = returnURL
	return body
}

// awaitingShopper checks that answer r made payment a requires_action with a page at provider's
// sandbox on env, and returns the payment's id and that page.
func awaitingShopper(t *testing.T, env *testEnv, r response, provider, returnURL string) (id, page string) {
	t.Helper()
	data := r.data()
	id, page = str(get(data, "id")), str(get(data, "next_action", "redirect_to_url", "url"))
	if r.status != http.StatusCreated || str(get(data, "status")) != "requires_action" || str(get(data, "provider")) != provider ||
		str(get(data, "next_action", "type")) != "redirect_to_url" || str(get(data, "next_action", "redirect_to_url", "return_url")) != returnURL ||
		!strings.HasPrefix(page, env.url+"/sandbox/"+provider+"/challenge/") {
		t.Fatalf("%s: a card that asks for authentication: %d %s", provider, r.status, r.raw)
	}
	return id, page
}

// newBrowser starts headless Chromium for the test, on the loopback network only.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	browser := loopbackChromium(t, browserPath(t))
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return browser
}

// loopbackChromium is a context of headless Chromium at 1280x800 that reaches the loopback
// address alone: no other name resolves, and anything not on loopback goes to a proxy that is
// not there. It stops with the test.
func loopbackChromium(t *testing.T, chromium string) context.Context {
	t.Helper()
	allocator, cancelAllocator := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.ProxyServer("http://127.0.0.1:9"),
	)
	t.Cleanup(cancelAllocator)
	browser, cancelBrowser := chromedp.NewContext(allocator)
	t.Cleanup(cancelBrowser)
	return browser
}

// authenticateInBrowser opens page in a new tab, presses the challenge's button for outcome, and
// returns where the browser landed.
func authenticateInBrowser(t *testing.T, browser context.Context, page, outcome string) *url.URL {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#"+outcome)),
		chromedp.Click(chromedp.CSS("#"+outcome)),
		chromedp.WaitVisible(chromedp.CSS("#landed")),
	); err != nil {
		t.Fatalf("authenticating at %s (%s): %v", page, outcome, err)
	}
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	landed, err := url.Parse(location)
	if err != nil {
		t.Fatal(err)
	}
	return landed
}

// TestAuthenticationInABrowser: at each provider's sandbox, over REST and GraphQL, a card that
// asks for 3-D Secure makes a payment requires_action (201) with next_action.redirect_to_url.
// Headless Chromium opens its URL, submits the challenge, and lands on the merchant's return_url,
// served by the test, with payment_id and status added and the merchant's own query kept: the
// payment is succeeded once authenticated, failed when the shopper fails it or the card is
// declined after it, and its history passed through requires_action. The payment's return
// secret, in the address the browser came back to Paygate by, reaches the merchant neither in
// the address landed on nor as the Referer, and is in no log line.
func TestAuthenticationInABrowser(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)
	merchant := newMerchantSite(t)
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		returnSecrets := env.returnSecrets()
		operator := env.tokenFor("operator")
		returnURL := merchant.url + "/orders/42?step=paid"
		for _, tc := range []struct {
			provider, currency, number, outcome string
			graphql, approved                   bool
		}{
			{"stripe", "USD", provider.AuthenticateThenApprove, "complete", false, true},
			{"adyen", "EUR", provider.AuthenticateThenApprove, "complete", true, true},
			{"checkout", "GBP", provider.AuthenticateThenApprove, "complete", false, true},
			{"stripe", "USD", provider.AuthenticateThenApprove, "fail", true, false},
			{"adyen", "EUR", provider.AuthenticateThenDecline, "complete", false, false},
			{"checkout", "GBP", provider.AuthenticateThenApprove, "fail", true, false},
		} {
			var id, page string
			if tc.graphql {
				input := gqlPaymentInput("25.00", tc.currency, tc.number)
				input["returnUrl"] = returnURL
				data := env.mustGraphQL(operator, `mutation($input: CreatePaymentInput!) { createPayment(input: $input) {
					id status provider returnUrl nextAction { type redirectToUrl { url returnUrl } } } }`, map[string]any{"input": input})
				made := get(data, "createPayment")
				id, page = str(get(made, "id")), str(get(made, "nextAction", "redirectToUrl", "url"))
				if str(get(made, "status")) != "REQUIRES_ACTION" || str(get(made, "provider")) != tc.provider || str(get(made, "returnUrl")) != returnURL ||
					str(get(made, "nextAction", "type")) != "redirect_to_url" || str(get(made, "nextAction", "redirectToUrl", "returnUrl")) != returnURL ||
					!strings.HasPrefix(page, env.url+"/sandbox/"+tc.provider+"/challenge/") {
					t.Fatalf("%s over GraphQL: %v", tc.provider, made)
				}
			} else {
				made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("25.00", tc.currency, tc.number, returnURL))
				id, page = awaitingShopper(t, env, made, tc.provider, returnURL)
			}
			landed := authenticateInBrowser(t, browser, page, tc.outcome)
			secret := returnSecrets(id)
			if secret == "" || strings.Contains(landed.String(), secret) || strings.Contains(merchant.sentReferers(), secret) ||
				strings.Contains(env.logs.String(), secret) {
				t.Errorf("%s (%s): the return secret %q reached the merchant (landed on %s, Referers %s) or the logs",
					tc.provider, tc.outcome, secret, landed, merchant.sentReferers())
			}
			want := "failed"
			if tc.approved {
				want = "succeeded"
			}
			q := landed.Query()
			if landed.Scheme+"://"+landed.Host+landed.Path != merchant.url+"/orders/42" || q.Get("step") != "paid" ||
				q.Get("payment_id") != id || q.Get("status") != want {
				t.Errorf("%s (%s): the browser landed on %s, want the return URL with payment %s %s", tc.provider, tc.outcome, landed, id, want)
			}
			got := env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil)
			if str(get(got.data(), "status")) != want || get(got.data(), "next_action") != nil {
				t.Errorf("%s (%s): payment after the browser came back: %s", tc.provider, tc.outcome, got.raw)
			}
			if !tc.approved && str(get(got.data(), "failure_code")) != "card_declined" {
				t.Errorf("%s (%s): failure_code %v, want card_declined", tc.provider, tc.outcome, get(got.data(), "failure_code"))
			}
			wantMoves := sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>failed")
			if tc.approved {
				wantMoves = sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>processing", "processing>succeeded")
			}
			if moves := movesOf(t, env, id); !slices.Equal(moves, wantMoves) {
				t.Errorf("%s (%s): history %v, want %v", tc.provider, tc.outcome, moves, wantMoves)
			}
		}
	})
}

// movesOf is the moves in payment id's history, each "from>to" ("" from for its creation),
// sorted, so that a test compares which moves were made, and how often.
func movesOf(t *testing.T, env *testEnv, id string) []string {
	t.Helper()
	changes, err := env.db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(id)).All(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	var moves []string
	for _, c := range changes {
		from := ""
		if c.From != nil {
			from = string(*c.From)
		}
		moves = append(moves, from+">"+string(c.To))
	}
	slices.Sort(moves)
	return moves
}

// sortedMoves is moves, sorted as movesOf sorts them.
func sortedMoves(moves ...string) []string {
	slices.Sort(moves)
	return moves
}

// returnOf follows the shopper's way back without a browser: it submits the challenge at page
// with outcome and returns Paygate's return address with the query the provider's page added,
// as the browser would be sent there.
func returnOf(t *testing.T, page, outcome string) string {
	t.Helper()
	return providertest.Shopper(t, page, outcome).String()
}

// comeBack sends the shopper's browser to Paygate's return address, without following Paygate's
// redirect, and returns where Paygate sends it.
func comeBack(t *testing.T, address string) *url.URL {
	t.Helper()
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(address)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	location, err := resp.Location()
	if resp.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("GET %s = %d, want 303 to the merchant", address, resp.StatusCode)
	}
	return location
}

// sandboxWebhooksDelivered returns once the webhooks the sandboxes are sending have reached
// Paygate's inbox.
func (e *testEnv) sandboxWebhooksDelivered() {
	for _, sandbox := range e.app.services.providers.sandboxes {
		if sender, ok := sandbox.(interface{ WaitForWebhooks() }); ok {
			sender.WaitForWebhooks()
		}
	}
}

// processWebhooks applies, at once, the webhooks the sandboxes have sent so far.
func (e *testEnv) processWebhooks(t *testing.T) {
	t.Helper()
	e.sandboxWebhooksDelivered()
	if err := e.app.services.webhookWorker.ProcessDueAll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAuthenticationInEveryOrder: at each provider, the three ways news of an authentication
// reaches Paygate (the shopper's browser coming back, the provider's webhook, and, for a payment
// whose answer was lost, reconciliation) settle the payment whichever order they come in, each
// move once and along the lifecycle: the browser first and the webhook after, which agrees; the
// webhook first (the browser never coming back) and a late browser told the settled status; and
// a lost answer (202, processing) found waiting by reconciliation, then settled.
func TestAuthenticationInEveryOrder(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		operator := env.tokenFor("operator")
		returnURL := "http://127.0.0.1:9/shop/return"
		settledOnce := func(t *testing.T, name, id, want string) {
			t.Helper()
			wantMoves := sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>processing", "processing>succeeded")
			if want == "failed" {
				wantMoves = sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>failed")
			}
			if moves := movesOf(t, env, id); !slices.Equal(moves, wantMoves) {
				t.Errorf("%s: history %v, want %v", name, moves, wantMoves)
			}
		}
		for _, tc := range []struct{ provider, currency string }{{"stripe", "USD"}, {"adyen", "EUR"}, {"checkout", "GBP"}} {
			// The browser first: Paygate asks the provider and settles; the webhook agrees.
			made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("30.00", tc.currency, provider.AuthenticateThenApprove, returnURL))
			id, page := awaitingShopper(t, env, made, tc.provider, returnURL)
			back := comeBack(t, returnOf(t, page, "complete"))
			if back.Query().Get("status") != "succeeded" || back.Query().Get("payment_id") != id || !strings.HasPrefix(back.String(), returnURL+"?") {
				t.Errorf("%s: browser first: sent to %s", tc.provider, back)
			}
			env.processWebhooks(t)
			settledOnce(t, tc.provider+" browser first", id, "succeeded")

			// The webhook first: the browser never came back; when it does, late, it is told.
			made = env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("31.00", tc.currency, provider.AuthenticateThenDecline, returnURL))
			id, page = awaitingShopper(t, env, made, tc.provider, returnURL)
			late := returnOf(t, page, "complete")
			waitFor(t, tc.provider+" webhook settling the payment", func() bool {
				env.processWebhooks(t)
				return env.payment(id).Status == state.PaymentFailed
			})
			if back := comeBack(t, late); back.Query().Get("status") != "failed" {
				t.Errorf("%s: late browser sent to %s, want status failed", tc.provider, back)
			}
			settledOnce(t, tc.provider+" webhook first", id, "failed")
		}

		// A lost answer: 202 processing; reconciliation finds the payment waiting for its
		// shopper, who then authenticates (Stripe and Checkout.com answer look-ups; Adyen's
		// webhook settles its lost answers).
		for _, tc := range []struct{ provider, currency string }{{"stripe", "USD"}, {"checkout", "GBP"}} {
			switches := env.app.services.providers.sandboxes[tc.provider].Switches()
			switches.LoseAnswers.Store(true)
			made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("32.00", tc.currency, provider.AuthenticateThenApprove, returnURL))
			switches.LoseAnswers.Store(false)
			id := str(get(made.data(), "id"))
			if made.status != http.StatusAccepted || str(get(made.data(), "status")) != "processing" {
				t.Fatalf("%s: lost answer: %d %s", tc.provider, made.status, made.raw)
			}
			if _, err := env.app.services.payments.Reconcile(context.Background(), payment.Window{}); err != nil {
				t.Fatal(err)
			}
			got := env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil)
			page := str(get(got.data(), "next_action", "redirect_to_url", "url"))
			if str(get(got.data(), "status")) != "requires_action" || page == "" {
				t.Fatalf("%s: reconciled lost answer: %s", tc.provider, got.raw)
			}
			if back := comeBack(t, returnOf(t, page, "complete")); back.Query().Get("status") != "succeeded" {
				t.Errorf("%s: after reconciliation, sent to %s", tc.provider, back)
			}
			env.processWebhooks(t)
			settledOnce(t, tc.provider+" reconciled", id, "succeeded")
		}
	})
}

// TestAbandonedAuthentication: a payment left waiting for its shopper for an hour is canceled as
// abandoned by the expiry pass (with the clock moved on): at Stripe by canceling its intent, at
// Adyen, which has nothing to cancel before the shopper authenticates, here alone; Checkout.com
// declines it itself after 15 minutes, which the pass finds when it asks. One the shopper authenticated meanwhile, with neither
// browser nor webhook telling Paygate yet, is settled as the provider says instead, and its late
// webhook agrees. Without a return_url no authentication is asked for: the card is declined. The
// return address answers an unknown payment 404, as it does a payment without a return_url, which
// has no return secret, and an oversized query 400.
func TestAbandonedAuthentication(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		operator := env.tokenFor("operator")
		waiting := map[string]string{}
		for _, tc := range []struct{ provider, currency string }{{"stripe", "USD"}, {"adyen", "EUR"}, {"checkout", "GBP"}} {
			made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("40.00", tc.currency, provider.AuthenticateThenApprove, "https://shop.example/back"))
			waiting[tc.provider], _ = awaitingShopper(t, env, made, tc.provider, "https://shop.example/back")
		}
		made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("41.00", "USD", provider.AuthenticateThenApprove, "https://shop.example/back"))
		silent, page := awaitingShopper(t, env, made, "stripe", "https://shop.example/back")
		returnOf(t, page, "complete")
		env.sandboxWebhooksDelivered() // in the inbox, not applied
		plain := env.request(http.MethodPost, "/api/v1/payments", operator, paymentBody("42.00", "USD", provider.AuthenticateThenApprove))
		if code, _ := plain.errorCode(); plain.status != http.StatusPaymentRequired || code != "card_declined" {
			t.Errorf("a card that needs authentication, without a return_url: %d %s; want declined", plain.status, plain.raw)
		}
		if n, err := env.app.services.payments.ExpireAuthorizations(context.Background()); err != nil || n != 0 {
			t.Fatalf("expiry pass before the hour: %d, %v", n, err)
		}
		env.clock.Advance(payment.AuthenticationWindow + time.Minute)
		if _, err := env.app.services.payments.ExpireAuthorizations(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p := env.payment(silent); p.Status != state.PaymentSucceeded {
			t.Errorf("a payment authenticated at the provider unbeknown to Paygate is %s after the expiry pass, want succeeded", p.Status)
		}
		env.processWebhooks(t)
		for name, id := range waiting {
			p := env.payment(id)
			if name == "checkout" {
				// Checkout.com declines a payment not authenticated within 15 minutes itself,
				// before any authorisation: its look-up lists none to read a code from.
				if p.Status != state.PaymentFailed || p.FailureCode == nil || *p.FailureCode != "card_declined" || p.NextActionURL != nil {
					t.Errorf("checkout: abandoned payment is %s (%v)", p.Status, p.FailureCode)
				}
				continue
			}
			if p.Status != state.PaymentCanceled || p.CancellationReason == nil ||
				*p.CancellationReason != state.CanceledAbandoned || p.NextActionURL != nil || p.PendingAction != nil {
				t.Errorf("%s: abandoned payment is %s (%v)", name, p.Status, p.CancellationReason)
			}
		}
		if p := env.payment(silent); p.Status != state.PaymentSucceeded {
			t.Errorf("a payment settled by the expiry pass is %s after its webhook", p.Status)
		}
		if r := env.request(http.MethodGet, "/api/v1/payments/pay_nothing/return", "", nil); r.status != http.StatusNotFound {
			t.Errorf("return of an unknown payment: %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodGet, "/api/v1/payments/"+silent+"/return?x="+strings.Repeat("a", 9000), "", nil); r.status != http.StatusBadRequest {
			t.Errorf("return with an oversized query: %d", r.status)
		}
		if r := env.request(http.MethodGet, "/api/v1/payments/"+str(get(plain.data(), "id"))+"/return", "", nil); r.status != http.StatusNotFound || strings.Contains(r.raw, "failed") {
			t.Errorf("return without a return_url: %d %s", r.status, r.raw)
		}
	})
}

// returnSecrets has env's payment service tell the test, from now on, the secret of each payment's
// return address as it gives the address to the provider, and returns a look-up of them: for the
// tests that come back to it before the provider's page would send them there.
func (e *testEnv) returnSecrets() func(paymentID string) string {
	var mu sync.Mutex
	secrets := map[string]string{}
	address := e.app.services.payments.ReturnAddress
	e.app.services.payments.ReturnAddress = func(id, secret string) string {
		mu.Lock()
		defer mu.Unlock()
		secrets[id] = secret
		return address(id, secret)
	}
	return func(id string) string {
		mu.Lock()
		defer mu.Unlock()
		return secrets[id]
	}
}

// TestReturnNeedsItsSecret: at each provider's sandbox, the return address Paygate gives the
// provider carries a secret of the payment's, 26 characters, one for each payment. Once the
// shopper authenticated, the return without it, with a wrong one or with another payment's is
// answered as an id that names no payment, byte for byte but for the id (status, headers, body,
// sent with one request id): no status, no return_url; and the payment is unchanged, so the
// provider, whose answer would settle it, was not asked. So is the return of a payment stored
// before payments had secrets, with the secret it was made with: its webhook settles it. With its
// secret the browser is sent on to the merchant with the status. No answer to the merchant and
// no log line holds a secret.
func TestReturnNeedsItsSecret(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		operator := env.tokenFor("operator")
		returnURL := "https://alpha.example/thanks?order=A-1&token=s3cr3t"
		// ask answers a browser's GET of path, sent with one request id, and not followed.
		ask := func(path string) (status int, header http.Header, body string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, env.url+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Request-Id", "req_return_probe")
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Header.Del("Date")
			return resp.StatusCode, resp.Header, string(raw)
		}
		var secrets, toMerchant []string
		for _, tc := range []struct{ provider, currency string }{{"stripe", "USD"}, {"adyen", "EUR"}, {"checkout", "GBP"}} {
			// The payment tried, another whose secret is tried on it, and one stored before
			// payments had secrets; each shopper authenticated, their browsers not back yet.
			var ids [3]string
			var backs [3]*url.URL
			for i := range ids {
				made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("50.00", tc.currency, provider.AuthenticateThenApprove, returnURL))
				toMerchant = append(toMerchant, made.raw)
				var page string
				ids[i], page = awaitingShopper(t, env, made, tc.provider, returnURL)
				back, err := url.Parse(returnOf(t, page, "complete"))
				if err != nil {
					t.Fatal(err)
				}
				backs[i] = back
				secret := back.Query().Get(payment.ReturnSecretParam)
				if back.Path != "/api/v1/payments/"+ids[i]+"/return" || len(secret) != 26 || slices.Contains(secrets, secret) {
					t.Fatalf("%s: the provider sent the browser back to %s", tc.provider, back)
				}
				secrets = append(secrets, secret)
			}
			tried, other, old := ids[0], ids[1], ids[2]
			if _, err := db.SQL.ExecContext(context.Background(), "UPDATE payments SET return_secret_hash = NULL WHERE id = $1", old); err != nil {
				t.Fatal(err)
			}
			before, moves := env.payment(tried), movesOf(t, env, tried)

			unknown := prefixid.New("pay")
			withSecret := func(back *url.URL, secret string, keep bool) string {
				q := back.Query()
				q.Del(payment.ReturnSecretParam)
				if keep {
					q.Set(payment.ReturnSecretParam, secret)
				}
				return q.Encode()
			}
			for name, tc2 := range map[string]struct {
				id, query string
			}{
				"without the secret":       {tried, withSecret(backs[0], "", false)},
				"with a wrong secret":      {tried, withSecret(backs[0], rand.Text(), true)},
				"with another's secret":    {tried, withSecret(backs[0], backs[1].Query().Get(payment.ReturnSecretParam), true)},
				"of a payment from before": {old, backs[2].RawQuery},
			} {
				status, header, body := ask("/api/v1/payments/" + tc2.id + "/return?" + tc2.query)
				wantStatus, wantHeader, wantBody := ask("/api/v1/payments/" + unknown + "/return?" + tc2.query)
				if status != http.StatusNotFound || status != wantStatus || !maps.EqualFunc(header, wantHeader, slices.Equal) ||
					strings.ReplaceAll(body, tc2.id, unknown) != wantBody || strings.Contains(body, "alpha.example") || strings.Contains(body, "requires_action") {
					t.Errorf("%s: the return %s = %d %v %s; an unknown id's = %d %v %s", tc.provider, name, status, header, body, wantStatus, wantHeader, wantBody)
				}
			}
			if after := env.payment(tried); after.Status != state.PaymentRequiresAction || !after.UpdatedAt.Equal(before.UpdatedAt) ||
				!slices.Equal(movesOf(t, env, tried), moves) {
				t.Errorf("%s: refused returns moved the payment to %s at %v", tc.provider, after.Status, after.UpdatedAt)
			}

			for i, id := range []string{tried, other} {
				if back := comeBack(t, backs[i].String()); back.Query().Get("payment_id") != id || back.Query().Get("status") != "succeeded" ||
					!strings.HasPrefix(back.String(), returnURL+"&") {
					t.Errorf("%s: the return with its secret sent the browser to %s", tc.provider, back)
				}
			}
			if p := env.payment(old); p.Status != state.PaymentRequiresAction {
				t.Errorf("%s: a payment from before secrets is %s after its refused return", tc.provider, p.Status)
			}
			waitFor(t, tc.provider+" webhook settling the payment from before secrets", func() bool {
				env.processWebhooks(t)
				return env.payment(old).Status == state.PaymentSucceeded
			})
			for _, id := range ids {
				toMerchant = append(toMerchant, env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil).raw)
			}
		}
		toMerchant = append(toMerchant, env.request(http.MethodGet, "/api/v1/payments?limit=100", operator, nil).raw,
			env.request(http.MethodGet, "/api/v1/events?limit=100", operator, nil).raw)
		logs := env.logs.String()
		if n := strings.Count(logs, `"route":"GET /api/v1/payments/{id}/return","status":404`); n < 3*4*2 {
			t.Errorf("%d refused returns were logged, want every one", n)
		}
		for _, secret := range secrets {
			if strings.Contains(logs, secret) {
				t.Errorf("a return secret is in the logs")
			}
			for _, answer := range toMerchant {
				if strings.Contains(answer, secret) {
					t.Errorf("a return secret is in an answer to the merchant: %.300s", answer)
				}
			}
		}
	})
}

// TestNewStatusesAreCounted: payments waiting for their shopper, authorised, and canceled are
// counted by status in the monitoring API (REST and GraphQL) and in Prometheus's
// paygate_payments_total by the status they were answered with, and are found by the status
// filters of both lists.
func TestNewStatusesAreCounted(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		operator := env.staffToken("operator")
		waiting, _ := awaitingShopper(t, env, env.request(http.MethodPost, "/api/v1/payments", operator,
			authenticationBody("10.00", "USD", provider.AuthenticateThenApprove, "https://shop.example/back")), "stripe", "https://shop.example/back")
		held := str(get(env.request(http.MethodPost, "/api/v1/payments", operator, manualBody("11.00", "USD")).data(), "id"))
		voided := str(get(env.request(http.MethodPost, "/api/v1/payments", operator, manualBody("12.00", "USD")).data(), "id"))
		if r := env.request(http.MethodPost, "/api/v1/payments/"+voided+"/cancel", operator, nil); r.status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.status, r.raw)
		}

		data := env.request(http.MethodGet, "/api/v1/monitoring/metrics", operator, nil).data()
		for status, want := range map[string]string{"requires_action": "1", "requires_capture": "1", "canceled": "1"} {
			if got := str(get(data, "payments", "by_status", status)); got != want {
				t.Errorf("REST by_status %s = %q, want %s", status, got, want)
			}
		}
		figures := env.mustGraphQL(operator, `{ systemMetrics { payments { byStatus { status count } } } }`, nil)
		if got := mustJSON(t, get(figures, "systemMetrics", "payments", "byStatus")); got != `[{"count":1,"status":"canceled"},{"count":1,"status":"requires_action"},{"count":1,"status":"requires_capture"}]` {
			t.Errorf("GraphQL byStatus = %s", got)
		}
		families := env.scrape(env.apiKey(env.tokenFor("admin"), "monitoring:read"))
		for status, want := range map[string]float64{"requires_action": 1, "requires_capture": 2} {
			if got, _ := sample(families, "paygate_payments_total", map[string]string{"status": status, "provider": "stripe", "currency": "USD"}); got != want {
				t.Errorf("paygate_payments_total{status=%q} = %v, want %v", status, got, want)
			}
		}

		for status, id := range map[string]string{"requires_action": waiting, "requires_capture": held, "canceled": voided} {
			if ids, more := env.listIDs(operator, "/api/v1/payments?status="+status); more || !slices.Equal(ids, []string{id}) {
				t.Errorf("REST list of %s = %v", status, ids)
			}
			listed := env.mustGraphQL(operator, `query($status: PaymentStatus) { payments(where: {status: $status}) { edges { node { id } } } }`,
				map[string]any{"status": strings.ToUpper(status)})
			if got := mustJSON(t, get(listed, "payments", "edges")); got != `[{"node":{"id":"`+id+`"}}]` {
				t.Errorf("GraphQL list of %s = %s", status, got)
			}
		}
	})
}

// sandboxAPI sends a GET of path to provider's sandbox API, as its adapter would, and returns
// the answer's status and body.
func (e *testEnv) sandboxAPI(t *testing.T, providerName, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer sk_test")
	answer := httptest.NewRecorder()
	e.app.services.providers.sandboxes[providerName].ServeHTTP(answer, req)
	return answer.Code, strings.TrimSpace(answer.Body.String())
}

// TestCheckoutDeclinedBeforeAuthorisation: a Checkout.com payment whose shopper fails 3-D Secure
// is declined before any authorisation, and its actions list none. Read Declined, it is failed
// (card_declined) whatever its actions list, whichever way Paygate hears first: the shopper's
// browser, which lands on the merchant's page with status=failed and the merchant's query kept;
// or the provider's webhook, which carries the provider's response code (20151), and the browser
// coming back after it. Each moves the payment once; what comes after agrees.
func TestCheckoutDeclinedBeforeAuthorisation(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db, webhookSecretsEnv...)
		operator := env.tokenFor("operator")
		returnURL := "http://127.0.0.1:9/shop/return?order=7"
		wantMoves := sortedMoves(">pending", "pending>processing", "processing>requires_action", "requires_action>failed")
		landedFailed := func(t *testing.T, what, id string, back *url.URL) {
			t.Helper()
			if q := back.Query(); !strings.HasPrefix(back.String(), "http://127.0.0.1:9/shop/return?") || q.Get("order") != "7" ||
				q.Get("payment_id") != id || q.Get("status") != "failed" {
				t.Errorf("%s: the browser was sent to %s, want the return URL with status=failed", what, back)
			}
		}

		// The browser first.
		made := env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("33.00", "GBP", provider.AuthenticateThenApprove, returnURL))
		id, page := awaitingShopper(t, env, made, "checkout", returnURL)
		back := returnOf(t, page, "fail")
		providerID := *env.payment(id).ProviderPaymentID
		if status, actions := env.sandboxAPI(t, "checkout", "/payments/"+providerID+"/actions"); status != http.StatusOK || actions != "[]" {
			t.Fatalf("the actions of a payment whose shopper failed 3-D Secure: %d %s, want none", status, actions)
		}
		landedFailed(t, "browser first", id, comeBack(t, back))
		got := env.request(http.MethodGet, "/api/v1/payments/"+id, operator, nil).data()
		if str(get(got, "status")) != "failed" || str(get(got, "failure_code")) != "card_declined" || get(got, "next_action") != nil {
			t.Errorf("browser first: payment %v (%v), want failed, card_declined", get(got, "status"), get(got, "failure_code"))
		}
		env.processWebhooks(t)
		if moves := movesOf(t, env, id); !slices.Equal(moves, wantMoves) {
			t.Errorf("browser first: history %v, want %v", moves, wantMoves)
		}

		// The webhook first: it carries the provider's code; the browser, late, is told.
		made = env.request(http.MethodPost, "/api/v1/payments", operator, authenticationBody("34.00", "GBP", provider.AuthenticateThenApprove, returnURL))
		id, page = awaitingShopper(t, env, made, "checkout", returnURL)
		late := returnOf(t, page, "fail")
		waitFor(t, "the webhook settling the payment", func() bool {
			env.processWebhooks(t)
			return env.payment(id).Status == state.PaymentFailed
		})
		if p := env.payment(id); p.FailureCode == nil || *p.FailureCode != "card_declined" || p.ProviderDeclineCode == nil || *p.ProviderDeclineCode != "20151" {
			t.Errorf("webhook first: failure %v, provider's code %v; want card_declined, 20151", p.FailureCode, p.ProviderDeclineCode)
		}
		landedFailed(t, "webhook first", id, comeBack(t, late))
		if moves := movesOf(t, env, id); !slices.Equal(moves, wantMoves) {
			t.Errorf("webhook first: history %v, want %v", moves, wantMoves)
		}
	})
}
