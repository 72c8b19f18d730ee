package stripe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	stripego "github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/form"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		sandbox, c := served(t, pools[0].Ent, nil)
		unauthenticated := *c
		unauthenticated.APIKey = ""
		_, twin := served(t, pools[1].Ent, nil)
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches, Twin: twin,
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
	sandbox := newSandbox(db.Ent, time.Now, "") // no page is shown here
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
		// Authentication only Stripe.js can take (a charge without a return URL): declined.
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_action",
			"next_action":{"type":"use_stripe_sdk","use_stripe_sdk":{"type":"three_d_secure_redirect"}}}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", DeclineCode: "card_declined", RawDeclineCode: "authentication_required",
				DeclineMessage: "Your card was declined. This transaction requires authentication."}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_confirmation"}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", DeclineCode: "card_declined", RawDeclineCode: "requires_confirmation",
				DeclineMessage: "The card needs a step Paygate cannot take (requires_confirmation)."}},
		// Waiting for the shopper to authenticate on the page Stripe redirects to.
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_action","next_action":{"type":"redirect_to_url",
			"redirect_to_url":{"url":"https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=pi_1","return_url":"https://shop.example/paid"}}}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", RedirectURL: "https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=pi_1"}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_2","status":"requires_payment_method","created":2,
			"last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","message":"No funds."}},
			{"id":"pi_1","status":"requires_payment_method","created":1}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_2", DeclineCode: "insufficient_funds", RawDeclineCode: "insufficient_funds", DeclineMessage: "No funds."}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_payment_method","created":2},
			{"id":"pi_2","status":"succeeded","created":1}]}`, provider.ChargeResult{ProviderPaymentID: "pi_2", Approved: true}},
		{http.StatusOK, `{"object":"search_result","has_more":true,"data":[{"id":"pi_1","status":"requires_payment_method"}]}`, provider.ChargeResult{}},
		// Authorised to capture manually: held, then captured in part (in Stripe's hundredths of
		// the króna), or voided; or canceled after a decline, or before any charge.
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"requires_capture","capture_method":"manual",
			"amount":5000,"amount_capturable":5000,"amount_received":0,"currency":"eur","latest_charge":"ch_1"}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", Approved: true}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"succeeded","capture_method":"manual",
			"amount":500000,"amount_capturable":0,"amount_received":300000,"currency":"isk","latest_charge":"ch_1"}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", Approved: true, Captured: 3000}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"succeeded","capture_method":"manual",
			"amount_received":150,"currency":"isk"}]}`, provider.ChargeResult{}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"canceled","capture_method":"manual",
			"amount":5000,"amount_capturable":0,"amount_received":0,"currency":"eur","latest_charge":"ch_1","last_payment_error":null,
			"cancellation_reason":"requested_by_customer"}]}`, provider.ChargeResult{ProviderPaymentID: "pi_1", Approved: true, Canceled: true}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"canceled","capture_method":"manual",
			"latest_charge":"ch_1","last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","message":"No funds."}}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", Canceled: true, DeclineCode: "insufficient_funds", RawDeclineCode: "insufficient_funds", DeclineMessage: "No funds."}},
		{http.StatusOK, `{"object":"search_result","has_more":false,"data":[{"id":"pi_1","status":"canceled","capture_method":"manual","latest_charge":null}]}`,
			provider.ChargeResult{ProviderPaymentID: "pi_1", Canceled: true, DeclineCode: "card_declined", RawDeclineCode: "canceled",
				DeclineMessage: "The payment was canceled before it was authorised."}},
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
	_, c := served(t, databasetest.SQLite(t).Ent, nil)
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
	sandbox, c := served(t, databasetest.SQLite(t).Ent, nil)
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

// sentRequest is a request as a recording server took it.
type sentRequest struct {
	Method, Path, IdempotencyKey string
	Form                         url.Values
}

// recording serves what build makes for the address it is served at, recording each request it
// is sent, and returns a client for it and the requests sent so far.
func recording(t *testing.T, build func(pages string) http.Handler) (*Client, func() []sentRequest) {
	t.Helper()
	var mu sync.Mutex
	var sent []sentRequest
	url, caller := providertest.ServeSandbox(t, func(pages string) http.Handler {
		h := build(pages)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			mu.Lock()
			sent = append(sent, sentRequest{Method: r.Method, Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"), Form: r.PostForm})
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	return &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}, func() []sentRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]sentRequest(nil), sent...)
	}
}

// stripeClient is stripe-go's own client, against the server c speaks to.
func stripeClient(c *Client) *stripego.Client {
	return stripego.NewClient("sk_test_x", stripego.WithBackends(stripego.NewBackendsWithConfig(&stripego.BackendConfig{
		URL: stripego.String(c.BaseURL), HTTPClient: c.Caller.HTTP, MaxNetworkRetries: stripego.Int64(0),
		LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull}})))
}

// stripeForm is the form stripe-go sends for params.
func stripeForm(params any) url.Values {
	values := &form.Values{}
	form.AppendTo(values, params)
	return values.ToValues()
}

// TestCaptureSpeaksStripe: an authorisation, its capture and its cancellation are sent as
// stripe-go sends them, with the request's idempotency key; the sandbox answers them, and refuses
// what Stripe refuses, as stripe-go reads Stripe's answers.
func TestCaptureSpeaksStripe(t *testing.T) {
	db := databasetest.SQLite(t)
	c, sent := recording(t, func(pages string) http.Handler { return newSandbox(db.Ent, time.Now, pages) })
	ctx := context.Background()
	last := func() sentRequest {
		requests := sent()
		return requests[len(requests)-1]
	}

	_, held := providertest.Authorize(t, c, providertest.Approved, 5000)
	manual := stripeForm(&stripego.PaymentIntentParams{CaptureMethod: stripego.String("manual")})
	if got, want := last().Form.Get("capture_method"), manual.Get("capture_method"); got != want {
		t.Errorf("an authorisation sent capture_method %q, want %q", got, want)
	}
	capture := provider.CaptureRequest{ProviderPaymentID: held.ProviderPaymentID, Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: "cap_speaks"}
	if _, err := c.Capture(ctx, capture); err != nil {
		t.Fatal(err)
	}
	want := sentRequest{Method: http.MethodPost, Path: stripego.FormatURLPath("/v1/payment_intents/%s/capture", held.ProviderPaymentID), IdempotencyKey: "cap_speaks",
		Form: stripeForm(&stripego.PaymentIntentCaptureParams{AmountToCapture: stripego.Int64(3000)})}
	if got := last(); !reflect.DeepEqual(got, want) {
		t.Errorf("capture sent %+v, want %+v", got, want)
	}
	// Stripe takes no reason expired: an authorisation let lapse was abandoned.
	_, other := providertest.Authorize(t, c, providertest.Approved, 5000)
	if _, err := c.Cancel(ctx, provider.CancelRequest{ProviderPaymentID: other.ProviderPaymentID, Reason: "expired", IdempotencyKey: "can_speaks"}); err != nil {
		t.Fatal(err)
	}
	want = sentRequest{Method: http.MethodPost, Path: stripego.FormatURLPath("/v1/payment_intents/%s/cancel", other.ProviderPaymentID), IdempotencyKey: "can_speaks",
		Form: stripeForm(&stripego.PaymentIntentCancelParams{CancellationReason: stripego.String("abandoned")})}
	if got := last(); !reflect.DeepEqual(got, want) {
		t.Errorf("cancellation sent %+v, want %+v", got, want)
	}

	sc := stripeClient(c)
	refused := func(err error, code stripego.ErrorCode, status stripego.PaymentIntentStatus) {
		t.Helper()
		var stripeErr *stripego.Error
		switch {
		case !errors.As(err, &stripeErr):
			t.Errorf("%v, want a Stripe error %s", err, code)
		case stripeErr.HTTPStatusCode != http.StatusBadRequest || stripeErr.Type != stripego.ErrorTypeInvalidRequest || stripeErr.Code != code:
			t.Errorf("refused %d %s %s, want 400 invalid_request_error %s", stripeErr.HTTPStatusCode, stripeErr.Type, stripeErr.Code, code)
		case status != "" && (stripeErr.PaymentIntent == nil || stripeErr.PaymentIntent.Status != status):
			t.Errorf("refused about the payment intent %+v, want it %s", stripeErr.PaymentIntent, status)
		}
	}
	_, third := providertest.Authorize(t, c, providertest.Approved, 2000)
	_, err := sc.V1PaymentIntents.Capture(ctx, third.ProviderPaymentID, &stripego.PaymentIntentCaptureParams{AmountToCapture: stripego.Int64(2001)})
	refused(err, stripego.ErrorCodeAmountTooLarge, "")
	intent, err := sc.V1PaymentIntents.Capture(ctx, third.ProviderPaymentID, &stripego.PaymentIntentCaptureParams{AmountToCapture: stripego.Int64(1500)})
	if err != nil || intent.Status != stripego.PaymentIntentStatusSucceeded || intent.CaptureMethod != stripego.PaymentIntentCaptureMethodManual ||
		intent.Amount != 2000 || intent.AmountReceived != 1500 || intent.AmountCapturable != 0 || intent.LatestCharge == nil ||
		intent.LatestCharge.ID != "ch_"+strings.TrimPrefix(third.ProviderPaymentID, "pi_") {
		t.Errorf("capture of 15.00 of 20.00 = %+v, %v", intent, err)
	}
	_, err = sc.V1PaymentIntents.Capture(ctx, third.ProviderPaymentID, nil)
	refused(err, stripego.ErrorCodePaymentIntentUnexpectedState, stripego.PaymentIntentStatusSucceeded)
	_, err = sc.V1PaymentIntents.Cancel(ctx, third.ProviderPaymentID, nil)
	refused(err, stripego.ErrorCodePaymentIntentUnexpectedState, stripego.PaymentIntentStatusSucceeded)

	_, fourth := providertest.Authorize(t, c, providertest.Approved, 2000)
	intent, err = sc.V1PaymentIntents.Cancel(ctx, fourth.ProviderPaymentID, &stripego.PaymentIntentCancelParams{CancellationReason: stripego.String("fraudulent")})
	if err != nil || intent.Status != stripego.PaymentIntentStatusCanceled || intent.CancellationReason != stripego.PaymentIntentCancellationReasonFraudulent ||
		intent.CanceledAt == 0 || intent.AmountCapturable != 0 || intent.AmountReceived != 0 {
		t.Errorf("cancellation = %+v, %v", intent, err)
	}
	_, err = sc.V1PaymentIntents.Capture(ctx, fourth.ProviderPaymentID, nil)
	refused(err, stripego.ErrorCodePaymentIntentUnexpectedState, stripego.PaymentIntentStatusCanceled)
	_, err = sc.V1PaymentIntents.Cancel(ctx, "pi_unknown", nil)
	var missing *stripego.Error
	if !errors.As(err, &missing) || missing.HTTPStatusCode != http.StatusNotFound || missing.Code != stripego.ErrorCodeResourceMissing {
		t.Errorf("cancellation of an unknown payment intent = %v", err)
	}
}

// TestCaptureAnswers: a capture or cancellation is taken on Stripe's answer with the intent moved,
// refused (ErrUnavailable, an outage only when Stripe is down) when Stripe says it did nothing, and
// otherwise left unknown.
func TestCaptureAnswers(t *testing.T) {
	const (
		taken   = "taken"
		refused = "refused"
		outage  = "outage"
		unknown = "unknown"
	)
	for _, tc := range []struct {
		status          int
		body            string
		capture, cancel string
	}{
		{http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"succeeded","capture_method":"manual","amount_received":1000}`, taken, unknown},
		{http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"canceled","capture_method":"manual"}`, unknown, taken},
		{http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"processing"}`, unknown, unknown},
		{http.StatusOK, `{"object":"payment_intent"}`, unknown, unknown},
		{http.StatusOK, `not json`, unknown, unknown},
		{http.StatusBadRequest, `{"error":{"type":"invalid_request_error","code":"payment_intent_unexpected_state","payment_intent":{"id":"pi_1","status":"canceled"}}}`,
			refused, refused},
		{http.StatusBadRequest, `{"error":{"type":"invalid_request_error","code":"amount_too_large","param":"amount_to_capture"}}`, refused, refused},
		{http.StatusNotFound, `{"error":{"type":"invalid_request_error","code":"resource_missing"}}`, refused, refused},
		{http.StatusConflict, `{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}`, unknown, unknown},
		{http.StatusInternalServerError, `{"error":{"type":"api_error"}}`, unknown, unknown},
		{http.StatusServiceUnavailable, `{"error":{"type":"api_error"}}`, outage, outage},
		{http.StatusUnauthorized, `{"error":{"type":"invalid_request_error"}}`, outage, outage},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		_, captureErr := c.Capture(context.Background(), provider.CaptureRequest{ProviderPaymentID: "pi_1",
			Amount: money.Amount{Minor: 1000, Currency: "EUR"}, IdempotencyKey: "cap_1"})
		_, cancelErr := c.Cancel(context.Background(), provider.CancelRequest{ProviderPaymentID: "pi_1", Reason: "requested_by_customer",
			IdempotencyKey: "can_1"})
		for _, got := range []struct {
			what string
			err  error
			want string
		}{{"capture", captureErr, tc.capture}, {"cancellation", cancelErr, tc.cancel}} {
			outcome := taken
			switch {
			case errors.Is(got.err, provider.ErrOutage):
				outcome = outage
			case errors.Is(got.err, provider.ErrUnavailable):
				outcome = refused
			case got.err != nil:
				outcome = unknown
			}
			if outcome != got.want {
				t.Errorf("%d %s: %s %s (%v), want %s", tc.status, tc.body, got.what, outcome, got.err, got.want)
			}
		}
	}
}

