package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	ckosandbox "github.com/paygate/paygate/internal/provider/checkout/sandbox"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		clock, settlements := providertest.NewClock(), &providertest.Settlements{}
		record := func(sandbox *ckosandbox.Sandbox) { sandbox.Settled = settlements.Record }
		sandbox, c := serveSandbox(t, pools[0].Ent, clock.Now, record)
		twinSandbox, twin := serveSandbox(t, pools[1].Ent, clock.Now, record)
		unauthenticated := *c
		unauthenticated.SecretKey = ""
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
			Twin:           twin,
			RawDeclines:    map[string]string{providertest.Declined: "20005", providertest.InsufficientFunds: "20051", providertest.ExpiredCard: "20054"},
			RefundsPending: true, Clock: clock, Settle: sandbox.Settle, TwinSettle: twinSandbox.Settle, Settlements: settlements, CapturesPending: true})
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
	sandbox, c := serveSandbox(t, db.Ent, clock.Now, func(sandbox *ckosandbox.Sandbox) { sandbox.SettleAfter = time.Minute })
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

// TestCaptureAndVoidAreSentAsCheckoutNamesThem: an authorisation asks capture false and marks the
// payment as one to capture later; a capture and a void go to the payment's captures and voids
// under their own idempotency keys, with Checkout.com's field names and its units.
func TestCaptureAndVoidAreSentAsCheckoutNamesThem(t *testing.T) {
	type request struct {
		path, key string
		body      map[string]any
	}
	var mu sync.Mutex
	var sent []request
	url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		sent = append(sent, request{path: r.URL.Path, key: r.Header.Get("Cko-Idempotency-Key"), body: body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/payments" {
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"id":"pay_x","action_id":"act_x","amount":1000,"currency":"EUR","approved":true,"status":"Authorized","response_code":"10000"}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"action_id":"act_y","reference":"pay_1"}`))
	}))
	c := &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
	ctx := context.Background()
	held := providertest.Charge(t, providertest.Approved, 1000)
	held.CaptureManually = true
	if result, err := c.Charge(ctx, held); err != nil || result != (provider.ChargeResult{ProviderPaymentID: "pay_x", Approved: true}) {
		t.Errorf("authorisation = %+v, %v", result, err)
	}
	if _, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 1000)); err != nil {
		t.Fatal(err)
	}
	if result, err := c.Capture(ctx, provider.CaptureRequest{PaymentID: "pay_1", ProviderPaymentID: "pay_x",
		Amount: money.Amount{Minor: 1500, Currency: "CLP"}, IdempotencyKey: "cap_1"}); err != nil || !result.Pending {
		t.Errorf("capture = %+v, %v", result, err)
	}
	if result, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: "pay_1", ProviderPaymentID: "pay_x", Reason: "duplicate",
		IdempotencyKey: "can_1"}); err != nil || !result.Pending {
		t.Errorf("void = %+v, %v", result, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 4 {
		t.Fatalf("sent %+v", sent)
	}
	authorisation, charge, capture, void := sent[0], sent[1], sent[2], sent[3]
	if authorisation.body["capture"] != false || !reflect.DeepEqual(authorisation.body["metadata"], map[string]any{"paygate_capture": "manual"}) {
		t.Errorf("authorisation sent %v", authorisation.body)
	}
	if _, marked := charge.body["metadata"]; charge.body["capture"] != true || marked {
		t.Errorf("charge sent %v", charge.body)
	}
	if capture.path != "/payments/pay_x/captures" || capture.key != "cap_1" ||
		!reflect.DeepEqual(capture.body, map[string]any{"amount": 150000.0, "capture_type": "Final", "reference": "pay_1"}) {
		t.Errorf("capture sent %+v", capture)
	}
	if void.path != "/payments/pay_x/voids" || void.key != "can_1" || !reflect.DeepEqual(void.body, map[string]any{"reference": "pay_1"}) {
		t.Errorf("void sent %+v", void)
	}
}

// TestCaptureAndVoidAnswers: a capture or void Checkout.com does not allow (403) or finds invalid
// (422) is refused, no outage, and a void not allowed says there was nothing to cancel yet; a 500
// or an idempotency conflict leaves the outcome unknown; an outage or refused credentials are an
// outage.
func TestCaptureAndVoidAnswers(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string // "taken", "refused", "outage", "unknown", or "not allowed": a capture refused, a void with nothing to cancel
	}{
		{http.StatusAccepted, `{"action_id":"act_1","reference":"pay_1"}`, "taken"},
		{http.StatusAccepted, `{"reference":"pay_1"}`, "unknown"},
		{http.StatusForbidden, ``, "not allowed"},
		{http.StatusUnprocessableEntity, `{"request_id":"req_1","error_type":"request_invalid","error_codes":["capture_value_greater_than_authorized"]}`, "refused"},
		{http.StatusNotFound, ``, "refused"},
		{http.StatusInternalServerError, ``, "unknown"},
		{http.StatusConflict, `{"error_type":"request_invalid"}`, "unknown"},
		{http.StatusServiceUnavailable, ``, "outage"},
		{http.StatusUnauthorized, ``, "outage"},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		_, captureErr := c.Capture(context.Background(), provider.CaptureRequest{PaymentID: "pay_1", ProviderPaymentID: "pay_x",
			Amount: money.Amount{Minor: 100, Currency: "EUR"}, IdempotencyKey: "cap_1"})
		_, voidErr := c.Cancel(context.Background(), provider.CancelRequest{PaymentID: "pay_1", ProviderPaymentID: "pay_x", IdempotencyKey: "can_1"})
		for what, err := range map[string]error{"capture": captureErr, "void": voidErr} {
			got := "unknown"
			switch {
			case err == nil:
				got = "taken"
			case errors.Is(err, provider.ErrOutage):
				got = "outage"
			case errors.Is(err, provider.ErrNothingToCancel):
				got = "nothing to cancel"
			case errors.Is(err, provider.ErrUnavailable):
				got = "refused"
			}
			want := tc.want
			if want == "not allowed" {
				want = map[string]string{"capture": "refused", "void": "nothing to cancel"}[what]
			}
			if got != want {
				t.Errorf("%s answered %d %s: %v, %s; want %s", what, tc.status, tc.body, err, got, want)
			}
		}
	}
}

// TestLookupsOfAuthorisations: a payment authorised to capture later is found held, then captured
// for what its capture took, or voided; a payment captured at once reports its approval alone.
func TestLookupsOfAuthorisations(t *testing.T) {
	_, c := serveSandbox(t, databasetest.SQLite(t).Ent, time.Now, nil)
	ctx := context.Background()
	lookUp := func(paymentID string) provider.ChargeResult {
		t.Helper()
		found, ok, err := c.LookupCharge(ctx, paymentID)
		if err != nil || !ok {
			t.Fatalf("look-up of %s: found %v, %v", paymentID, ok, err)
		}
		return found
	}
	captured, held := providertest.Authorize(t, c, providertest.Approved, 5000)
	if _, err := c.Capture(ctx, provider.CaptureRequest{PaymentID: captured.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
		Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}); err != nil {
		t.Fatal(err)
	}
	if found := lookUp(captured.PaymentID); found != (provider.ChargeResult{ProviderPaymentID: held.ProviderPaymentID, Approved: true, Captured: 3000}) {
		t.Errorf("look-up of a capture of 30.00 of 50.00 = %+v", found)
	}
	voided, held := providertest.Authorize(t, c, providertest.Approved, 4000)
	if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: voided.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
		IdempotencyKey: prefixid.New("can")}); err != nil {
		t.Fatal(err)
	}
	if found := lookUp(voided.PaymentID); found != (provider.ChargeResult{ProviderPaymentID: held.ProviderPaymentID, Approved: true, Canceled: true}) {
		t.Errorf("look-up of a voided authorisation = %+v", found)
	}
	charged := providertest.Charge(t, providertest.Approved, 1000)
	answered, err := c.Charge(ctx, charged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: answered.ProviderPaymentID,
		Amount: money.Amount{Minor: 400, Currency: "EUR"}}); err != nil {
		t.Fatal(err)
	}
	if found := lookUp(charged.PaymentID); found != answered {
		t.Errorf("look-up of a payment captured at once = %+v, want %+v", found, answered)
	}

	// Checkout.com counts the Chilean peso in hundredths, its balances too.
	url, caller := providertest.Canned(t, http.StatusOK, `{"limit":10,"skip":0,"total_count":1,"data":[{"id":"pay_1","amount":200000,"currency":"CLP",`+
		`"approved":true,"status":"Partially Captured","balances":{"total_authorized":200000,"total_captured":150000},"metadata":{"paygate_capture":"manual"}}]}`)
	c = &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
	if found := lookUp("pay_x"); found != (provider.ChargeResult{ProviderPaymentID: "pay_1", Approved: true, Captured: 1500}) {
		t.Errorf("look-up of a capture of 1500 CLP = %+v", found)
	}
}

// TestAuthenticationIsAskedAsCheckoutNamesIt: a payment with a return address asks for 3-D Secure
// and gives the address, its own query kept, as both its success_url and its failure_url; a
// payment Checkout.com answers 202 Pending with a redirect link awaits the shopper on that page.
// A payment without one sends none of them.
func TestAuthenticationIsAskedAsCheckoutNamesIt(t *testing.T) {
	var sent map[string]any
	url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = nil
		json.NewDecoder(r.Body).Decode(&sent)
		w.Header().Set("Content-Type", "application/json")
		if _, asked := sent["3ds"]; !asked {
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"id":"pay_x","action_id":"act_x","amount":1000,"currency":"EUR","approved":false,"status":"Declined",` +
				`"response_code":"20154","response_summary":"3DS authentication required"}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"id":"pay_mbabizu24mvu3mela5njyhpit4","status":"Pending","reference":"pay_1","3ds":{"downgraded":false,"enrolled":"Y"},` +
			`"_links":{"self":{"href":"https://api.sandbox.checkout.com/payments/pay_mbabizu24mvu3mela5njyhpit4"},` +
			`"redirect":{"href":"https://api.sandbox.checkout.com/3ds/pay_mbabizu24mvu3mela5njyhpit4"}}}`))
	}))
	c := &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
	req := providertest.Charge(t, provider.AuthenticateThenApprove, 1000)
	req.ReturnURL = "https://paygate.example/api/v1/payments/pay_1/return?lang=en"
	result, err := c.Charge(context.Background(), req)
	if want := (provider.ChargeResult{ProviderPaymentID: "pay_mbabizu24mvu3mela5njyhpit4",
		RedirectURL: "https://api.sandbox.checkout.com/3ds/pay_mbabizu24mvu3mela5njyhpit4"}); err != nil || result != want {
		t.Errorf("a payment waiting for the shopper = %+v, %v; want %+v", result, err, want)
	}
	if !reflect.DeepEqual(sent["3ds"], map[string]any{"enabled": true}) || sent["success_url"] != req.ReturnURL || sent["failure_url"] != req.ReturnURL {
		t.Errorf("sent 3ds %v, success_url %v, failure_url %v", sent["3ds"], sent["success_url"], sent["failure_url"])
	}

	result, err = c.Charge(context.Background(), providertest.Charge(t, provider.AuthenticateThenApprove, 1000))
	if want := (provider.ChargeResult{ProviderPaymentID: "pay_x", DeclineCode: "card_declined", RawDeclineCode: "20154",
		DeclineMessage: "3DS authentication required"}); err != nil || result != want {
		t.Errorf("a payment without a return address = %+v, %v; want %+v", result, err, want)
	}
	for _, field := range []string{"3ds", "success_url", "failure_url"} {
		if value, asked := sent[field]; asked {
			t.Errorf("a payment without a return address sent %s %v", field, value)
		}
	}
}

