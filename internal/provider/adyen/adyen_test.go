package adyen

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	adyencheckout "github.com/adyen/adyen-go-api-library/v14/src/checkout"

	adyensandbox "github.com/paygate/paygate/internal/provider/adyen/sandbox"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func newClient(t *testing.T, db *database.DB, now func() time.Time) (*Client, *adyensandbox.Sandbox) {
	t.Helper()
	sandbox := Registration.NewSandbox(db.Ent, provider.Settings{webhookSecret: hmacKey}, now).(*adyensandbox.Sandbox)
	url, caller := providertest.Serve(t, sandbox)
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
			RefundsPending: true, NoLookup: true, Clock: clock, Settle: sandbox.Settle, TwinSettle: twinSandbox.Settle, Settlements: settlements})
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
