package checkout

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

func newClient(t *testing.T) (*Client, *Sandbox) {
	t.Helper()
	sandbox := NewSandbox()
	server := httptest.NewServer(sandbox)
	t.Cleanup(server.Close)
	return &Client{BaseURL: server.URL, SecretKey: "sk_sbox_x", Caller: provider.Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}}, sandbox
}

func chargeOf(t *testing.T, number string, minor int64) provider.ChargeRequest {
	t.Helper()
	c, err := card.Validate(card.Input{Number: number, ExpMonth: 12, ExpYear: time.Now().Year() + 4, CVC: "123"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return provider.ChargeRequest{PaymentID: prefixid.New("pay"), Amount: money.Amount{Minor: minor, Currency: "EUR"}, Card: c}
}

func TestChargeOutcomes(t *testing.T) {
	c, _ := newClient(t)
	for _, tc := range []struct{ number, decline, raw string }{
		{"4242424242424242", "", ""},
		{"4000000000000002", "card_declined", "20005"},
		{"4000000000009995", "insufficient_funds", "20051"},
		{"4000000000000069", "expired_card", "20054"},
	} {
		result, err := c.Charge(context.Background(), chargeOf(t, tc.number, 4999))
		if err != nil || result.Approved != (tc.decline == "") || result.DeclineCode != tc.decline || result.RawDeclineCode != tc.raw ||
			!strings.HasPrefix(result.ProviderPaymentID, "pay_") {
			t.Errorf("%s: %+v, %v", tc.number, result, err)
		}
	}
	if _, err := c.Charge(context.Background(), chargeOf(t, "4000000000000119", 4999)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("an acquirer failure = %v, want an outage", err)
	}
}

func TestChargeAndRefundAreIdempotent(t *testing.T) {
	c, sandbox := newClient(t)
	req := chargeOf(t, "4242424242424242", 1000)
	first, err := c.Charge(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := c.Charge(context.Background(), req); err != nil || again != first || len(sandbox.payments) != 1 {
		t.Errorf("retried charge = %+v, %v; %d payments", again, err, len(sandbox.payments))
	}
	req.Amount.Minor = 2000
	if _, err := c.Charge(context.Background(), req); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a key reused with another amount = %v", err)
	}

	refund := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: first.ProviderPaymentID, Amount: money.Amount{Minor: 600, Currency: "EUR"}}
	taken, err := c.Refund(context.Background(), refund)
	if err != nil || !taken.Pending || !strings.HasPrefix(taken.ProviderRefundID, "act_") {
		t.Fatalf("refund = %+v, %v; want taken for later", taken, err)
	}
	if again, err := c.Refund(context.Background(), refund); err != nil || again != taken {
		t.Errorf("retried refund = %+v, %v", again, err)
	}
	over := provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: first.ProviderPaymentID, Amount: money.Amount{Minor: 500, Currency: "EUR"}}
	if _, err := c.Refund(context.Background(), over); !errors.Is(err, provider.ErrUnavailable) || sandbox.refunded[first.ProviderPaymentID] != 600 {
		t.Errorf("refund over what is left = %v; refunded %d", err, sandbox.refunded[first.ProviderPaymentID])
	}
}

func TestFailures(t *testing.T) {
	c, sandbox := newClient(t)
	sandbox.Outage.Store(true)
	if _, err := c.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a 500 = %v", err)
	}
	sandbox.Outage.Store(false)

	noKey := *c
	noKey.SecretKey = ""
	if _, err := noKey.Charge(context.Background(), chargeOf(t, "4242424242424242", 1000)); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("no secret key = %v", err)
	}

	if len(sandbox.payments) != 0 {
		t.Errorf("%d payments made by refused requests", len(sandbox.payments))
	}

	sandbox.Latency.Store(int64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Charge(ctx, chargeOf(t, "4242424242424242", 1000)); err == nil || errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("a timeout = %v, want an unknown outcome", err)
	}
}
