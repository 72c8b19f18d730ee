package adyen

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	adyencheckout "github.com/adyen/adyen-go-api-library/v14/src/checkout"
	adyencommon "github.com/adyen/adyen-go-api-library/v14/src/common"
	adyenwebhook "github.com/adyen/adyen-go-api-library/v14/src/webhook"

	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

// waitingCharge charges number, which asks the shopper to authenticate, for 25.00 EUR with a
// return URL of its own query, and returns the request and the page to send the shopper to.
func waitingCharge(t *testing.T, c provider.Provider, number string, manual bool) (provider.ChargeRequest, provider.ChargeResult) {
	t.Helper()
	req := providertest.Charge(t, number, 2500)
	req.CaptureManually = manual
	req.ReturnURL = "https://shop.example/api/v1/payments/" + req.PaymentID + "/return?from=test"
	result, err := c.Charge(context.Background(), req)
	if err != nil || !result.AwaitsShopper() {
		t.Fatalf("charge of %s = %+v, %v; want the shopper redirected", number, result, err)
	}
	return req, result
}

// authenticated is what Adyen says of req's payment once its shopper came back to back.
func authenticated(t *testing.T, c *Client, req provider.ChargeRequest, back *url.URL) provider.ChargeResult {
	t.Helper()
	result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: req.PaymentID, Returned: back.Query()})
	if err != nil {
		t.Fatalf("asked once the shopper came back: %v", err)
	}
	return result
}

// TestAuthenticationIsAdyens: every payment with a return URL asks for 3-D Secure 2 by redirect as
// Adyen's own library reads a PaymentRequest (returnUrl, channel Web, browserInfo, nativeThreeDS
// disabled, redirects by GET); a card that asks for it is answered RedirectShopper with a redirect action
// and no pspReference; the shopper's return is asked about with /payments/details and its
// redirectResult, and answered as the library's PaymentDetailsResponse: Authorised, or Refused
// 11 "3D Not Authenticated" when the shopper failed.
func TestAuthenticationIsAdyens(t *testing.T) {
	c, exchanges := recordedClient(t, databasetest.SQLite(t))
	completed, waiting := waitingCharge(t, c, provider.AuthenticateThenApprove, false)
	back := providertest.Shopper(t, waiting.RedirectURL, "complete")
	if !strings.HasPrefix(back.String(), "https://shop.example/api/v1/payments/"+completed.PaymentID+"/return?") || back.Query().Get("from") != "test" {
		t.Errorf("the shopper was sent back to %s", back)
	}
	approved := authenticated(t, c, completed, back)
	if !approved.Approved || approved.AwaitsShopper() || approved.ProviderPaymentID == "" {
		t.Errorf("completed = %+v, want approved", approved)
	}
	failed, failedWaiting := waitingCharge(t, c, provider.AuthenticateThenApprove, false)
	refused := authenticated(t, c, failed, providertest.Shopper(t, failedWaiting.RedirectURL, "fail"))
	if want := (provider.ChargeResult{ProviderPaymentID: refused.ProviderPaymentID, DeclineCode: "card_declined", RawDeclineCode: "11",
		DeclineMessage: "3D Not Authenticated"}); refused != want || refused.ProviderPaymentID == "" {
		t.Errorf("failed = %+v, want %+v", refused, want)
	}

	var payments, details []exchange
	for _, e := range exchanges() {
		switch e.Path {
		case "/v71/payments":
			payments = append(payments, e)
		case "/v71/payments/details":
			details = append(details, e)
		}
	}
	if len(payments) != 2 || len(details) != 2 {
		t.Fatalf("%d payments and %d details sent, want 2 of each", len(payments), len(details))
	}
	var sent adyencheckout.PaymentRequest
	var answered adyencheckout.PaymentResponse
	if err := errors.Join(json.Unmarshal(payments[0].Request, &sent), json.Unmarshal(payments[0].Answer, &answered)); err != nil {
		t.Fatal(err)
	}
	browser := sent.GetBrowserInfo()
	if sent.ReturnUrl != completed.ReturnURL || sent.GetChannel() != "Web" || browser.UserAgent == "" || browser.AcceptHeader == "" ||
		browser.Language == "" || browser.ColorDepth == 0 || browser.ScreenWidth == 0 || browser.ScreenHeight == 0 ||
		sent.GetAuthenticationData().ThreeDSRequestData.GetNativeThreeDS() != "disabled" ||
		sent.GetRedirectToIssuerMethod() != "GET" || sent.GetRedirectFromIssuerMethod() != "GET" {
		t.Errorf("payment sent: %s", payments[0].Request)
	}
	redirect := answered.GetAction().CheckoutRedirectAction
	if answered.GetResultCode() != "RedirectShopper" || answered.PspReference != nil || redirect == nil || redirect.Type != "redirect" ||
		redirect.GetPaymentMethodType() != "scheme" || redirect.GetMethod() != "GET" || redirect.GetUrl() != waiting.RedirectURL {
		t.Errorf("payment answered: %s", payments[0].Answer)
	}

	for i, want := range []struct {
		req                                provider.ChargeRequest
		back                               string
		result                             provider.ChargeResult
		resultCode, reasonCode, reasonText string
	}{
		{completed, back.Query().Get("redirectResult"), approved, "Authorised", "", ""},
		{failed, "", refused, "Refused", "11", "3D Not Authenticated"},
	} {
		var asked adyencheckout.PaymentDetailsRequest
		var told adyencheckout.PaymentDetailsResponse
		if err := errors.Join(json.Unmarshal(details[i].Request, &asked), json.Unmarshal(details[i].Answer, &told)); err != nil {
			t.Fatal(err)
		}
		if asked.Details.GetRedirectResult() == "" || (want.back != "" && asked.Details.GetRedirectResult() != want.back) ||
			len(details[i].IdempotencyKey) > 64 || !strings.HasPrefix(details[i].IdempotencyKey, want.req.PaymentID) {
			t.Errorf("details sent under %q: %s", details[i].IdempotencyKey, details[i].Request)
		}
		if told.GetResultCode() != want.resultCode || told.GetMerchantReference() != want.req.PaymentID || told.GetPspReference() != want.result.ProviderPaymentID ||
			told.GetRefusalReasonCode() != want.reasonCode || told.GetRefusalReason() != want.reasonText ||
			told.GetAmount() != (adyencheckout.Amount{Currency: "EUR", Value: 2500}) {
			t.Errorf("details answered: %s", details[i].Answer)
		}
	}
}