// TestCapturesAreSentAsStripeCountsThem: a capture is sent in Stripe's units, and one Stripe
// cannot take is not sent at all.
func TestCapturesAreSentAsStripeCountsThem(t *testing.T) {
	c, sent := recording(t, func(string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			provider.WriteAnswer(w, http.StatusOK, []byte(`{"id":"pi_1","object":"payment_intent","status":"succeeded"}`))
		})
	})
	for _, tc := range []struct {
		amount money.Amount
		sent   string // "": nothing
	}{
		{money.Amount{Minor: 4999, Currency: "USD"}, "4999"},
		{money.Amount{Minor: 5, Currency: "ISK"}, "500"},
		{money.Amount{Minor: 150000, Currency: "MGA"}, "1500"},
		{money.Amount{Minor: 1050, Currency: "MGA"}, ""},
	} {
		before := len(sent())
		_, err := c.Capture(context.Background(), provider.CaptureRequest{ProviderPaymentID: "pi_1", Amount: tc.amount, IdempotencyKey: prefixid.New("cap")})
		requests := sent()[before:]
		switch {
		case tc.sent == "" && (len(requests) != 0 || !errors.Is(err, provider.ErrUnavailable)):
			t.Errorf("%s %s: sent %+v (%v), want nothing, unavailable", tc.amount, tc.amount.Currency, requests, err)
		case tc.sent != "" && (err != nil || len(requests) != 1 || requests[0].Form.Get("amount_to_capture") != tc.sent):
			t.Errorf("%s %s: sent %+v (%v), want amount_to_capture %s", tc.amount, tc.amount.Currency, requests, err, tc.sent)
		}
	}
}

