package adyen

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func newClient(t *testing.T, db *database.DB) (*Client, *Sandbox) {
	t.Helper()
	sandbox := NewSandbox(db.Ent, time.Now)
	url, caller := providertest.Serve(t, sandbox)
	return &Client{BaseURL: url, APIKey: "AQE_test", MerchantAccount: "PaygateTest", Caller: caller}, sandbox
}

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		c, sandbox := newClient(t, pools[0])
		unauthenticated := *c
		unauthenticated.APIKey = ""
		twin, _ := newClient(t, pools[1])
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches, Twin: twin,
			RawDeclines:    map[string]string{providertest.Declined: "2", providertest.InsufficientFunds: "12", providertest.ExpiredCard: "6"},
			RefundsPending: true})
	})
}

func TestNoMerchantAccountChargesNothing(t *testing.T) {
	db := databasetest.SQLite(t)
	c, _ := newClient(t, db)
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