// TestAuthenticationNotAsked: a payment without a return URL sends nothing of 3-D Secure, as
// Adyen's own library reads the PaymentRequest; a card whose issuer wants it is then Refused,
// reason 38 (Authentication required), named by its pspReference, and declined, never failed
// over; a card that needs none is authorised.
func TestAuthenticationNotAsked(t *testing.T) {
	c, exchanges := recordedClient(t, databasetest.SQLite(t))
	ctx := context.Background()
	result, err := c.Charge(ctx, providertest.Charge(t, provider.AuthenticateThenApprove, 2500))
	if want := (provider.ChargeResult{ProviderPaymentID: result.ProviderPaymentID, DeclineCode: "card_declined", RawDeclineCode: "38",
		DeclineMessage: "Authentication required"}); err != nil || result != want || result.ProviderPaymentID == "" {
		t.Errorf("a card that asks for authentication, without a return URL = %+v, %v; want %+v", result, err, want)
	}
	if approved, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 2500)); err != nil || !approved.Approved {
		t.Errorf("a card that needs no authentication, without a return URL = %+v, %v", approved, err)
	}
	sent := exchanges()
	if len(sent) != 2 {
		t.Fatalf("%d exchanges, want 2 payments", len(sent))
	}
	for _, e := range sent {
		var request adyencheckout.PaymentRequest
		var fields map[string]json.RawMessage
		if err := errors.Join(json.Unmarshal(e.Request, &request), json.Unmarshal(e.Request, &fields)); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"returnUrl", "channel", "browserInfo", "authenticationData", "redirectToIssuerMethod", "redirectFromIssuerMethod"} {
			if _, sent := fields[field]; sent {
				t.Errorf("a payment without a return URL sent %s: %s", field, e.Request)
			}
		}
		if request.ReturnUrl != "" || request.Channel != nil || request.BrowserInfo != nil || request.AuthenticationData != nil {
			t.Errorf("Adyen's library reads 3-D Secure in %s", e.Request)
		}
	}
	var answered adyencheckout.PaymentResponse
	if err := json.Unmarshal(sent[0].Answer, &answered); err != nil {
		t.Fatal(err)
	}
	if sent[0].Status != http.StatusOK || answered.GetResultCode() != "Refused" || answered.GetRefusalReasonCode() != "38" ||
		answered.GetRefusalReason() != "Authentication required" || answered.GetPspReference() != result.ProviderPaymentID || answered.Action != nil {
		t.Errorf("payment answered %d %s", sent[0].Status, sent[0].Answer)
	}
}

