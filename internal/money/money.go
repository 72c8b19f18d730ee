// Package money holds exact amounts: int64 minor units of an ISO 4217 currency, parsed from and
// formatted to decimal text without ever passing through floating point.
package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is an exact amount: Minor units (cents for USD, yen for JPY, fils for KWD) of Currency,
// an upper-case ISO 4217 code.
type Amount struct {
	Minor    int64
	Currency string
}

// Errors of parsing; callers turn them into API errors with their own parameter names.
var (
	ErrUnknownCurrency = errors.New("currency must be a three-letter ISO 4217 code of a currency in use")
	ErrSyntax          = errors.New("amount must be a plain decimal number such as 49.99")
	ErrTooPrecise      = errors.New("amount has more decimal places than the currency allows")
	ErrTooLarge        = errors.New("amount is too large")
	ErrTooLong         = fmt.Errorf("amount is longer than %d characters", MaxText)
)

// MaxText bounds an amount's text, in characters: room for the most digits an amount may have,
// its sign, its point and zeros after it, and checked before the text is read.
const MaxText = 32

// maxDigits bounds the digits an amount may have, far below int64's 19, so arithmetic on minor
// units can never overflow.
const maxDigits = 15

// minorUnits lists the currencies payments may be in, each with the decimal places of its ISO
// 4217 minor unit: the active currencies of ISO 4217's list one as amended to November 2026
// (XCG replacing ANG in 2025, BGN gone with Bulgaria's euro in 2026, ZWG, SLE, VES and VED in,
// ZWL, SLL, HRK, VEF, CUC, STD and MRO out), without the fund codes (BOV, CHE, CHW, CLF, COU,
// MXV, USN, UYI, UYW) and the X codes that are no money (metals, SDR, XXX, XTS, XSU, XUA).
// x/text's list still took withdrawn currencies, and its decimal places are CLDR's display
// rounding, not the minor units the card networks and providers use.
var minorUnits = func() map[string]int {
	units := map[string]int{}
	for _, code := range strings.Fields(`
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF
CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL
HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT
MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB
SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH
USD UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG`) {
		units[code] = 2
	}
	for _, code := range strings.Fields("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF") {
		units[code] = 0
	}
	for _, code := range strings.Fields("BHD IQD JOD KWD LYD OMR TND") {
		units[code] = 3
	}
	return units
}()

// ParseCurrency returns the upper-case code of a supported currency, whatever the case of code.
func ParseCurrency(code string) (string, error) {
	if len(code) != 3 {
		return "", ErrUnknownCurrency
	}
	upper := strings.ToUpper(code)
	if _, ok := minorUnits[upper]; !ok {
		return "", ErrUnknownCurrency
	}
	return upper, nil
}

// Scale returns how many decimal places the currency's ISO 4217 minor unit has (USD 2, JPY 0,
// KWD 3).
func Scale(currencyCode string) int {
	if scale, ok := minorUnits[currencyCode]; ok {
		return scale
	}
	return 2 // a currency withdrawn since a payment was made in it: they all had cents
}

// Parse reads decimal text ("49.99", "1000", "0.5") as an amount of the currency, which must come
// from ParseCurrency. Trailing zeros beyond the currency's scale are allowed (they change nothing);
// any other extra decimal place is an error, never rounded.
func Parse(text string, currencyCode string) (Amount, error) {
	if len(text) > MaxText {
		return Amount{}, ErrTooLong
	}
	whole, fraction, hasPoint := strings.Cut(text, ".")
	negative := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	if whole == "" || !allDigits(whole) || !allDigits(fraction) || (hasPoint && fraction == "") {
		return Amount{}, ErrSyntax
	}
	scale := Scale(currencyCode)
	if len(fraction) > scale {
		if strings.Trim(fraction[scale:], "0") != "" {
			return Amount{}, ErrTooPrecise
		}
		fraction = fraction[:scale]
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole)+scale > maxDigits {
		return Amount{}, ErrTooLarge
	}
	digits := whole + fraction + strings.Repeat("0", scale-len(fraction))
	minor, err := strconv.ParseInt("0"+digits, 10, 64)
	if err != nil {
		return Amount{}, ErrTooLarge
	}
	if negative {
		minor = -minor
	}
	return Amount{Minor: minor, Currency: currencyCode}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats the amount in major units with exactly the currency's decimal places: "49.99".
func (a Amount) String() string {
	scale := Scale(a.Currency)
	minor := a.Minor
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	digits := strconv.FormatInt(minor, 10)
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	point := len(digits) - scale
	return sign + digits[:point] + "." + digits[point:]
}

// Decimal returns the amount as the GraphQL and REST decimal value.
func (a Amount) Decimal() Decimal { return Decimal(a.String()) }

// ExceedsMajor reports whether the amount is above limit, a count of hundredths of the major unit
// (99999999 is 999999.99), whatever the currency's own scale.
func (a Amount) ExceedsMajor(limitHundredths int64) bool {
	scale := Scale(a.Currency)
	// Compare a.Minor/10^scale with limit/100 as a.Minor*100 and limit*10^scale; both stay far
	// below int64's range because amounts have at most maxDigits digits.
	left, right := a.Minor*100, limitHundredths
	for range scale {
		right *= 10
	}
	return left > right
}

// InUnits returns the amount counted with scale decimal places, as a processor that counts the
// currency differently from ISO 4217 wants it (Adyen counts Chilean pesos in hundredths): 1000 CLP
// is 100000 at scale 2. An amount with a fraction finer than scale (10.50 CVE at scale 0) is
// ErrTooPrecise.
func (a Amount) InUnits(scale int) (int64, error) {
	return rescale(a.Minor, Scale(a.Currency), scale)
}

// FromUnits is the amount of units of currency counted with scale decimal places, the reverse of
// InUnits; units finer than the currency's minor unit are ErrTooPrecise.
func FromUnits(units int64, currency string, scale int) (Amount, error) {
	minor, err := rescale(units, scale, Scale(currency))
	if err != nil {
		return Amount{}, err
	}
	return Amount{Minor: minor, Currency: currency}, nil
}

// rescale turns a count of 10^-from into a count of 10^-to, exactly or not at all.
func rescale(units int64, from, to int) (int64, error) {
	for ; from < to; from++ {
		if units > math.MaxInt64/10 || units < math.MinInt64/10 {
			return 0, ErrTooLarge
		}
		units *= 10
	}
	for ; from > to; from-- {
		if units%10 != 0 {
			return 0, ErrTooPrecise
		}
		units /= 10
	}
	return units, nil
}

// Decimal is an amount's decimal text as it crosses the API: a JSON number or string over REST,
// the Decimal scalar over GraphQL. It is only text; Parse gives it a value once the currency is known.
type Decimal string

// Normalized returns the decimal's text without the zeros that change nothing ("012.50" is
// "12.5", "12.00" is "12"), so two ways of writing one amount compare equal before the currency
// is known. Text that is not a plain decimal is returned as it is.
func (d Decimal) Normalized() string {
	text := string(d)
	sign, digits := "", text
	if rest, negative := strings.CutPrefix(text, "-"); negative {
		sign, digits = "-", rest
	}
	whole, fraction, hasPoint := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || !allDigits(fraction) || (hasPoint && fraction == "") {
		return text
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if fraction = strings.TrimRight(fraction, "0"); fraction != "" {
		whole += "." + fraction
	}
	return sign + whole
}
