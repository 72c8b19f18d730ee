package stripe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		sandbox := newSandbox(pools[0].Ent, time.Now)
		url, caller := providertest.Serve(t, sandbox)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		unauthenticated := *c
		unauthenticated.APIKey = ""
		twinURL, twinCaller := providertest.Serve(t, newSandbox(pools[1].Ent, time.Now))
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
			Twin: &Client{BaseURL: twinURL, APIKey: "sk_test_x", Caller: twinCaller},
			RawDeclines: map[string]string{providertest.Declined: "generic_decline", providertest.InsufficientFunds: "insufficient_funds",
				providertest.ExpiredCard: "expired_card"}})
		if result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); err != nil || !strings.HasPrefix(result.ProviderPaymentID, "pi_") {
			t.Errorf("charge = %+v, %v; want a PaymentIntent id", result, err)
		}
	})
}

// TestNetworkRetriesReuseTheKey: a request whose answer is lost in the network, or answered 500,
// is sent again with its key, and Stripe charges once; any other answer is final.
func TestNetworkRetriesReuseTheKey(t *testing.T) {
	db := databasetest.SQLite(t)
	sandbox := newSandbox(db.Ent, time.Now)
	var requests atomic.Int32
	keys := make(chan string, 8)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		sandbox.ServeHTTP(w, r)
		if requests.Add(1) == 1 { // the first answer is lost after Stripe acted on it
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}
	}))
	defer flaky.Close()
	c := &Client{BaseURL: flaky.URL, APIKey: "sk_test_x", Caller: provider.Caller{HTTP: flaky.Client(), RetryWaits: []time.Duration{time.Millisecond, time.Millisecond}}}
	result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if err != nil || !result.Approved {
		t.Fatalf("charge through a lost answer = %+v, %v", result, err)
	}
	if len(keys) != 2 {
		t.Fatalf("%d requests reached Stripe, want the first and its retry", len(keys))
	}
	if first, second := <-keys, <-keys; first == "" || first != second {
		t.Errorf("keys %q then %q; a retry must send the attempt's key", first, second)
	}
	if n := db.Ent.SandboxObject.Query().CountX(context.Background()); n != 1 {
		t.Errorf("%d payment intents, want 1", n)
	}

	sandbox.Fault.Store(true)
	before := requests.Load()
	c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if n := requests.Load() - before; n != 3 {
		t.Errorf("a request answered 500 was sent %d times, want 3 (two retries)", n)
	}
	sandbox.Fault.Store(false)
	sandbox.Outage.Store(true)
	before = requests.Load()
	c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000))
	if n := requests.Load() - before; n != 1 {
		t.Errorf("a request answered 503 was sent %d times; that answer is final", n)
	}
}

// TestAnswersInFlight: a payment still processing is no decline, and a refund still pending
// settles later.
func TestAnswersInFlight(t *testing.T) {
	url, caller := providertest.Canned(t, http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"processing"}`)
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); !providertest.Unknown(err) {
		t.Errorf("a processing payment intent = %v, want an unknown outcome", err)
	}
	url, caller = providertest.Canned(t, http.StatusOK, `{"id":"re_1","object":"refund","status":"pending"}`)
	c = &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if r, err := c.Refund(context.Background(), provider.RefundRequest{RefundID: "re_x", ProviderPaymentID: "pi_1"}); err != nil || !r.Pending {
		t.Errorf("a pending refund = %+v, %v", r, err)
	}
	url, caller = providertest.Canned(t, http.StatusConflict, `{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}`)
	c = &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); !providertest.Unknown(err) {
		t.Errorf("a key still in use = %v, want an unknown outcome", err)
	}
}

// TestLookupsRead: a look-up reads Stripe's answers as Charge and Refund read theirs; one that
// cannot tell, or finds more than it can read, is an error, never "not found".
func TestLookupsRead(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   provider.ChargeResult // zero: an error
	}{
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","object":"payment_intent","status":"processing"}]}`, provider.ChargeResult{}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_action"}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", DeclineCode: "card_declined", RawDeclineCode: "requires_action",
				DeclineMessage: "The card needs a step Paygate cannot take (requires_action)."}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_2","status":"requires_payment_method","created":2,
			"last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","message":"No funds."}},
			{"id":"pi_1","status":"requires_payment_method","created":1}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_2", DeclineCode: "insufficient_funds", RawDeclineCode: "insufficient_funds", DeclineMessage: "No funds."}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_payment_method","created":2},
			{"id":"pi_2","status":"succeeded","created":1}]}`, provider.ChargeResult{ProviderPaymentID: "pi_2", Approved: true}},
		{http.StatusOK, `{"object":"search_result","has_more":true,"data":[{"id":"pi_1","status":"requires_payment_method"}]}`, provider.ChargeResult{}},
		{http.StatusBadRequest, `{"error":{"type":"invalid_request_error","param":"query"}}`, provider.ChargeResult{}},
		{http.StatusOK, `{"object":"search_result","data":"none"}`, provider.ChargeResult{}},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		result, found, err := c.LookupCharge(context.Background(), "pay_1")
		if tc.want == (provider.ChargeResult{}) && (err == nil || found) || tc.want != (provider.ChargeResult{}) && (err != nil || !found || result != tc.want) {
			t.Errorf("%d %s = %+v, found %v, %v; want %+v", tc.status, tc.body, result, found, err, tc.want)
		}
	}

	for _, tc := range []struct {
		status int
		body   string
		want   provider.RefundStatus // "": an error
	}{
		{http.StatusOK, `{"id":"re_1","object":"refund","status":"pending"}`, provider.RefundPending},
		{http.StatusOK, `{"id":"re_1","object":"refund","status":"requires_action"}`, provider.RefundPending},
		{http.StatusOK, `{"id":"re_1","object":"refund","status":"succeeded"}`, provider.RefundSucceeded},
		{http.StatusOK, `{"id":"re_1","object":"refund","status":"failed"}`, provider.RefundFailed},
		{http.StatusOK, `{"id":"re_1","object":"refund","status":"canceled"}`, provider.RefundFailed},
		{http.StatusNotFound, `{"error":{"type":"invalid_request_error","code":"resource_missing"}}`, provider.RefundNotFound},
		{http.StatusNotFound, ``, ""},
		{http.StatusServiceUnavailable, `{"error":{"type":"api_error"}}`, ""},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		status, err := c.LookupRefund(context.Background(), "pi_1", "re_x", "re_1")
		if status != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%d %s = %q, %v; want %q", tc.status, tc.body, status, err, tc.want)
		}
	}
	url, caller := providertest.Canned(t, http.StatusOK, `{"object":"list","has_more":true,"data":[{"id":"re_1","status":"succeeded","metadata":{"paygate_id":"re_other"}}]}`)
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if status, err := c.LookupRefund(context.Background(), "pi_1", "re_x", ""); err == nil {
		t.Errorf("a refund not in the first page of many = %q, want an error", status)
	}
}

// TestSearchQuotesTheID: an id with a quote in it is searched for as it is, not as a query.
func TestSearchQuotesTheID(t *testing.T) {
	db := databasetest.SQLite(t)
	url, caller := providertest.Serve(t, newSandbox(db.Ent, time.Now))
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	req := providertest.Charge(t, providertest.Approved, 100)
	req.PaymentID = `pay_it's`
	charged, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if result, found, err := c.LookupCharge(context.Background(), req.PaymentID); err != nil || !found || result != charged {
		t.Errorf("look-up = %+v, found %v, %v; want %+v", result, found, err, charged)
	}
	if _, found, err := c.LookupCharge(context.Background(), `pay_it' OR metadata['paygate_id']:'pay_its`); err != nil || found {
		t.Errorf("a quote that would end the query: found %v, %v; want nothing found", found, err)
	}
}

