package checkout

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		sandbox := NewSandbox(pools[0].Ent, time.Now)
		url, caller := providertest.Serve(t, sandbox)
		c := &Client{BaseURL: url, SecretKey: "sk_sbox_x", Caller: caller}
		unauthenticated := *c
		unauthenticated.SecretKey = ""
		twinURL, twinCaller := providertest.Serve(t, NewSandbox(pools[1].Ent, time.Now))
		providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
			Twin:           &Client{BaseURL: twinURL, SecretKey: "sk_sbox_x", Caller: twinCaller},
			RawDeclines:    map[string]string{providertest.Declined: "20005", providertest.InsufficientFunds: "20051", providertest.ExpiredCard: "20054"},
			RefundsPending: true})
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
