package providertest

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

// WireAmount is an amount and what the provider must be sent for it, or "" when the provider
// cannot take it and must be sent nothing.
type WireAmount struct {
	Amount money.Amount
	Sent   string
}

// CheckWireAmounts charges and refunds each amount through the adapter newClient makes against a
// server that records the amount of each request (read by amountOf) and refuses it, and checks the
// provider was sent what it counts: a charge and a refund of the same units, or, for an amount
// it cannot take, nothing, with provider.ErrUnavailable so that another provider may be tried.
func CheckWireAmounts(t *testing.T, amounts []WireAmount, newClient func(url string, caller provider.Caller) provider.Provider,
	amountOf func(r *http.Request) string) {
	t.Helper()
	var mu sync.Mutex
	var sent []string
	url, caller := Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		amount := amountOf(r)
		mu.Lock()
		sent = append(sent, amount)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest) // refused: sent once, never retried
		w.Write([]byte(`{}`))
	}))
	client := newClient(url, caller)
	for _, want := range amounts {
		mu.Lock()
		sent = nil
		mu.Unlock()
		charge := Charge(t, Approved, want.Amount.Minor)
		charge.Amount = want.Amount
		_, chargeErr := client.Charge(context.Background(), charge)
		_, refundErr := client.Refund(context.Background(), provider.RefundRequest{RefundID: "re_wire", ProviderPaymentID: "wire_1", Amount: want.Amount})
		mu.Lock()
		got := sent
		mu.Unlock()
		switch {
		case want.Sent == "" && (len(got) > 0 || !errors.Is(chargeErr, provider.ErrUnavailable) || !errors.Is(refundErr, provider.ErrUnavailable)):
			t.Errorf("%s %s: sent %q (%v, %v); want nothing sent, unavailable", want.Amount, want.Amount.Currency, got, chargeErr, refundErr)
		case want.Sent == "" && errors.Is(chargeErr, provider.ErrOutage):
			t.Errorf("%s %s: an amount the provider cannot take counts as its outage: %v", want.Amount, want.Amount.Currency, chargeErr)
		case want.Sent != "" && (len(got) != 2 || got[0] != want.Sent || got[1] != want.Sent):
			t.Errorf("%s %s: charge and refund sent %q; want %s each", want.Amount, want.Amount.Currency, got, want.Sent)
		}
	}
}