// TestAmountsAreSentAsStripeCountsThem: Stripe counts amounts in ISO 4217's minor units but for
// the króna, in hundredths (5 ISK is 500), and the ariary, whole, so an ariary amount with a
// fraction cannot be sent to it.
func TestAmountsAreSentAsStripeCountsThem(t *testing.T) {
	providertest.CheckWireAmounts(t, []providertest.WireAmount{
		{Amount: money.Amount{Minor: 4999, Currency: "USD"}, Sent: "4999"},
		{Amount: money.Amount{Minor: 500, Currency: "JPY"}, Sent: "500"},
		{Amount: money.Amount{Minor: 5, Currency: "ISK"}, Sent: "500"},
		{Amount: money.Amount{Minor: 1005, Currency: "KWD"}, Sent: "1005"},
		{Amount: money.Amount{Minor: 150000, Currency: "MGA"}, Sent: "1500"},
		{Amount: money.Amount{Minor: 1050, Currency: "MGA"}},
	}, func(url string, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	}, func(r *http.Request) string {
		r.ParseForm()
		return r.PostForm.Get("amount")
	})
}

// TestListRefunds: the refunds of a PaymentIntent, Paygate's and one made at Stripe, are listed
// with their ids, amounts and status; a PaymentIntent without refunds lists none.
func TestListRefunds(t *testing.T) {
	db := databasetest.SQLite(t)
	sandbox := newSandbox(db.Ent, time.Now)
	url, caller := providertest.Serve(t, sandbox)
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	ctx := context.Background()
	req := providertest.Charge(t, providertest.Approved, 1000)
	charged, err := c.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if listed, err := c.ListRefunds(ctx, charged.ProviderPaymentID); err != nil || len(listed) != 0 {
		t.Fatalf("before any refund: %+v, %v", listed, err)
	}
	refund := provider.RefundRequest{RefundID: "re_list_1", ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 300, Currency: "EUR"}}
	refunded, err := c.Refund(ctx, refund)
	if err != nil {
		t.Fatal(err)
	}
	if err := sandbox.Simulate(ctx, provider.SimulateRefund, req.PaymentID); err != nil { // the rest, from Stripe's dashboard
		t.Fatal(err)
	}
	listed, err := c.ListRefunds(ctx, charged.ProviderPaymentID)
	if err != nil || len(listed) != 2 {
		t.Fatalf("listed %+v, %v; want two refunds", listed, err)
	}
	byAmount := map[int64]provider.RefundNotice{listed[0].Amount: listed[0], listed[1].Amount: listed[1]}
	if ours := byAmount[300]; ours.RefundID != "re_list_1" || ours.ProviderRefundID != refunded.ProviderRefundID || ours.Status != provider.RefundSucceeded {
		t.Errorf("Paygate's refund listed as %+v", ours)
	}
	if atStripe := byAmount[700]; atStripe.RefundID != "" || atStripe.ProviderRefundID == "" || atStripe.Currency != "EUR" || atStripe.Status != provider.RefundSucceeded {
		t.Errorf("the dashboard's refund listed as %+v", atStripe)
	}
}
