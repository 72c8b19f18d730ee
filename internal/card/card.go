// Package card validates payment cards and reduces them to what may be kept. The full number and
// the CVC live only in a Card value in memory; it never prints, logs or serializes them.
package card

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/apierror"
)

// Card is a validated card. Only the provider adapter reads the number and CVC, to charge it.
type Card struct {
	number   string
	cvc      string
	Brand    string
	Last4    string
	ExpMonth int
	ExpYear  int
}

// Number returns the full card number, for the provider call only.
func (c Card) Number() string { return c.number }

// CVC returns the security code, for the provider call only.
func (c Card) CVC() string { return c.cvc }

// String, GoString, Format and LogValue keep the number and CVC out of every print and log line.
func (c Card) String() string {
	return fmt.Sprintf("%s ****%s %02d/%d", c.Brand, c.Last4, c.ExpMonth, c.ExpYear)
}

func (c Card) GoString() string { return c.String() }

func (c Card) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

func (c Card) LogValue() slog.Value {
	return slog.GroupValue(slog.String("brand", c.Brand), slog.String("last4", c.Last4))
}

// Input is a card as a client sends it.
type Input struct {
	Number   string
	ExpMonth int
	ExpYear  int
	CVC      string
}

// Normalized is the card as it is charged: its number without the spaces and dashes people
// write in it.
func (in Input) Normalized() Input {
	in.Number = numberSeparators.Replace(in.Number)
	return in
}

// numberSeparators is built once: a Replacer costs more to build than to use.
var numberSeparators = strings.NewReplacer(" ", "", "-", "")

// MaxNumberText bounds a card number as written, in characters: 19 digits and the spaces or
// dashes between their groups, with room to spare. Longer, it is refused before it is read.
const MaxNumberText = 32

// Validate checks the card at time now. Errors name the REST parameter at fault.
func Validate(in Input, now time.Time) (Card, error) {
	switch {
	case in.Number == "":
		return Card{}, apierror.ForParam(apierror.MissingField, "card.number", "card.number is required")
	case in.CVC == "":
		return Card{}, apierror.ForParam(apierror.MissingField, "card.cvc", "card.cvc is required")
	}
	if utf8.RuneCountInString(in.Number) > MaxNumberText {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.number", fmt.Sprintf("card.number is longer than %d characters", MaxNumberText))
	}
	number := in.Normalized().Number
	if len(number) < 12 || len(number) > 19 || !digitsOnly(number) || !luhnValid(number) {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.number", "card number is not a valid card number")
	}
	if in.ExpMonth < 1 || in.ExpMonth > 12 {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.exp_month", "exp_month must be between 1 and 12")
	}
	if in.ExpYear < 1000 || in.ExpYear > 9999 {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.exp_year", "exp_year must have four digits")
	}
	// A card is good until the end of its expiry month.
	expiresAt := time.Date(in.ExpYear, time.Month(in.ExpMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	if !now.Before(expiresAt) {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.exp_year", "card has expired")
	}
	brand := BrandOf(number)
	cvcLength := 3
	if brand == "amex" {
		cvcLength = 4
	}
	if len(in.CVC) != cvcLength || !digitsOnly(in.CVC) {
		return Card{}, apierror.ForParam(apierror.InvalidCard, "card.cvc", fmt.Sprintf("cvc must be %d digits", cvcLength))
	}
	return Card{
		number:   number,
		cvc:      in.CVC,
		Brand:    brand,
		Last4:    number[len(number)-4:],
		ExpMonth: in.ExpMonth,
		ExpYear:  in.ExpYear,
	}, nil
}

// Fingerprint is a keyed hash of the card number: stable for one card under one key, irreversible
// without the key, so a leaked database does not reveal numbers by brute force over the small space.
func Fingerprint(key []byte, c Card) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(c.number))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func luhnValid(number string) bool {
	sum := 0
	double := false
	for i := len(number) - 1; i >= 0; i-- {
		digit := int(number[i] - '0')
		if double {
			digit *= 2
			if digit > 9 {
				digit -= 9
			}
		}
		sum += digit
		double = !double
	}
	return sum%10 == 0
}

// brandRanges are the issuer prefix ranges, compared on the number's leading digits.
var brandRanges = []struct {
	brand    string
	digits   int
	low, top int
}{
	{"amex", 2, 34, 34},
	{"amex", 2, 37, 37},
	{"mastercard", 2, 51, 55},
	{"mastercard", 4, 2221, 2720},
	{"discover", 4, 6011, 6011},
	{"discover", 3, 644, 649},
	{"discover", 2, 65, 65},
	{"jcb", 4, 3528, 3589},
	{"diners", 3, 300, 305},
	{"diners", 2, 36, 36},
	{"diners", 2, 38, 39},
	{"unionpay", 2, 62, 62},
	{"visa", 1, 4, 4},
}

// BrandOf names the card brand from the number's prefix, or "unknown".
func BrandOf(number string) string {
	for _, r := range brandRanges {
		if len(number) < r.digits {
			continue
		}
		prefix := 0
		for i := 0; i < r.digits; i++ {
			prefix = prefix*10 + int(number[i]-'0')
		}
		if prefix >= r.low && prefix <= r.top {
			return r.brand
		}
	}
	return "unknown"
}
