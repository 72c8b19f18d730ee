package providertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

func TestMemoryHonoursTheTestCards(t *testing.T) {
	tests := map[string]string{
		"4242424242424242": "",
		"5555555555554444": "",
		"4000000000000002": "card_declined",
		"4000000000009995": "insufficient_funds",
		"4000000000000069": "expired_card",
	}
	for number, decline := range tests {
		c, err := card.Validate(card.Input{Number: number, ExpMonth: 12, ExpYear: 2030, CVC: "123"}, cardsValidAt)
		if err != nil {
			t.Fatal(err)
		}
		result, err := Memory{}.Charge(context.Background(), provider.ChargeRequest{PaymentID: "pay_1", Amount: money.Amount{Minor: 100, Currency: "USD"}, Card: c})
		if err != nil {
			t.Fatalf("%s: %v", number, err)
		}
		if result.Approved != (decline == "") || result.DeclineCode != decline || result.ProviderPaymentID == "" {
			t.Errorf("%s: %+v", number, result)
		}
	}
	c, _ := card.Validate(card.Input{Number: "4000000000000119", ExpMonth: 12, ExpYear: 2030, CVC: "123"}, cardsValidAt)
	if _, err := (Memory{}).Charge(context.Background(), provider.ChargeRequest{Card: c}); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("processing-error card: %v", err)
	}
}

// cardsValidAt is a time at which the test cards, expiring in 2030, are valid.
var cardsValidAt = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
