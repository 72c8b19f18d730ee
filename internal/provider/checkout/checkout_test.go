package checkout

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
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
		clock, settlements := providertest.NewClock(), &providertest.Settlements{}
		sandbox, twinSandbox := newSandbox(pools[0].Ent, clock.Now), newSandbox(pools[1].Ent, clock.Now)
		sandbox.Settled, twinSandbox.Settled = settlements.Record, settlements.Record
		url, caller := providertest.Serve(t, sandbox)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		unauthenticated := *c
		unauthenticated.SecretKey = ""
		twinURL, twinCaller := providertest.Serve(t, twinSandbox)
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
			Twin:           &Client{BaseURL: twinURL, SecretKey: "sk_sbox_x", Caller: twinCaller},
			RawDeclines:    map[string]string{providertest.Declined: "20005", providertest.InsufficientFunds: "20051", providertest.ExpiredCard: "20054"},
			RefundsPending: true, Clock: clock, Settle: sandbox.Settle, TwinSettle: twinSandbox.Settle, Settlements: settlements})
	})
}

// TestAnswersInFlight: a payment still pending is no decline, and every approval code approves.
func TestAnswersInFlight(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		approved bool
	}{
		{http.StatusAccepted, `{"id":"pay_1","status":"Pending"}`, false},
		{http.StatusCreated, `{"id":"pay_1","status":"Pending","approved":false}`, false},
		{http.StatusConflict, `{"error_type":"request_invalid"}`, false},
		{http.StatusCreated, `{"id":"pay_1","status":"Captured","approved":true,"response_code":"10008"}`, true},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		result, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100))
		if tc.approved && (err != nil || !result.Approved) || !tc.approved && !providertest.Unknown(err) {
			t.Errorf("%d %s = %+v, %v", tc.status, tc.body, result, err)
		}
	}
}

// TestLookupsRead: a payment Checkout.com has not decided, or more payments than were read, cannot
// be told; a refund action without an outcome yet is pending.
func TestLookupsRead(t *testing.T) {
	for _, body := range []string{
		`{"limit":10,"skip":0,"total_count":1,"data":[{"id":"pay_1","status":"Pending","approved":false}]}`,
		`{"limit":10,"skip":0,"total_count":1,"data":[{"id":"pay_1","status":"Authorized","approved":false}]}`,
		`{"limit":10,"skip":0,"total_count":11,"data":[{"id":"pay_1","status":"Declined","approved":false}]}`,
		`{"data":{}}`,
	} {
		url, caller := providertest.Canned(t, http.StatusOK, body)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		if result, found, err := c.LookupCharge(context.Background(), "pay_x"); err == nil || found {
			t.Errorf("%s = %+v, found %v; want an error", body, result, found)
		}
	}
	for _, tc := range []struct {
		status                     int
		body                       string
		refundID, providerRefundID string
		want                       provider.RefundStatus // "": an error
	}{
		{http.StatusOK, `[{"id":"act_2","type":"Refund","amount":100,"reference":"re_x"}]`, "re_x", "", provider.RefundPending},
		{http.StatusOK, `[{"id":"act_2","type":"Refund","amount":100,"approved":false,"response_code":"20005"}]`, "re_x", "act_2", provider.RefundFailed},
		{http.StatusOK, `[{"id":"act_2","type":"Refund","amount":100,"approved":true,"reference":"re_x"}]`, "re_x", "", provider.RefundSucceeded},
		{http.StatusOK, `[{"id":"act_1","type":"Authorization","amount":100,"approved":true,"reference":""}]`, "", "act_2", provider.RefundPending},
		{http.StatusOK, `[{"id":"act_1","type":"Authorization","amount":100,"approved":true,"reference":""}]`, "re_x", "", provider.RefundNotFound},
		{http.StatusNotFound, ``, "re_x", "", provider.RefundNotFound},
		{http.StatusInternalServerError, ``, "re_x", "act_2", ""},
		{http.StatusOK, `{}`, "re_x", "act_2", ""},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		status, err := c.LookupRefund(context.Background(), "pay_1", tc.refundID, tc.providerRefundID)
		if status != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%d %s (%q, %q) = %q, %v; want %q", tc.status, tc.body, tc.refundID, tc.providerRefundID, status, err, tc.want)
		}
	}
}

// TestSettleAfter: a refund settles once it has been pending for the sandbox's SettleAfter.
func TestSettleAfter(t *testing.T) {
	db := databasetest.SQLite(t)
	clock := providertest.NewClock()
	sandbox := newSandbox(db.Ent, clock.Now)
	sandbox.SettleAfter = time.Minute
	url, caller := providertest.Serve(t, sandbox)
	c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
	ctx := context.Background()
	charged, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: "re_1", ProviderPaymentID: charged.ProviderPaymentID, Amount: money.Amount{Minor: 100, Currency: "EUR"}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(provider.DefaultSettleAfter + time.Second)
	if n, err := sandbox.Settle(ctx); err != nil || n != 0 {
		t.Errorf("settled %d, %v before a minute; want none", n, err)
	}
	clock.Advance(time.Minute)
	if n, err := sandbox.Settle(ctx); err != nil || n != 1 {
		t.Errorf("settled %d, %v after a minute; want the refund", n, err)
	}
}

// TestAmountsAreSentAsCheckoutCountsThem: Checkout.com counts amounts in ISO 4217's minor units
// but for the Chilean peso, in hundredths, and takes three-decimal currencies only in whole
// hundredths (the last digit 0).
func TestAmountsAreSentAsCheckoutCountsThem(t *testing.T) {
	providertest.CheckWireAmounts(t, []providertest.WireAmount{
		{Amount: money.Amount{Minor: 1000, Currency: "EUR"}, Sent: "1000"},
		{Amount: money.Amount{Minor: 500, Currency: "JPY"}, Sent: "500"},
		{Amount: money.Amount{Minor: 5, Currency: "ISK"}, Sent: "5"},
		{Amount: money.Amount{Minor: 1500, Currency: "CLP"}, Sent: "150000"},
		{Amount: money.Amount{Minor: 1010, Currency: "KWD"}, Sent: "1010"},
		{Amount: money.Amount{Minor: 1005, Currency: "KWD"}},
	}, func(url string, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
	}, func(r *http.Request) string {
		var body struct{ Amount json.Number }
		json.NewDecoder(r.Body).Decode(&body)
		return body.Amount.String()
	})
}

// TestSourceNameIsSent: the customer's name goes as the card source's name; a customer without a
// name sends none.
func TestSourceNameIsSent(t *testing.T) {
	var mu sync.Mutex
	var sent []map[string]any
	url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Source map[string]any `json:"source"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		sent = append(sent, body.Source)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"pay_x","action_id":"act_x","amount":1000,"currency":"EUR","approved":true,"status":"Captured","response_code":"10000"}`))
	}))
	c := &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
	named := providertest.Charge(t, providertest.Approved, 1000)
	named.HolderName = "Ann Example"
	for _, req := range []provider.ChargeRequest{named, providertest.Charge(t, providertest.Approved, 1000)} {
		if _, err := c.Charge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if _, unnamed := sent[1]["name"]; len(sent) != 2 || sent[0]["name"] != "Ann Example" || unnamed || sent[0]["type"] != "card" {
		t.Errorf("sources sent: %v", sent)
	}
}