// TestAuthenticatedReads: once the browser is back, the payment is read under its id and must
// be the one made for Paygate's payment: waiting still, approved, or declined, whatever its
// actions list: with its authorization's response code, mapped to Paygate's decline code, when
// it lists one; card_declined without a code of the provider's when it lists none (its shopper
// failed 3-D Secure before any authorisation) or they cannot be read. A payment of another
// reference, or an answer that cannot tell, decides nothing.
func TestAuthenticatedReads(t *testing.T) {
	const pending = `"status":"Pending","approved":false,"_links":{"redirect":{"href":"https://api.sandbox.checkout.com/3ds/pay_x"}}`
	const authorization = `[{"id":"act_1","type":"Authorization","amount":1000,"approved":false,"response_code":"20051",` +
		`"response_summary":"Insufficient Funds","reference":"pay_1"}]`
	unauthorised := provider.ChargeResult{ProviderPaymentID: "pay_x", DeclineCode: "card_declined", DeclineMessage: "Declined"}
	for _, tc := range []struct {
		name      string
		status    int
		reference string
		payment   string // the payment's JSON but its id and reference
		actions   string // its actions' answer: 200 with them, or 500 when ""
		want      provider.ChargeResult
		wantErr   bool
	}{
		{"waiting", http.StatusOK, "pay_1", pending, authorization, provider.ChargeResult{ProviderPaymentID: "pay_x", RedirectURL: "https://api.sandbox.checkout.com/3ds/pay_x"}, false},
		{"approved", http.StatusOK, "pay_1", `"status":"Captured","approved":true`, authorization, provider.ChargeResult{ProviderPaymentID: "pay_x", Approved: true}, false},
		{"declined by the issuer", http.StatusOK, "pay_1", `"status":"Declined","approved":false`, authorization, provider.ChargeResult{ProviderPaymentID: "pay_x",
			DeclineCode: "insufficient_funds", RawDeclineCode: "20051", DeclineMessage: "Insufficient Funds"}, false},
		{"authentication failed, no authorization", http.StatusOK, "pay_1", `"status":"Declined","approved":false`, `[]`, unauthorised, false},
		{"declined, actions unreadable", http.StatusOK, "pay_1", `"status":"Declined","approved":false`, "", unauthorised, false},
		{"another payment's", http.StatusOK, "pay_other", `"status":"Captured","approved":true`, authorization, provider.ChargeResult{}, true},
		{"another payment's, waiting", http.StatusOK, "pay_other", pending, authorization, provider.ChargeResult{}, true},
		{"pending without a page", http.StatusOK, "pay_1", `"status":"Pending","approved":false`, authorization, provider.ChargeResult{}, true},
		{"not found", http.StatusNotFound, "", ``, authorization, provider.ChargeResult{}, true},
		{"fault", http.StatusInternalServerError, "", ``, authorization, provider.ChargeResult{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/payments/pay_x/actions":
					if tc.actions == "" {
						w.WriteHeader(http.StatusInternalServerError)
						return
					}
					w.Write([]byte(tc.actions))
				case "/payments/pay_x":
					w.WriteHeader(tc.status)
					if tc.payment != "" {
						w.Write([]byte(`{"id":"pay_x","reference":"` + tc.reference + `","amount":1000,"currency":"EUR",` + tc.payment + `}`))
					}
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			c := &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
			result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: "pay_1", ProviderPaymentID: "pay_x",
				Returned: map[string][]string{"cko-session-id": {"sid_y3oqhf46pyzuxjbcn2giaqnb44"}}})
			if (err != nil) != tc.wantErr || result != tc.want {
				t.Errorf("= %+v, %v; want %+v, error %v", result, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestAuthenticatedWithoutTheProvidersID: a payment whose charge's answer was lost is found by its
// reference.
func TestAuthenticatedWithoutTheProvidersID(t *testing.T) {
	url, caller := providertest.Canned(t, http.StatusOK, `{"limit":10,"skip":0,"total_count":1,"data":[{"id":"pay_x","reference":"pay_1",`+
		`"status":"Pending","approved":false,"_links":{"redirect":{"href":"https://api.sandbox.checkout.com/3ds/pay_x"}}}]}`)
	c := &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
	want := provider.ChargeResult{ProviderPaymentID: "pay_x", RedirectURL: "https://api.sandbox.checkout.com/3ds/pay_x"}
	if result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: "pay_1"}); err != nil || result != want {
		t.Errorf("= %+v, %v; want %+v", result, err, want)
	}
	url, caller = providertest.Canned(t, http.StatusOK, `{"limit":10,"skip":0,"total_count":0,"data":[]}`)
	c = &Client{BaseURL: url, SecretKey: "sk_test", Caller: caller}
	if result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: "pay_1"}); err == nil {
		t.Errorf("a payment Checkout.com has none for = %+v; want an error", result)
	}
}