// TestAuthenticationSpeaksStripe: a card that asks for 3-D Secure is confirmed with the return_url
// as stripe-go sends it, and answered, as stripe-go reads it, with a PaymentIntent requires_action
// that charged nothing and whose next_action redirects to the challenge page; the page sends the
// browser back to the return_url as Stripe does, and the adapter then reads the intent by id as
// Stripe decided it: succeeded, or requires_payment_method with Stripe's error for a failed
// authentication or for a card declined after it. A charge without a return URL allows no
// redirects, as stripe-go sends it, and Stripe asks for Stripe.js, which Paygate cannot take: the
// card is declined authentication_required, and no page decides its intent. An intent waiting for
// the shopper can be canceled, and its page is then gone; and an intent of another payment never
// answers for this one.
func TestAuthenticationSpeaksStripe(t *testing.T) {
	db := databasetest.SQLite(t)
	c, sent := recording(t, func(pages string) http.Handler { return newSandbox(db.Ent, time.Now, pages) })
	sc := stripeClient(c)
	ctx := context.Background()
	start := func(number string) (provider.ChargeRequest, provider.ChargeResult) {
		t.Helper()
		req := providertest.Charge(t, number, 2500)
		req.ReturnURL = "https://shop.example/paid?order=7"
		waiting, err := c.Charge(ctx, req)
		if err != nil || !waiting.AwaitsShopper() {
			t.Fatalf("charge of %s = %+v, %v; want a page for the shopper", number, waiting, err)
		}
		return req, waiting
	}
	// askedOnce checks that Authenticated asked Stripe once, for the intent.
	askedOnce := func(since int, intentID string) {
		t.Helper()
		want := sentRequest{Method: http.MethodGet, Path: stripego.FormatURLPath("/v1/payment_intents/%s", intentID), Form: url.Values{}}
		if asked := sent()[since:]; len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
			t.Errorf("Authenticated sent %+v, want %+v", asked, want)
		}
	}

	req, waiting := start(provider.AuthenticateThenApprove)
	requests := sent()
	returnURL := stripeForm(&stripego.PaymentIntentParams{ReturnURL: stripego.String(req.ReturnURL)}).Get("return_url")
	if got := requests[len(requests)-1].Form.Get("return_url"); got != returnURL {
		t.Errorf("the charge sent return_url %q, want %q", got, returnURL)
	}
	intent, err := sc.V1PaymentIntents.Retrieve(ctx, waiting.ProviderPaymentID, nil)
	if err != nil || intent.Status != stripego.PaymentIntentStatusRequiresAction || intent.NextAction == nil ||
		intent.NextAction.Type != stripego.PaymentIntentNextActionTypeRedirectToURL || intent.NextAction.RedirectToURL.URL != waiting.RedirectURL ||
		intent.NextAction.RedirectToURL.ReturnURL != req.ReturnURL || intent.LatestCharge != nil || intent.AmountReceived != 0 ||
		!strings.HasPrefix(intent.ClientSecret, intent.ID+"_secret_") || intent.PaymentMethod == nil || intent.PaymentMethod.Card == nil ||
		intent.PaymentMethod.Card.Last4 != "3184" || intent.PaymentMethod.Card.Brand != stripego.PaymentMethodCardBrandVisa {
		t.Fatalf("a payment intent waiting for the shopper = %+v, %v", intent, err)
	}
	back := providertest.Shopper(t, waiting.RedirectURL, "complete")
	if want := (url.Values{"order": {"7"}, "payment_intent": {intent.ID}, "payment_intent_client_secret": {intent.ClientSecret},
		"redirect_status": {"succeeded"}}); back.Host != "shop.example" || back.Path != "/paid" || !reflect.DeepEqual(back.Query(), want) {
		t.Errorf("the page sent the browser to %s, want the return_url with %v", back, want)
	}
	before := len(sent())
	result, err := c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID,
		Returned: back.Query()})
	if want := (provider.ChargeResult{ProviderPaymentID: intent.ID, Approved: true}); err != nil || result != want {
		t.Errorf("authenticated = %+v, %v; want %+v", result, err, want)
	}
	askedOnce(before, intent.ID)
	// Neither Stripe's answer nor the browser named the intent: a search finds it.
	before = len(sent())
	if result, err := c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: req.PaymentID}); err != nil || !result.Approved {
		t.Errorf("authenticated, the intent found by a search = %+v, %v", result, err)
	}
	if asked := sent()[before:]; len(asked) != 1 || asked[0].Path != "/v1/payment_intents/search" {
		t.Errorf("Authenticated with no intent named sent %+v, want a search", asked)
	}
	intent, err = sc.V1PaymentIntents.Retrieve(ctx, waiting.ProviderPaymentID, nil)
	if err != nil || intent.Status != stripego.PaymentIntentStatusSucceeded || intent.NextAction != nil || intent.AmountReceived != 2500 ||
		intent.LatestCharge == nil || intent.LatestCharge.ID != "ch_"+strings.TrimPrefix(intent.ID, "pi_") {
		t.Errorf("a payment intent once authenticated = %+v, %v", intent, err)
	}

	for _, tc := range []struct {
		name, number, outcome string
		errorType             stripego.ErrorType
		code                  stripego.ErrorCode
		raw                   string
		charged               bool
	}{
		{"failed", provider.AuthenticateThenApprove, "fail", stripego.ErrorTypeInvalidRequest, stripego.ErrorCodePaymentIntentAuthenticationFailure,
			"payment_intent_authentication_failure", false},
		{"declined after", provider.AuthenticateThenDecline, "complete", stripego.ErrorTypeCard, stripego.ErrorCodeCardDeclined, "generic_decline", true},
	} {
		req, waiting := start(tc.number)
		back := providertest.Shopper(t, waiting.RedirectURL, tc.outcome)
		if status := back.Query().Get("redirect_status"); status != "failed" {
			t.Errorf("%s: redirect_status %q, want failed", tc.name, status)
		}
		intent, err := sc.V1PaymentIntents.Retrieve(ctx, waiting.ProviderPaymentID, nil)
		if err != nil || intent.Status != stripego.PaymentIntentStatusRequiresPaymentMethod || intent.NextAction != nil || intent.AmountReceived != 0 ||
			intent.LastPaymentError == nil || intent.LastPaymentError.Type != tc.errorType || intent.LastPaymentError.Code != tc.code ||
			(intent.LatestCharge != nil) != tc.charged {
			t.Fatalf("%s: payment intent %+v, %v", tc.name, intent, err)
		}
		// Stripe's answer with the intent's id was lost: the browser names it.
		before := len(sent())
		result, err := c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: req.PaymentID, Returned: back.Query()})
		want := provider.ChargeResult{ProviderPaymentID: intent.ID, DeclineCode: "card_declined", RawDeclineCode: tc.raw,
			DeclineMessage: intent.LastPaymentError.Msg}
		if err != nil || result != want {
			t.Errorf("%s: authenticated = %+v, %v; want %+v", tc.name, result, err, want)
		}
		askedOnce(before, intent.ID)
	}

	// Without a return URL no redirect is asked for: the card is declined, and no page can decide it.
	result, err = c.Charge(ctx, providertest.Charge(t, provider.AuthenticateThenApprove, 2500))
	if want := (provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: "card_declined",
		RawDeclineCode: string(stripego.DeclineCodeAuthenticationRequired),
		DeclineMessage: "Your card was declined. This transaction requires authentication."}); err != nil || result != want || result.ProviderPaymentID == "" {
		t.Errorf("a card that asks for authentication, with no return_url = %+v, %v; want %+v", result, err, want)
	}
	requests = sent()
	noRedirects := stripeForm(&stripego.PaymentIntentParams{AutomaticPaymentMethods: &stripego.PaymentIntentAutomaticPaymentMethodsParams{
		Enabled: stripego.Bool(true), AllowRedirects: stripego.String(string(stripego.PaymentIntentAutomaticPaymentMethodsAllowRedirectsNever))}})
	if form := requests[len(requests)-1].Form; form.Has("return_url") ||
		form.Get("automatic_payment_methods[enabled]") != noRedirects.Get("automatic_payment_methods[enabled]") ||
		form.Get("automatic_payment_methods[allow_redirects]") != noRedirects.Get("automatic_payment_methods[allow_redirects]") {
		t.Errorf("the charge with no return URL sent %v, want no return_url and %v", form, noRedirects)
	}
	intent, err = sc.V1PaymentIntents.Retrieve(ctx, result.ProviderPaymentID, nil)
	if err != nil || intent.Status != stripego.PaymentIntentStatusRequiresAction || intent.NextAction == nil ||
		intent.NextAction.Type != stripego.PaymentIntentNextActionTypeUseStripeSDK || intent.NextAction.RedirectToURL != nil || intent.AmountReceived != 0 {
		t.Errorf("a payment intent asking for authentication with no return_url = %+v, %v; want next_action use_stripe_sdk", intent, err)
	}
	page := c.BaseURL + "/challenge/" + result.ProviderPaymentID
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, open := range []func() (*http.Response, error){
		func() (*http.Response, error) { return browser.Get(page) },
		func() (*http.Response, error) { return browser.PostForm(page, url.Values{"outcome": {"complete"}}) },
	} {
		if resp, err := open(); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("a challenge page for the payment intent with no return_url = %v, %v; want 404", resp, err)
		} else {
			resp.Body.Close()
		}
	}
	if still, err := c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: intent.Metadata["paygate_id"],
		ProviderPaymentID: intent.ID}); err != nil || still != result {
		t.Errorf("the payment intent with no return_url, once its page was tried = %+v, %v; want %+v", still, err, result)
	}
	badReturn := providertest.Charge(t, provider.AuthenticateThenApprove, 2500)
	badReturn.ReturnURL = "shop.example/paid"
	if result, err := c.Charge(ctx, badReturn); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a return_url that is no URL = %+v, %v; want refused", result, err)
	}

	// Stripe cancels a PaymentIntent that waits for the shopper: nothing was authorised.
	req, waiting = start(provider.AuthenticateThenApprove)
	if _, err := c.Cancel(ctx, provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID, Reason: "abandoned",
		IdempotencyKey: prefixid.New("can")}); err != nil {
		t.Fatalf("cancellation of a payment waiting for the shopper: %v", err)
	}
	result, err = c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID})
	if want := (provider.ChargeResult{ProviderPaymentID: waiting.ProviderPaymentID, Canceled: true, DeclineCode: "card_declined", RawDeclineCode: "canceled",
		DeclineMessage: "The payment was canceled before it was authorised."}); err != nil || result != want {
		t.Errorf("authenticated once canceled = %+v, %v; want %+v", result, err, want)
	}
	if resp, err := http.Get(waiting.RedirectURL); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("the page of a canceled payment intent = %v, %v; want 404", resp, err)
	} else {
		resp.Body.Close()
	}

	// The browser names another payment's intent.
	_, other := start(provider.AuthenticateThenApprove)
	if result, err := c.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: req.PaymentID,
		Returned: url.Values{"payment_intent": {other.ProviderPaymentID}}}); err == nil {
		t.Errorf("authenticated by another payment's intent = %+v, want an error", result)
	}
}

