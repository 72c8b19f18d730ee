package adyen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	adyencheckout "github.com/adyen/adyen-go-api-library/v14/src/checkout"

	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

// newClient is a client of a sandbox over db, served with its pages.
func newClient(t *testing.T, db *database.DB, now func() time.Time) (*Client, *adyensandbox.Sandbox) {
	t.Helper()
	var sandbox *adyensandbox.Sandbox
	url, caller := providertest.ServeSandbox(t, func(pages string) http.Handler {
		sandbox = Registration.NewSandbox(db.Ent, provider.Settings{webhookSecret: hmacKey}, now, pages).(*adyensandbox.Sandbox)
		return sandbox
	})
	return &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}, sandbox
}

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		clock, settlements := providertest.NewClock(), &providertest.Settlements{}
		c, sandbox := newClient(t, pools[0], clock.Now)
		unauthenticated := *c
		unauthenticated.APIKey = ""
		twin, twinSandbox := newClient(t, pools[1], clock.Now)
		sandbox.Settled, twinSandbox.Settled = settlements.Record, settlements.Record
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches, Twin: twin,
			RawDeclines:    map[string]string{providertest.Declined: "2", providertest.InsufficientFunds: "12", providertest.ExpiredCard: "6"},
			RefundsPending: true, NoLookup: true, Clock: clock, Settle: sandbox.Settle, TwinSettle: twinSandbox.Settle, Settlements: settlements,
			CapturesPending: true})
	})
}

func TestNoMerchantAccountChargesNothing(t *testing.T) {
	db := databasetest.SQLite(t)
	c, _ := newClient(t, db, time.Now)
	c.MerchantAccount = ""
	if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("no merchant account = %v", err)
	}
	if n := db.Ent.SandboxObject.Query().CountX(context.Background()); n != 0 {
		t.Errorf("%d payments made", n)
	}
}

// TestAnswersInFlight: a payment Adyen settles later, or a request still in progress, is no
// outage: another provider must not be tried.
func TestAnswersInFlight(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
	}{
		{http.StatusOK, `{"pspReference":"1234567890123456","resultCode":"Pending"}`},
		{http.StatusOK, `{"pspReference":"1234567890123456","resultCode":"Received"}`},
		{http.StatusUnprocessableEntity, `{"status":422,"errorCode":"704","message":"request already processed or in progress"}`},
		{http.StatusBadGateway, ``},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		c := &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}
		if _, err := c.Charge(context.Background(), providertest.Charge(t, providertest.Approved, 100)); !providertest.Unknown(err) {
			t.Errorf("%d %s = %v, want an unknown outcome", tc.status, tc.body, err)
		}
	}
}

// TestAmountsAreSentAsAdyenCountsThem: Adyen counts amounts in ISO 4217's minor units but for
// Chilean pesos and krónur, in hundredths, and escudos and rupiahs, whole, so an escudo or rupiah
// amount with cents cannot be sent to it.
func TestAmountsAreSentAsAdyenCountsThem(t *testing.T) {
	providertest.CheckWireAmounts(t, []providertest.WireAmount{
		{Amount: money.Amount{Minor: 1000, Currency: "EUR"}, Sent: "1000"},
		{Amount: money.Amount{Minor: 1005, Currency: "KWD"}, Sent: "1005"},
		{Amount: money.Amount{Minor: 1500, Currency: "CLP"}, Sent: "150000"},
		{Amount: money.Amount{Minor: 5, Currency: "ISK"}, Sent: "500"},
		{Amount: money.Amount{Minor: 2500, Currency: "CVE"}, Sent: "25"},
		{Amount: money.Amount{Minor: 1050, Currency: "CVE"}},
		{Amount: money.Amount{Minor: 1500000, Currency: "IDR"}, Sent: "15000"},
		{Amount: money.Amount{Minor: 50, Currency: "IDR"}},
	}, func(url string, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}
	}, func(r *http.Request) string {
		var body struct{ Amount struct{ Value json.Number } }
		json.NewDecoder(r.Body).Decode(&body)
		return body.Amount.Value.String()
	})
}

// TestHolderNameIsSent: the customer's name goes as the card's holderName, read here with
// Adyen's own library's CardDetails; a customer without a name sends none.
func TestHolderNameIsSent(t *testing.T) {
	var mu sync.Mutex
	var sent []adyencheckout.CardDetails
	url, caller := providertest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			PaymentMethod adyencheckout.CardDetails `json:"paymentMethod"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		sent = append(sent, body.PaymentMethod)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"pspReference":"1234567890123456","resultCode":"Authorised"}`))
	}))
	c := &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}
	named := providertest.Charge(t, providertest.Approved, 1000)
	named.HolderName = "Ann Example"
	for _, req := range []provider.ChargeRequest{named, providertest.Charge(t, providertest.Approved, 1000)} {
		if _, err := c.Charge(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0].GetHolderName() != "Ann Example" || sent[1].HolderName != nil || sent[0].GetNumber() != providertest.Approved {
		t.Errorf("payment methods sent: %+v", sent)
	}
}

