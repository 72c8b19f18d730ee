package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	adyenwebhook "github.com/adyen/adyen-go-api-library/v14/src/webhook"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/loadtest"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/state"
)

// BenchmarkCreatePayment compares create-payment over REST and GraphQL with the bare yardstick
// handler (internal/loadtest), which decodes the same body and makes the least writes a durable
// design makes, in two transactions, and charges through Stripe's sandbox over the same database
// as Paygate does (Paygate reaches it in process, the bare handler over a socket). The goals: REST within 15% of bare, GraphQL within 10% of
// REST, keyed or not. This measures one client at a time in process; cmd/paygate-load measures
// many clients against a running server. CI prints the figures without judging them, so that a
// change adding a round trip or allocations per payment shows in review. The round trips include
// the Stripe sandbox's, which keeps its state in the same database, and, for Paygate, storing the
// webhook the sandbox sends of each charge, as a real provider would.
//
//	go test -run '^$' -bench CreatePayment -benchmem ./internal/app
func BenchmarkCreatePayment(b *testing.B) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.CountingSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.CountingPostgres
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
					stripeSandbox := httptest.NewServer(stripe.Registration.NewSandbox(db.Ent, stripe.Registration.SandboxSettings(nil), time.Now, ""))
					defer stripeSandbox.Close()
					bare := benchTarget{db: db, handler: loadtest.Bare(db.SQL, db.Dialect, stripeSandbox.URL)}
					benchmarkHandler(b, bare, http.MethodPost, fixed("/payments"), always(restBody), http.StatusCreated, keyed)
				})
				b.Run("rest"+suffix, func(b *testing.B) {
					benchmarkHandler(b, benchServer(b, open(b)), http.MethodPost, fixed("/api/v1/payments"), always(restBody), http.StatusCreated, keyed)
				})
				b.Run("graphql"+suffix, func(b *testing.B) {
					benchmarkHandler(b, benchServer(b, open(b)), http.MethodPost, fixed("/query"), always(gqlBody), http.StatusOK, keyed)
				})
			}
		})
	}
}