// TestAuthenticatedReads: Authenticated reads the PaymentIntent as Charge reads one, if it is the
// payment's; one of another payment, or an answer that cannot tell, is an error.
func TestAuthenticatedReads(t *testing.T) {
	intent := func(paygateID, status, rest string) string {
		return `{"id":"pi_1","object":"payment_intent","status":"` + status + `","metadata":{"paygate_id":"` + paygateID + `"}` + rest + `}`
	}
	for _, tc := range []struct {
		status int
		body   string
		want   provider.ChargeResult // zero: an error
	}{
		{http.StatusOK, intent("pay_1", "succeeded", ""), provider.ChargeResult{ProviderPaymentID: "pi_1", Approved: true}},
		{http.StatusOK, intent("pay_1", "requires_action", `,"next_action":{"type":"redirect_to_url","redirect_to_url":`+
			`{"url":"https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=pi_1","return_url":"https://shop.example/paid"}}`),
			provider.ChargeResult{ProviderPaymentID: "pi_1", RedirectURL: "https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=pi_1"}},
		{http.StatusOK, intent("pay_1", "requires_payment_method", `,"last_payment_error":{"type":"invalid_request_error",`+
			`"code":"payment_intent_authentication_failure","message":"The provided PaymentMethod has failed authentication."}`),
			provider.ChargeResult{ProviderPaymentID: "pi_1", DeclineCode: "card_declined", RawDeclineCode: "payment_intent_authentication_failure",
				DeclineMessage: "The provided PaymentMethod has failed authentication."}},
		{http.StatusOK, intent("pay_1", "processing", ""), provider.ChargeResult{}},
		{http.StatusOK, intent("pay_2", "succeeded", ""), provider.ChargeResult{}},
		{http.StatusOK, `{"id":"pi_1","object":"payment_intent","status":"succeeded"}`, provider.ChargeResult{}},
		{http.StatusOK, `not json`, provider.ChargeResult{}},
		{http.StatusNotFound, `{"error":{"type":"invalid_request_error","code":"resource_missing","param":"intent"}}`, provider.ChargeResult{}},
		{http.StatusServiceUnavailable, `{"error":{"type":"api_error"}}`, provider.ChargeResult{}},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
		result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: "pay_1", ProviderPaymentID: "pi_1"})
		if tc.want == (provider.ChargeResult{}) && err == nil || tc.want != (provider.ChargeResult{}) && (err != nil || result != tc.want) {
			t.Errorf("%d %s = %+v, %v; want %+v", tc.status, tc.body, result, err, tc.want)
		}
	}
	// No intent named, and none found yet: Stripe's search trails, so that cannot tell.
	url, caller := providertest.Canned(t, http.StatusOK, `{"object":"search_result","has_more":false,"data":[]}`)
	c := &Client{BaseURL: url, APIKey: "sk_test_x", Caller: caller}
	if result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: "pay_1"}); err == nil {
		t.Errorf("no intent named or found = %+v, want an error", result)
	}
}