// exchange is one request the adapter sent to the sandbox, and the sandbox's answer.
type exchange struct {
	Path, IdempotencyKey string
	Request, Answer      []byte
	Status               int
}

// recordedClient is a client of a sandbox over db that records every exchange with it.
func recordedClient(t *testing.T, db *database.DB) (*Client, func() []exchange) {
	t.Helper()
	var mu sync.Mutex
	var exchanges []exchange
	url, caller := providertest.ServeSandbox(t, func(pages string) http.Handler {
		sandbox := Registration.NewSandbox(db.Ent, provider.Settings{webhookSecret: hmacKey}, time.Now, pages)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Api-Key") == "" { // the shopper's browser on a page
				sandbox.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			answer := httptest.NewRecorder()
			sandbox.ServeHTTP(answer, r)
			mu.Lock()
			exchanges = append(exchanges, exchange{Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"), Request: body,
				Answer: answer.Body.Bytes(), Status: answer.Code})
			mu.Unlock()
			provider.WriteAnswer(w, answer.Code, answer.Body.Bytes())
		})
	})
	return &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}, func() []exchange {
		mu.Lock()
		defer mu.Unlock()
		return append([]exchange(nil), exchanges...)
	}
}

// TestCapturesAreAdyens: an authorisation asks for Adyen's manual capture, and its capture and
// cancellation are what Adyen's own library reads as PaymentCaptureRequest and
// PaymentCancelRequest, sent to the authorisation's endpoints under the request's key; the
// sandbox answers as the library's PaymentCaptureResponse and PaymentCancelResponse.
func TestCapturesAreAdyens(t *testing.T) {
	c, exchanges := recordedClient(t, databasetest.SQLite(t))
	ctx := context.Background()
	charge, held := providertest.Authorize(t, c, providertest.Approved, 5000)
	capture := provider.CaptureRequest{PaymentID: charge.PaymentID, ProviderPaymentID: held.ProviderPaymentID,
		Amount: money.Amount{Minor: 3000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")}
	if result, err := c.Capture(ctx, capture); err != nil || !result.Pending {
		t.Fatalf("capture = %+v, %v", result, err)
	}
	automatic := providertest.Charge(t, providertest.Approved, 1000)
	if _, err := c.Charge(ctx, automatic); err != nil {
		t.Fatal(err)
	}
	voided, voidedHeld := providertest.Authorize(t, c, providertest.Approved, 4000)
	cancel := provider.CancelRequest{PaymentID: voided.PaymentID, ProviderPaymentID: voidedHeld.ProviderPaymentID,
		Reason: "requested_by_customer", IdempotencyKey: prefixid.New("can")}
	if result, err := c.Cancel(ctx, cancel); err != nil || !result.Pending {
		t.Fatalf("cancellation = %+v, %v", result, err)
	}

	byKey := map[string]exchange{}
	for _, e := range exchanges() {
		byKey[e.IdempotencyKey] = e
	}
	for key, manual := range map[string]bool{charge.PaymentID: true, automatic.PaymentID: false, voided.PaymentID: true} {
		var sent adyencheckout.PaymentRequest
		if err := json.Unmarshal(byKey[key].Request, &sent); err != nil {
			t.Fatalf("payment %s: %v", key, err)
		}
		if asked := sent.GetAdditionalData()["manualCapture"] == "true"; asked != manual || (!manual && sent.AdditionalData != nil) {
			t.Errorf("payment %s sent additionalData %v, want manual capture %v", key, sent.GetAdditionalData(), manual)
		}
	}

	captured := byKey[capture.IdempotencyKey]
	var captureSent adyencheckout.PaymentCaptureRequest
	var captureAnswer adyencheckout.PaymentCaptureResponse
	if err := errors.Join(json.Unmarshal(captured.Request, &captureSent), json.Unmarshal(captured.Answer, &captureAnswer)); err != nil {
		t.Fatal(err)
	}
	if captured.Path != "/v71/payments/"+held.ProviderPaymentID+"/captures" || captureSent.MerchantAccount != "PaygateTest" ||
		captureSent.Amount != (adyencheckout.Amount{Currency: "EUR", Value: 3000}) || captureSent.GetReference() != charge.PaymentID {
		t.Errorf("capture sent to %s: %s", captured.Path, captured.Request)
	}
	if captured.Status != http.StatusCreated || captureAnswer.Status != "received" || captureAnswer.PaymentPspReference != held.ProviderPaymentID ||
		len(captureAnswer.PspReference) != 16 || captureAnswer.PspReference == held.ProviderPaymentID || captureAnswer.Amount != captureSent.Amount ||
		captureAnswer.MerchantAccount != "PaygateTest" || captureAnswer.GetReference() != charge.PaymentID {
		t.Errorf("capture answered %d %s", captured.Status, captured.Answer)
	}

	canceled := byKey[cancel.IdempotencyKey]
	var cancelSent adyencheckout.PaymentCancelRequest
	var cancelAnswer adyencheckout.PaymentCancelResponse
	if err := errors.Join(json.Unmarshal(canceled.Request, &cancelSent), json.Unmarshal(canceled.Answer, &cancelAnswer)); err != nil {
		t.Fatal(err)
	}
	if canceled.Path != "/v71/payments/"+voidedHeld.ProviderPaymentID+"/cancels" || cancelSent.MerchantAccount != "PaygateTest" ||
		cancelSent.GetReference() != voided.PaymentID {
		t.Errorf("cancellation sent to %s: %s", canceled.Path, canceled.Request)
	}
	if canceled.Status != http.StatusCreated || cancelAnswer.Status != "received" || cancelAnswer.PaymentPspReference != voidedHeld.ProviderPaymentID ||
		len(cancelAnswer.PspReference) != 16 || cancelAnswer.PspReference == voidedHeld.ProviderPaymentID ||
		cancelAnswer.MerchantAccount != "PaygateTest" || cancelAnswer.GetReference() != voided.PaymentID {
		t.Errorf("cancellation answered %d %s", canceled.Status, canceled.Answer)
	}
}

// TestCaptureAnswers: answers written by Adyen's own library are taken as pending; a validation
// refusal is refused, never an outage; a request still in progress, a 500 or an answer that is
// not "received" leaves the outcome unknown.
func TestCaptureAnswers(t *testing.T) {
	marshal := func(v any) string {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	captureAnswer := marshal(adyencheckout.NewPaymentCaptureResponse(adyencheckout.Amount{Currency: "EUR", Value: 1000}, "PaygateTest",
		"8535296650153317", "QJCMPCBRJRGXWD82", "received"))
	cancelAnswer := marshal(adyencheckout.NewPaymentCancelResponse("PaygateTest", "8535296650153317", "JDD6LKT8MBLZNN84", "received"))
	const (
		validation = `{"status":422,"errorCode":"137","message":"Invalid amount specified","errorType":"validation"}`
		inProgress = `{"status":422,"errorCode":"704","message":"request already processed or in progress","errorType":"validation"}`
		fault      = `{"status":500,"errorCode":"901","message":"Internal error","errorType":"internal"}`
	)
	capture := func(c *Client) (bool, error) {
		result, err := c.Capture(context.Background(), provider.CaptureRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: "8535296650153317",
			Amount: money.Amount{Minor: 1000, Currency: "EUR"}, IdempotencyKey: prefixid.New("cap")})
		return result.Pending, err
	}
	cancel := func(c *Client) (bool, error) {
		result, err := c.Cancel(context.Background(), provider.CancelRequest{PaymentID: prefixid.New("pay"), ProviderPaymentID: "8535296650153317",
			Reason: "duplicate", IdempotencyKey: prefixid.New("can")})
		return result.Pending, err
	}
	for _, tc := range []struct {
		name   string
		call   func(c *Client) (pending bool, err error)
		status int
		body   string
		want   string // taken, refused or unknown
	}{
		{"capture, the library's answer", capture, http.StatusCreated, captureAnswer, "taken"},
		{"cancellation, the library's answer", cancel, http.StatusCreated, cancelAnswer, "taken"},
		{"capture refused", capture, http.StatusUnprocessableEntity, validation, "refused"},
		{"cancellation refused", cancel, http.StatusUnprocessableEntity, validation, "refused"},
		{"capture in progress", capture, http.StatusUnprocessableEntity, inProgress, "unknown"},
		{"cancellation after a fault", cancel, http.StatusInternalServerError, fault, "unknown"},
		{"capture not received", capture, http.StatusCreated, strings.Replace(captureAnswer, `"received"`, `"pending"`, 1), "unknown"},
	} {
		url, caller := providertest.Canned(t, tc.status, tc.body)
		pending, err := tc.call(&Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller})
		var ok bool
		switch tc.want {
		case "taken":
			ok = err == nil && pending
		case "refused":
			ok = errors.Is(err, provider.ErrUnavailable) && !errors.Is(err, provider.ErrOutage)
		case "unknown":
			ok = providertest.Unknown(err)
		}
		if !ok {
			t.Errorf("%s = pending %v, %v; want %s", tc.name, pending, err, tc.want)
		}
	}
}
