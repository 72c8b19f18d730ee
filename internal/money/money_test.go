package money

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseAndFormat(t *testing.T) {
	tests := []struct {
		text, currency string
		minor          int64
		formatted      string
		err            error
	}{
		{"49.99", "USD", 4999, "49.99", nil},
		{"49.9", "USD", 4990, "49.90", nil},
		{"0.01", "USD", 1, "0.01", nil},
		{"1000", "USD", 100000, "1000.00", nil},
		{"49.990", "USD", 4999, "49.99", nil},
		{"007.50", "EUR", 750, "7.50", nil},
		{"100", "JPY", 100, "100", nil},
		{"100.0", "JPY", 100, "100", nil},
		{"1.234", "KWD", 1234, "1.234", nil},
		{"0.001", "KWD", 1, "0.001", nil},
		{"12", "KWD", 12000, "12.000", nil},
		{"1.01", "COP", 101, "1.01", nil},
		{"0.125", "IQD", 125, "0.125", nil},
		{"-5.00", "USD", -500, "-5.00", nil},
		{"49.999", "USD", 0, "", ErrTooPrecise},
		{"100.5", "JPY", 0, "", ErrTooPrecise},
		{"1.2345", "KWD", 0, "", ErrTooPrecise},
		{"1e3", "USD", 0, "", ErrSyntax},
		{"", "USD", 0, "", ErrSyntax},
		{"1.", "USD", 0, "", ErrSyntax},
		{".5", "USD", 0, "", ErrSyntax},
		{"+5", "USD", 0, "", ErrSyntax},
		{"5,00", "USD", 0, "", ErrSyntax},
		{" 5", "USD", 0, "", ErrSyntax},
		{"NaN", "USD", 0, "", ErrSyntax},
		{"9999999999999999", "USD", 0, "", ErrTooLarge},
		{"99999999999999999999999", "JPY", 0, "", ErrTooLarge},
		{"10." + strings.Repeat("0", MaxText-3), "USD", 1000, "10.00", nil},
		{"10." + strings.Repeat("0", MaxText-2), "USD", 0, "", ErrTooLong},
	}
	for _, tt := range tests {
		got, err := Parse(tt.text, tt.currency)
		if !errors.Is(err, tt.err) {
			t.Errorf("Parse(%q, %s) error = %v, want %v", tt.text, tt.currency, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if got.Minor != tt.minor || got.Currency != tt.currency {
			t.Errorf("Parse(%q, %s) = %+v, want %d", tt.text, tt.currency, got, tt.minor)
		}
		if s := got.String(); s != tt.formatted {
			t.Errorf("Parse(%q, %s).String() = %q, want %q", tt.text, tt.currency, s, tt.formatted)
		}
	}
}

func TestParseCurrency(t *testing.T) {
	for _, code := range []string{"usd", "USD", "Eur", "jpy", "KWD", "chf"} {
		if _, err := ParseCurrency(code); err != nil {
			t.Errorf("ParseCurrency(%q) = %v, want ok", code, err)
		}
	}
	for _, code := range []string{"", "US", "USDX", "ABC", "XXX", "XTS", "XAU", "12$"} {
		if _, err := ParseCurrency(code); !errors.Is(err, ErrUnknownCurrency) {
			t.Errorf("ParseCurrency(%q) = %v, want ErrUnknownCurrency", code, err)
		}
	}
	if got, _ := ParseCurrency("usd"); got != "USD" {
		t.Errorf("ParseCurrency(usd) = %q, want USD", got)
	}
	// ISO 4217 exponents, including the currencies where CLDR's display rounding differs.
	iso := map[string]int{
		"USD": 2, "EUR": 2, "JPY": 0, "KWD": 3, "BHD": 3, "IQD": 3, "COP": 2, "IDR": 2, "PKR": 2,
		"HUF": 2, "ISK": 0, "CLP": 0, "VND": 0, "XOF": 0, "TND": 3, "UGX": 0, "KRW": 0,
	}
	for code, scale := range iso {
		if got := Scale(code); got != scale {
			t.Errorf("Scale(%s) = %d, want %d", code, got, scale)
		}
	}
}

func TestExceedsMajor(t *testing.T) {
	const limit = 99999999 // 999999.99
	tests := []struct {
		amount Amount
		want   bool
	}{
		{Amount{99999999, "USD"}, false},
		{Amount{100000000, "USD"}, true},
		{Amount{999999, "JPY"}, false},
		{Amount{1000000, "JPY"}, true},
		{Amount{999999990, "KWD"}, false},
		{Amount{999999991, "KWD"}, true},
	}
	for _, tt := range tests {
		if got := tt.amount.ExceedsMajor(limit); got != tt.want {
			t.Errorf("%+v.ExceedsMajor = %v, want %v", tt.amount, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"49.99", "0.001", "1e3", "-0", "99999999999999.99"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, code := range []string{"USD", "JPY", "KWD"} {
			amount, err := Parse(text, code)
			if err != nil {
				continue
			}
			again, err := Parse(amount.String(), code)
			if err != nil || again != amount {
				t.Fatalf("%q in %s: formatted %q parses back to %+v, %v", text, code, amount.String(), again, err)
			}
		}
	})
}

func TestDecimalNormalized(t *testing.T) {
	for text, want := range map[Decimal]string{
		"12.00": "12", "012.50": "12.5", "0.50": "0.5", "0": "0", "000": "0", "0.000": "0", "-1.10": "-1.1",
		"12": "12", "1e3": "1e3", "1.": "1.", ".5": ".5", "": "", "abc": "abc", "--1": "--1",
	} {
		if got := text.Normalized(); got != want {
			t.Errorf("Decimal(%q).Normalized() = %q, want %q", text, got, want)
		}
	}
}

// TestCurrenciesAreTheCurrentISOList: withdrawn currencies and codes that are no money are
// refused; currencies introduced lately are taken, each with its ISO minor unit.
func TestCurrenciesAreTheCurrentISOList(t *testing.T) {
	for _, withdrawn := range []string{"HRK", "VEF", "ZWL", "SLL", "CUC", "STD", "MRO", "ANG", "BGN", "LTL", "XXX", "XTS", "XAU", "CLF", "UYI"} {
		if code, err := ParseCurrency(withdrawn); err == nil {
			t.Errorf("ParseCurrency(%s) = %s, want refused", withdrawn, code)
		}
	}
	for code, scale := range map[string]int{"ZWG": 2, "SLE": 2, "VES": 2, "VED": 2, "XCG": 2, "STN": 2, "MRU": 2,
		"EUR": 2, "JPY": 0, "KRW": 0, "ISK": 0, "KWD": 3, "IQD": 3, "TND": 3, "IDR": 2, "COP": 2, "XOF": 0} {
		got, err := ParseCurrency(strings.ToLower(code))
		if err != nil || got != code || Scale(code) != scale {
			t.Errorf("ParseCurrency(%s) = %s, %v, scale %d, want scale %d", code, got, err, Scale(code), scale)
		}
	}
}

// TestUnitsAtAnotherScale: an amount counted with another number of decimal places than its
// currency's minor unit, as some processors count some currencies, both ways, exactly or not at
// all.
func TestUnitsAtAnotherScale(t *testing.T) {
	for _, c := range []struct {
		amount Amount
		scale  int
		units  int64
		err    error
	}{
		{Amount{Minor: 1500, Currency: "CLP"}, 2, 150000, nil},
		{Amount{Minor: 5, Currency: "ISK"}, 2, 500, nil},
		{Amount{Minor: 2500, Currency: "CVE"}, 0, 25, nil},
		{Amount{Minor: 1050, Currency: "CVE"}, 0, 0, ErrTooPrecise},
		{Amount{Minor: 4999, Currency: "USD"}, 2, 4999, nil},
		{Amount{Minor: 1005, Currency: "KWD"}, 2, 0, ErrTooPrecise},
		{Amount{Minor: -1500, Currency: "CLP"}, 2, -150000, nil},
	} {
		units, err := c.amount.InUnits(c.scale)
		if units != c.units || !errors.Is(err, c.err) {
			t.Errorf("%s %s at scale %d = %d, %v; want %d, %v", c.amount, c.amount.Currency, c.scale, units, err, c.units, c.err)
		}
		if c.err != nil {
			continue
		}
		back, err := FromUnits(c.units, c.amount.Currency, c.scale)
		if err != nil || back != c.amount {
			t.Errorf("%d %s at scale %d = %+v, %v; want %+v", c.units, c.amount.Currency, c.scale, back, err, c.amount)
		}
	}
	if _, err := FromUnits(150, "ISK", 2); !errors.Is(err, ErrTooPrecise) {
		t.Errorf("1.50 ISK = %v, want ErrTooPrecise: the króna has no minor unit", err)
	}
	if _, err := FromUnits(math.MaxInt64/5, "KWD", 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an amount that overflows in thousandths = %v, want ErrTooLarge", err)
	}
}
