package provider

import (
	"errors"
	"fmt"

	"github.com/paygate/paygate/internal/money"
)

// Counting is how a provider counts amounts on the wire: in units of its own number of decimal
// places for each currency, which for a few currencies is not ISO 4217's minor unit that Paygate
// keeps. Sending Paygate's minor units as they are would charge a hundred times too little or too
// much.
type Counting struct {
	Provider string
	// Scales are the currencies whose decimal places at the provider differ from ISO 4217's.
	Scales map[string]int
	// ThreeDecimalsInTens says the provider takes three-decimal currencies only in whole hundredths
	// (the last digit 0), as the card networks settle them.
	ThreeDecimalsInTens bool
}

// Units returns the amount as the provider counts it. One it cannot take (a fraction finer than
// it counts the currency in) is ErrUnavailable: nothing was sent, and another provider may take it.
func (c Counting) Units(a money.Amount) (int64, error) {
	units, err := c.units(a)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return units, nil
}

// Check says why the provider cannot be sent the amount, or nil when it can.
func (c Counting) Check(a money.Amount) error {
	_, err := c.units(a)
	return err
}

func (c Counting) units(a money.Amount) (int64, error) {
	scale := c.scale(a.Currency)
	units, err := a.InUnits(scale)
	if err == nil && c.ThreeDecimalsInTens && scale == 3 && units%10 != 0 {
		err = money.ErrTooPrecise
	}
	if err != nil {
		return 0, fmt.Errorf("%s takes %s in %s only: %s %s cannot be sent to it", c.Provider, a.Currency, unitNames[c.precision(scale)], a, a.Currency)
	}
	return units, nil
}

// Counted is a provider that says how it counts amounts.
type Counted interface {
	Counting() Counting
}

// CheckAmount says why p cannot be sent the amount, or nil when it can.
func CheckAmount(p Provider, a money.Amount) error {
	if counted, ok := p.(Counted); ok {
		return counted.Counting().Check(a)
	}
	return nil
}

// Amount reads units of currency as the provider counts them.
func (c Counting) Amount(units int64, currency string) (money.Amount, error) {
	a, err := money.FromUnits(units, currency, c.scale(currency))
	if err != nil {
		return money.Amount{}, errors.Join(fmt.Errorf("%s amount %d %s", c.Provider, units, currency), err)
	}
	return a, nil
}

func (c Counting) scale(currency string) int {
	if scale, ok := c.Scales[currency]; ok {
		return scale
	}
	return money.Scale(currency)
}

var unitNames = []string{"whole units", "tenths", "hundredths", "thousandths"}

// precision is the exponent of the smallest amount the provider takes at scale.
func (c Counting) precision(scale int) int {
	if c.ThreeDecimalsInTens && scale == 3 {
		return 2
	}
	return scale
}