// TestRedirectsAreForged: a redirectResult naming a decided payment with another secret, or
// nothing the sandbox made, is refused; so is a challenge page's address with another secret.
func TestRedirectsAreForged(t *testing.T) {
	c, _ := newClient(t, databasetest.SQLite(t), time.Now)
	req, waiting := waitingCharge(t, c, provider.AuthenticateThenApprove, false)
	forged := forge(t, waiting.RedirectURL[strings.LastIndex(waiting.RedirectURL, "/")+1:])
	if resp, err := http.Get(waiting.RedirectURL[:strings.LastIndex(waiting.RedirectURL, "/")+1] + forged); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a challenge page's address with another secret = %v, %v; want 404", resp, err)
	} else {
		resp.Body.Close()
	}
	back := providertest.Shopper(t, waiting.RedirectURL, "complete")
	for _, redirectResult := range []string{forge(t, back.Query().Get("redirectResult")), "Ab02b4c0!BQABAgCW5sxB4e"} {
		if result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: req.PaymentID,
			Returned: url.Values{"redirectResult": {redirectResult}}}); err == nil {
			t.Errorf("asked with the redirectResult %s = %+v, want an error", redirectResult, result)
		}
	}
	if result := authenticated(t, c, req, back); !result.Approved {
		t.Errorf("asked with the redirectResult made = %+v", result)
	}
}

