package metrics

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/settings"
)

// failing is a provider that answers every charge with err, or approves when err is nil.
type failing struct {
	providertest.Memory
	name string
	err  *error
}

func (f failing) Name() string { return f.name }

func (f failing) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	if *f.err != nil {
		return provider.ChargeResult{}, *f.err
	}
	return f.Memory.Charge(ctx, req)
}

// TestProviderStatusFromTheRoutersCalls: the figures come from the calls the router makes:
// counts, success rate, latency percentiles, the last error, and the circuit.
func TestProviderStatusFromTheRoutersCalls(t *testing.T) {
	clock := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	names := []string{"stripe", "adyen", "checkout"}
	var stripeErr, none error
	r := routing.NewRouter([]provider.Provider{failing{name: "stripe", err: &stripeErr}, failing{name: "adyen", err: &none}, failing{name: "checkout", err: &none}},
		func() settings.Document { return settings.Default(names, nil) }, now)
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := New(db, r, now)
	r.Observe = m.ProviderCall

	for i := range 100 {
		r.ObserveRefund("adyen", nil, time.Duration(i+1)*time.Millisecond)
	}
	stripeErr = fmt.Errorf("%w (%w): answered 503", provider.ErrUnavailable, provider.ErrOutage)
	req := provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}}
	for range 10 { // USD goes to stripe first, then fails over to adyen
		r.Charge(context.Background(), r.Plan(routing.Payment{Amount: req.Amount}), req, func(string) error { return nil })
	}
	status := map[string]ProviderStatus{}
	for _, s := range m.ProviderStatus() {
		status[s.Provider] = s
	}
	// 100 refunds of 1 to 100 ms and 10 charges taking no time on the stopped clock.
	if s := status["adyen"]; s.Requests != 110 || *s.SuccessRate != 1 || *s.P50MS != 45 || *s.P99MS != 99 || s.LastError != nil || s.Circuit != routing.Closed {
		t.Errorf("adyen: %+v", s)
	}
	if s := status["stripe"]; s.Requests != 10 || *s.SuccessRate != 0 || s.LastError == nil || *s.LastErrorAt != clock || s.Circuit != routing.Open {
		t.Errorf("stripe: %+v", s)
	}
	if s := status["checkout"]; s.Requests != 0 || s.SuccessRate != nil || s.P50MS != nil || !s.Enabled {
		t.Errorf("checkout: %+v", s)
	}
}