// BenchmarkReadPayment compares reading a payment by its id (with its status history) and a page
// of the 20 newest payments, over REST and GraphQL, with the bare yardstick handler reading the
// same rows, every column, over the same database. CI prints the round trips and allocations per
// read beside the create's.
//
//	go test -run '^$' -bench ReadPayment -benchmem ./internal/app
func BenchmarkReadPayment(b *testing.B) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.CountingSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.CountingPostgres
	}
	for name, open := range databases {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			paygate := benchServer(b, db)
			body, _ := json.Marshal(paymentBody("49.99", "USD", "4242424242424242"))
			var ids []string
			for range 30 {
				r := httptest.NewRequest(http.MethodPost, "/api/v1/payments", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer "+paygate.token)
				w := httptest.NewRecorder()
				paygate.handler.ServeHTTP(w, r)
				var created struct {
					Data struct{ ID string } `json:"data"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil || w.Code != http.StatusCreated {
					b.Fatalf("creating a payment to read answered %d: %s", w.Code, w.Body.String())
				}
				ids = append(ids, created.Data.ID)
			}
			paygate.settle()
			bare := benchTarget{db: db, handler: loadtest.Bare(db.SQL, db.Dialect, "")}
			byID := func(prefix string) func(int) string {
				return func(i int) string { return prefix + ids[i%len(ids)] }
			}
			// The first answer must hold the payment's history (the move to processing), or a page
			// of payments.
			withHistory := func(b *testing.B, body []byte) {
				if !bytes.Contains(bytes.ToLower(body), []byte(`"processing"`)) {
					b.Fatalf("a payment read without its history: %.300s", body)
				}
			}
			page := func(b *testing.B, body []byte) {
				if n := bytes.Count(body, []byte(`"currency"`)); n != 20 {
					b.Fatalf("a page of %d payments; want 20: %.300s", n, body)
				}
			}
			gqlGets := make([][]byte, len(ids))
			for i, id := range ids {
				gqlGets[i], _ = json.Marshal(map[string]any{
					"query":     `query($id: ID!) { payment(id: $id) { id amount currency status customer { email } card { last4 } createdAt statusHistory { from to reason actor at } } }`,
					"variables": map[string]any{"id": id},
				})
			}
			gqlGet := func(i int) []byte { return gqlGets[i%len(gqlGets)] }
			gqlList, _ := json.Marshal(map[string]any{"query": `{ payments(first: 20) { edges { node { id amount currency status customer { email } card { last4 } createdAt } } pageInfo { hasNextPage } } }`})
			b.Run("get/bare", func(b *testing.B) {
				bare.check = withHistory
				benchmarkHandler(b, bare, http.MethodGet, byID("/payments/"), always(nil), http.StatusOK, false)
			})
			b.Run("get/rest", func(b *testing.B) {
				rest := paygate
				rest.check = withHistory
				benchmarkHandler(b, rest, http.MethodGet, byID("/api/v1/payments/"), always(nil), http.StatusOK, false)
			})
			b.Run("get/graphql", func(b *testing.B) {
				graphql := paygate
				graphql.check = withHistory
				benchmarkHandler(b, graphql, http.MethodPost, fixed("/query"), gqlGet, http.StatusOK, false)
			})
			b.Run("list/bare", func(b *testing.B) {
				bare.check = page
				benchmarkHandler(b, bare, http.MethodGet, fixed("/payments"), always(nil), http.StatusOK, false)
			})
			b.Run("list/rest", func(b *testing.B) {
				rest := paygate
				rest.check = page
				benchmarkHandler(b, rest, http.MethodGet, fixed("/api/v1/payments?limit=20"), always(nil), http.StatusOK, false)
			})
			b.Run("list/graphql", func(b *testing.B) {
				graphql := paygate
				graphql.check = page
				benchmarkHandler(b, graphql, http.MethodPost, fixed("/query"), always(gqlList), http.StatusOK, false)
			})
		})
	}
}

// BenchmarkDashboardPage is the largest real query, a page of 100 payments with their refunds
// and status history over GraphQL: the yardstick for what bounding a document may cost (see
// BenchmarkDocumentBounds in graph/, a small fraction of this).
//
//	go test -run '^$' -bench DashboardPage -benchmem ./internal/app
func BenchmarkDashboardPage(b *testing.B) {
	db := databasetest.CountingSQLite(b)
	env := newTestEnv(b, db)
	developer, operator := env.tokenFor("developer"), env.tokenFor("operator")
	for i := range 100 {
		id := str(get(env.request(http.MethodPost, "/api/v1/payments", developer, paymentBody("10.00", "USD", "4242424242424242")).body, "data", "id"))
		if i%10 == 0 {
			env.request(http.MethodPost, "/api/v1/payments/"+id+"/refunds", operator, map[string]any{"amount": "2.50"})
		}
	}
	target := benchServer(b, db)
	page, _ := json.Marshal(map[string]any{"query": `{ payments(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node {
		id amount amountRefunded currency status provider createdAt customer { email name } card { brand last4 }
		refunds { id amount status createdAt } statusHistory { from to at reason } } } } }`})
	benchmarkHandler(b, target, http.MethodPost, fixed("/query"), always(page), http.StatusOK, false)
}

// benchTarget is a handler to measure, over a database counting its round trips.
type benchTarget struct {
	db      *database.DB
	handler http.Handler
	token   string
	// settle waits for what the requests left under way that reaches the database; nil: nothing.
	settle func()
	// check, when set, looks at the first answer's body.
	check func(b *testing.B, body []byte)
}

// benchServer is the real handler with the access log off, as a loaded server would run it
// at warn level, and a developer's token for it.
func benchServer(b *testing.B, db *database.DB) benchTarget {
	paygate := newTestApp(b, db, NewLogger(io.Discard, "warn"))
	env := &testEnv{t: b, db: db, app: paygate}
	// The sandboxes deliver each charge's webhook to Paygate in the background, and storing it is
	// a round trip the payment brought about.
	settle := func() {
		for _, sandbox := range paygate.services.providers.sandboxes {
			if webhooks, ok := sandbox.(interface {
				SendsWebhooks() bool
				WaitForWebhooks()
			}); ok && webhooks.SendsWebhooks() {
				webhooks.WaitForWebhooks()
			}
		}
	}
	return benchTarget{db: db, handler: paygate.handler, token: env.tokenFor("developer"), settle: settle}
}

// benchmarkHandler sends body(i) to the target's path(i) for each request i until the benchmark
// ends; keyed requests carry a new idempotency key each. Besides time it reports the process's CPU
// time per request, the figure that decides throughput once the CPU is busy (on SQLite it
// includes the database's own work), and the database round trips per request.
func benchmarkHandler(b *testing.B, target benchTarget, method string, path func(i int) string, body func(i int) []byte, want int, keyed bool) {
	b.ReportAllocs()
	cpuBefore, roundTripsBefore := processCPU(b), target.db.RoundTrips()
	defer func() {
		b.ReportMetric(float64(processCPU(b)-cpuBefore)/float64(b.N), "cpu-ns/op")
		if target.settle != nil {
			target.settle()
		}
		b.ReportMetric(float64(target.db.RoundTrips()-roundTripsBefore)/float64(b.N), "roundtrips/op")
	}()
	for i := 0; b.Loop(); i++ {
		r := httptest.NewRequest(method, path(i), bytes.NewReader(body(i)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+target.token)
		if keyed {
			r.Header.Set("Idempotency-Key", prefixid.New("bench"))
		}
		w := httptest.NewRecorder()
		target.handler.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s answered %d: %s", r.URL.Path, w.Code, w.Body.String())
		}
		if i == 0 && target.check != nil {
			target.check(b, w.Body.Bytes())
		}
	}
}

// fixed is the path of every request.
func fixed(path string) func(int) string { return func(int) string { return path } }

// always is the body of every request.
func always(body []byte) func(int) []byte { return func(int) []byte { return body } }

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// BenchmarkWebhookIngest is a provider's delivery answered: verified, stored once, acknowledged,
// through the whole handler, with an empty queue and with a backlog of 20,000 events the worker
// has not got to. The providers give up on an answer after 10 s; ingest must stay far under that
// whatever the backlog, since it never waits on processing.
//
//	go test -run '^$' -bench WebhookIngest -benchmem ./internal/app
func BenchmarkWebhookIngest(b *testing.B) {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.SQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.Postgres
	}
	deliveries := map[string]func(id string) (string, []string){
		"stripe": func(id string) (string, []string) {
			body := stripeEventBody(id, "payment_intent.succeeded", map[string]any{"id": "pi_" + id, "metadata": map[string]any{"paygate_id": "pay_" + id}})
			return body, stripeDelivery(body, testStripeSecret, time.Now())
		},
		"adyen": func(id string) (string, []string) {
			return adyenNotification(b, adyenwebhook.NotificationRequestItem{Amount: adyenwebhook.Amount{Currency: "EUR", Value: 1000},
				EventCode: "AUTHORISATION", MerchantAccountCode: "PaygateSandbox", MerchantReference: "pay_" + id, PspReference: id, Success: "true"}, testAdyenKey), nil
		},
		"checkout": func(id string) (string, []string) {
			body := `{"id":"evt_` + id + `","type":"payment_approved","data":{"id":"pay_cko_` + id + `","reference":"pay_` + id + `"}}`
			return body, checkoutSignature(body, testCheckoutSecret)
		},
	}
	for name, open := range databases {
		b.Run(name, func(b *testing.B) {
			for _, backlog := range []int{0, 20000} {
				for provider, delivery := range deliveries {
					b.Run(fmt.Sprintf("%s/backlog-%d", provider, backlog), func(b *testing.B) {
						db := open(b)
						fillBacklog(b, db, backlog)
						paygate := newTestApp(b, db, NewLogger(io.Discard, "warn"), webhookSecretsEnv...)
						b.ReportAllocs()
						for b.Loop() {
							body, headers := delivery(prefixid.New("bench"))
							r := httptest.NewRequest(http.MethodPost, "/webhooks/"+provider, strings.NewReader(body))
							r.Header.Set("Content-Type", "application/json")
							for i := 0; i+1 < len(headers); i += 2 {
								r.Header.Set(headers[i], headers[i+1])
							}
							w := httptest.NewRecorder()
							paygate.handler.ServeHTTP(w, r)
							if w.Code != http.StatusOK {
								b.Fatalf("%s answered %d: %s", provider, w.Code, w.Body.String())
							}
						}
					})
				}
			}
		})
	}
}

// fillBacklog stores n events waiting for the worker.
func fillBacklog(b *testing.B, db *database.DB, n int) {
	now := time.Now()
	for start := 0; start < n; start += 1000 {
		creates := make([]*ent.WebhookEventCreate, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			creates = append(creates, db.Ent.WebhookEvent.Create().SetProvider("stripe").SetEventID(fmt.Sprintf("evt_backlog_%d", i)).
				SetType("payment_intent.succeeded").SetStatus(state.WebhookReceived).SetPayload([]byte(`{}`)).SetNextAttemptAt(now).SetReceivedAt(now))
		}
		if err := db.Ent.WebhookEvent.CreateBulk(creates...).Exec(databasetest.AsMerchant()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticate is the cost every request pays to say who sent it: an access token (an
// HMAC and the in-memory revocations and users) or an API key (an HMAC and the in-memory keys
// and users). Neither hashes a password nor asks the database once the key has been read.
func BenchmarkAuthenticate(b *testing.B) {
	env := newTestEnv(b, databasetest.SQLite(b))
	admin := env.tokenFor("admin")
	credentials := map[string]string{"token": admin, "apikey": env.apiKey(admin, auth.ScopePaymentsRead, auth.ScopePaymentsWrite)}
	for name, credential := range credentials {
		b.Run(name, func(b *testing.B) {
			ctx := databasetest.AsMerchant()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := env.app.services.auth.Authenticate(ctx, credential, "", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