// forge is the sandbox's opaque token with the last digit of its secret changed.
func forge(t *testing.T, token string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	if last := len(raw) - 1; raw[last] == '0' {
		raw[last] = '1'
	} else {
		raw[last] = '0'
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// TestRedirectAnswers: Adyen's RedirectShopper, written by its own library, with or without a
// pspReference, sends the shopper to the action's url; a redirect by POST is declined, never failed
// over (Adyen holds nothing until the shopper authenticates, and Paygate can only send a browser
// to a URL), and one without a url leaves the outcome unknown.
func TestRedirectAnswers(t *testing.T) {
	const page = "https://checkoutshopper-test.adyen.com/checkoutshopper/threeDS/redirect?MD=M2RzMi4wLjI"
	answer := func(pspReference *string, method string, data *map[string]string, url *string) string {
		body, err := json.Marshal(adyencheckout.PaymentResponse{ResultCode: adyencommon.PtrString("RedirectShopper"), PspReference: pspReference,
			Action: &adyencheckout.PaymentResponseAction{CheckoutRedirectAction: &adyencheckout.CheckoutRedirectAction{Type: "redirect",
				PaymentMethodType: adyencommon.PtrString("scheme"), Method: &method, Data: data, Url: url}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	for _, tc := range []struct {
		name, body string
		want       provider.ChargeResult
		declined   bool
	}{
		{"with a pspReference", answer(adyencommon.PtrString("8535296650153317"), "GET", nil, adyencommon.PtrString(page)),
			provider.ChargeResult{ProviderPaymentID: "8535296650153317", RedirectURL: page}, false},
		{"without", answer(nil, "GET", nil, adyencommon.PtrString(page)), provider.ChargeResult{RedirectURL: page}, false},
		{"by POST", answer(nil, "POST", &map[string]string{"PaReq": "eNpVUttu", "MD": "M2RzMi4w", "TermUrl": "https://shop.example/"},
			adyencommon.PtrString("https://acs.example/challenge")), provider.ChargeResult{}, true},
		{"without a url", answer(nil, "GET", nil, nil), provider.ChargeResult{}, false},
	} {
		url, caller := providertest.Canned(t, http.StatusOK, tc.body)
		c := &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}
		result, err := c.Charge(context.Background(), providertest.Charge(t, provider.AuthenticateThenApprove, 1000))
		switch {
		case tc.want.RedirectURL != "" && (err != nil || result != tc.want):
			t.Errorf("%s = %+v, %v; want %+v", tc.name, result, err, tc.want)
		case tc.declined && (err != nil || result.Approved || result.AwaitsShopper() || result.DeclineCode != "card_declined" || result.RawDeclineCode != "RedirectShopper POST"):
			t.Errorf("%s = %+v, %v; want declined", tc.name, result, err)
		case tc.want.RedirectURL == "" && !tc.declined && !providertest.Unknown(err):
			t.Errorf("%s = %+v, %v; want an unknown outcome", tc.name, result, err)
		}
	}
}

// TestAuthenticatedAnswers: Adyen's answers to /payments/details, written by its own library, are
// read as Charge reads a payment's; an answer about another payment, or not 200, is an error; and
// without a redirectResult Adyen is not asked.
func TestAuthenticatedAnswers(t *testing.T) {
	paymentID := prefixid.New("pay")
	answer := func(resultCode, merchantReference, reasonCode, reason string) string {
		told := adyencheckout.PaymentDetailsResponse{ResultCode: &resultCode, MerchantReference: &merchantReference,
			PspReference: adyencommon.PtrString("8535296650153317"), Amount: &adyencheckout.Amount{Currency: "EUR", Value: 1000}}
		if reasonCode != "" {
			told.RefusalReasonCode, told.RefusalReason = &reasonCode, &reason
		}
		body, err := json.Marshal(told)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	returned := url.Values{"redirectResult": {"X6XtfGC3!Y"}}
	for _, tc := range []struct {
		name              string
		status            int
		body              string
		providerPaymentID string
		returned          url.Values
		want              *provider.ChargeResult // nil: an error
	}{
		{"authorised", http.StatusOK, answer("Authorised", paymentID, "", ""), "", returned,
			&provider.ChargeResult{ProviderPaymentID: "8535296650153317", Approved: true}},
		{"not authenticated", http.StatusOK, answer("Refused", paymentID, "11", "3D Not Authenticated"), "8535296650153317", returned,
			&provider.ChargeResult{ProviderPaymentID: "8535296650153317", DeclineCode: "card_declined", RawDeclineCode: "11", DeclineMessage: "3D Not Authenticated"}},
		{"not enough balance", http.StatusOK, answer("Refused", paymentID, "12", "Not enough balance"), "", returned,
			&provider.ChargeResult{ProviderPaymentID: "8535296650153317", DeclineCode: "insufficient_funds", RawDeclineCode: "12", DeclineMessage: "Not enough balance"}},
		{"another payment's", http.StatusOK, answer("Authorised", prefixid.New("pay"), "", ""), "", returned, nil},
		{"another pspReference", http.StatusOK, answer("Authorised", paymentID, "", ""), "4816178017011234", returned, nil},
		{"pending", http.StatusOK, answer("Pending", paymentID, "", ""), "", returned, nil},
		{"refused", http.StatusUnprocessableEntity, `{"status":422,"errorCode":"000","message":"Invalid redirectResult","errorType":"validation"}`, "", returned, nil},
		{"no redirectResult", http.StatusOK, answer("Authorised", paymentID, "", ""), "", url.Values{"payload": {"Ab02b4c0"}}, nil},
	} {
		var asked atomic.Int32
		url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Add(1)
			provider.WriteAnswer(w, tc.status, []byte(tc.body))
		}))
		c := &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}
		result, err := c.Authenticated(context.Background(), provider.AuthenticationRequest{PaymentID: paymentID,
			ProviderPaymentID: tc.providerPaymentID, Returned: tc.returned})
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%s = %+v, want an error", tc.name, result)
		case tc.want != nil && (err != nil || result != *tc.want):
			t.Errorf("%s = %+v, %v; want %+v", tc.name, result, err, *tc.want)
		case tc.returned.Get("redirectResult") == "" && asked.Load() != 0:
			t.Errorf("%s: Adyen was asked", tc.name)
		}
	}
}

// TestAuthenticationWebhooks: a payment is notified once decided on its challenge page, not when
// it redirects the shopper, or at once when refused for want of the authentication it did not ask
// for, by AUTHORISATION (success true, or false with the refusal reason),
// which Adyen's library reads and the inbox reads into the payment's success or failure, so that
// it is settled though the shopper never comes back to Paygate.
func TestAuthenticationWebhooks(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		sandbox, c, receiver := webhookSandbox(t, db)
		want := map[string]provider.Notification{}
		for _, tc := range []struct {
			number, outcome string
			succeeded       bool
			reason          string
		}{
			{provider.AuthenticateThenApprove, "complete", true, ""},
			{provider.AuthenticateThenApprove, "fail", false, "3D Not Authenticated"},
			{provider.AuthenticateThenDecline, "complete", false, "Refused"},
		} {
			req, waiting := waitingCharge(t, c, tc.number, false)
			back := providertest.Shopper(t, waiting.RedirectURL, tc.outcome)
			// Asked afterwards only to learn the pspReference, which the notification names.
			decided := authenticated(t, c, req, back)
			n := provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: req.PaymentID, ProviderPaymentID: decided.ProviderPaymentID}
			if !tc.succeeded {
				n.Kind, n.Decline = provider.ChargeFailed, provider.ChargeResult{ProviderPaymentID: decided.ProviderPaymentID,
					DeclineCode: "card_declined", RawDeclineCode: tc.reason, DeclineMessage: tc.reason}
			}
			want[decided.ProviderPaymentID] = n
		}
		waitingCharge(t, c, provider.AuthenticateThenApprove, false) // never decided: nothing to notify
		// Not asked for: refused at once, and notified so.
		notAsked := providertest.Charge(t, provider.AuthenticateThenApprove, 2500)
		refused, err := c.Charge(context.Background(), notAsked)
		if err != nil {
			t.Fatal(err)
		}
		want[refused.ProviderPaymentID] = provider.Notification{Kind: provider.ChargeFailed, PaymentID: notAsked.PaymentID,
			ProviderPaymentID: refused.ProviderPaymentID, Decline: provider.ChargeResult{ProviderPaymentID: refused.ProviderPaymentID,
				DeclineCode: "card_declined", RawDeclineCode: "Authentication required", DeclineMessage: "Authentication required"}}
		sandbox.WaitForWebhooks()

		bodies := receiver.Verified(t)
		if len(bodies) != len(want) {
			t.Fatalf("%d notifications, want one for each of the %d payments decided", len(bodies), len(want))
		}
		for _, body := range bodies {
			if webhook, err := adyenwebhook.HandleRequest(string(body)); err != nil || len(webhook.GetNotificationItems()) != 1 {
				t.Errorf("Adyen's library read %s: %+v, %v", body, webhook, err)
			}
			events, err := verifyAsInbox(body, hmacKey)
			if err != nil || len(events) != 1 || events[0].Type != "AUTHORISATION" {
				t.Fatalf("the inbox took %s: %+v, %v", body, events, err)
			}
			got, err := ReadNotification(events[0].Type, events[0].Payload)
			if w := want[got.ProviderPaymentID]; err != nil || !reflect.DeepEqual(got, w) {
				t.Errorf("read\n%+v, %v; want\n%+v", got, err, w)
			}
		}
	})
}

// TestChallengeDecidedOnce: the challenge page submitted many times at once, through two servers
// over one database, decides the payment once: one submission is sent back with a redirectResult,
// the others find no challenge, and one AUTHORISATION is sent.
func TestChallengeDecidedOnce(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		receiver := providertest.NewWebhookReceiver(t, verify)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		var servers []string
		var sandboxes []*adyensandbox.Sandbox
		var clients []*Client
		for _, db := range pools {
			client, sandbox := newClient(t, db, time.Now)
			if err := sandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: receiver.URL, After: providertest.NoWait}); err != nil {
				t.Fatal(err)
			}
			servers, sandboxes, clients = append(servers, client.BaseURL), append(sandboxes, sandbox), append(clients, client)
		}
		_, waiting := waitingCharge(t, clients[0], provider.AuthenticateThenApprove, false)
		path := strings.TrimPrefix(waiting.RedirectURL, servers[0])
		browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				resp, err := browser.PostForm(servers[i%len(servers)]+path, url.Values{"outcome": {"complete"}})
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		counts := map[int]int{}
		for _, status := range statuses {
			counts[status]++
		}
		if counts[http.StatusSeeOther] != 1 || counts[http.StatusNotFound] != n-1 {
			t.Errorf("submissions answered %v, want one 303 and %d 404", counts, n-1)
		}
		for _, sandbox := range sandboxes {
			sandbox.WaitForWebhooks()
		}
		if bodies := receiver.Verified(t); len(bodies) != 1 {
			t.Errorf("%d notifications, want one AUTHORISATION", len(bodies))
		}
	})
}

// TestCancelWhileAwaitingShopper: a payment awaiting the shopper has no pspReference, and Adyen
// no cancellation for it: Cancel says there is nothing to cancel yet without asking, and the
// shopper can still complete it.
func TestCancelWhileAwaitingShopper(t *testing.T) {
	c, exchanges := recordedClient(t, databasetest.SQLite(t))
	req, waiting := waitingCharge(t, c, provider.AuthenticateThenApprove, true)
	before := len(exchanges())
	if _, err := c.Cancel(context.Background(), provider.CancelRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID,
		Reason: "abandoned", IdempotencyKey: prefixid.New("can")}); !errors.Is(err, provider.ErrNothingToCancel) || errors.Is(err, provider.ErrOutage) {
		t.Errorf("cancellation of a payment awaiting the shopper = %v, want nothing to cancel", err)
	}
	if asked := exchanges()[before:]; len(asked) != 0 {
		t.Errorf("the cancellation of a payment awaiting the shopper sent %+v", asked)
	}
	if result := authenticated(t, c, req, providertest.Shopper(t, waiting.RedirectURL, "complete")); !result.Approved {
		t.Errorf("completed after the cancellation was refused = %+v", result)
	}
}
