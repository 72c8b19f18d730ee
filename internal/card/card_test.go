package card

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestBrandOf(t *testing.T) {
	tests := map[string]string{
		"4242424242424242": "visa",
		"5555555555554444": "mastercard",
		"2223003122003222": "mastercard",
		"378282246310005":  "amex",
		"371449635398431":  "amex",
		"6011111111111117": "discover",
		"6445644564456445": "discover",
		"3566002020360505": "jcb",
		"30569309025904":   "diners",
		"36227206271667":   "diners",
		"6200000000000005": "unionpay",
		"9999999999999995": "unknown",
	}
	for number, want := range tests {
		if got := BrandOf(number); got != want {
			t.Errorf("BrandOf(%s) = %s, want %s", number, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Input{Number: "4242 4242-4242 4242", ExpMonth: 12, ExpYear: 2030, CVC: "123"}
	c, err := Validate(good, now)
	if err != nil {
		t.Fatalf("Validate(good) = %v", err)
	}
	if c.Brand != "visa" || c.Last4 != "4242" || c.Number() != "4242424242424242" {
		t.Errorf("Validate(good) = %v", c)
	}
	if _, err := Validate(Input{Number: "378282246310005", ExpMonth: 1, ExpYear: 2030, CVC: "1234"}, now); err != nil {
		t.Errorf("amex with 4-digit cvc: %v", err)
	}
	if _, err := Validate(Input{Number: "4242424242424242", ExpMonth: 11, ExpYear: 2026, CVC: "123"}, now); err != nil {
		t.Errorf("card expiring at the end of this month: %v", err)
	}
	spaced := "4 2 4 2 4 2 4 2 4 2 4 2 4 2 4 2" // 31 characters, and one space more is the most
	if _, err := Validate(Input{Number: spaced + " ", ExpMonth: 12, ExpYear: 2030, CVC: "123"}, now); err != nil {
		t.Errorf("a number of %d characters: %v", len(spaced)+1, err)
	}

	bad := []struct {
		name  string
		input Input
		param string
	}{
		{"luhn", Input{"4242424242424241", 12, 2030, "123"}, "card.number"},
		{"short", Input{"42424242424", 12, 2030, "123"}, "card.number"},
		{"long", Input{"42424242424242424242", 12, 2030, "123"}, "card.number"},
		{"letters", Input{"4242a24242424242", 12, 2030, "123"}, "card.number"},
		{"too long to read", Input{"4 2 4 2 4 2 4 2 4 2 4 2 4 2 4 2  ", 12, 2030, "123"}, "card.number"},
		{"month -1", Input{"4242424242424242", -1, 2030, "123"}, "card.exp_month"},
		{"month 13", Input{"4242424242424242", 13, 2030, "123"}, "card.exp_month"},
		{"two-digit year", Input{"4242424242424242", 12, 30, "123"}, "card.exp_year"},
		{"expired last month", Input{"4242424242424242", 10, 2026, "123"}, "card.exp_year"},
		{"cvc short", Input{"4242424242424242", 12, 2030, "12"}, "card.cvc"},
		{"cvc letters", Input{"4242424242424242", 12, 2030, "12a"}, "card.cvc"},
		{"amex 3-digit cvc", Input{"378282246310005", 12, 2030, "123"}, "card.cvc"},
		{"visa 4-digit cvc", Input{"4242424242424242", 12, 2030, "1234"}, "card.cvc"},
	}
	for _, tt := range bad {
		_, err := Validate(tt.input, now)
		apiErr, ok := errors.AsType[*apierror.Error](err)
		if !ok || apiErr.Code != apierror.InvalidCard || apiErr.Param != tt.param {
			t.Errorf("%s: Validate = %v, want invalid_card on %s", tt.name, err, tt.param)
		}
	}
}

func TestValidateReportsMissingParts(t *testing.T) {
	tests := map[string]Input{
		"card.number": {"", 12, 2030, "123"},
		"card.cvc":    {"4242424242424242", 12, 2030, ""},
	}
	for param, input := range tests {
		_, err := Validate(input, now)
		apiErr, ok := errors.AsType[*apierror.Error](err)
		if !ok || apiErr.Code != apierror.MissingField || apiErr.Param != param {
			t.Errorf("Validate without %s = %v, want missing_field", param, err)
		}
	}
	// A month or year of 0 is one sent, and no month or year: the card is invalid. (A month
	// left out of a request is missing, which the surfaces that can tell say.)
	for param, input := range map[string]Input{
		"card.exp_month": {"4242424242424242", 0, 2030, "123"},
		"card.exp_year":  {"4242424242424242", 12, 0, "123"},
	} {
		_, err := Validate(input, now)
		apiErr, ok := errors.AsType[*apierror.Error](err)
		if !ok || apiErr.Code != apierror.InvalidCard || apiErr.Param != param {
			t.Errorf("Validate with a %s of 0 = %v, want invalid_card", param, err)
		}
	}
}

func TestCardNeverPrintsNumberOrCVC(t *testing.T) {
	c, err := Validate(Input{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2030, CVC: "987"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	// Without the time, whose digits could hold the CVC's by chance.
	withoutTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewJSONHandler(&logged, withoutTime)).Info("charge", "card", c)
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String()} {
		if strings.Contains(out, "4242424242424242") || strings.Contains(out, "987") {
			t.Errorf("card printed its secrets: %s", out)
		}
		if !strings.Contains(out, "4242") {
			t.Errorf("card print lacks last4: %s", out)
		}
	}
}

func TestFingerprint(t *testing.T) {
	key := []byte("k1")
	a, _ := Validate(Input{"4242424242424242", 12, 2030, "123"}, now)
	b, _ := Validate(Input{"4242 4242 4242 4242", 1, 2031, "999"}, now)
	other, _ := Validate(Input{"5555555555554444", 12, 2030, "123"}, now)
	if Fingerprint(key, a) != Fingerprint(key, b) {
		t.Error("same card, different fingerprints")
	}
	if Fingerprint(key, a) == Fingerprint(key, other) {
		t.Error("different cards, same fingerprint")
	}
	if Fingerprint(key, a) == Fingerprint([]byte("k2"), a) {
		t.Error("fingerprint does not depend on the key")
	}
	if strings.Contains(Fingerprint(key, a), "4242") {
		t.Error("fingerprint shows the number")
	}
}

func FuzzValidate(f *testing.F) {
	f.Add("4242424242424242", 12, 2030, "123")
	f.Add("378282246310005", 1, 2027, "1234")
	f.Fuzz(func(t *testing.T, number string, month, year int, cvc string) {
		c, err := Validate(Input{number, month, year, cvc}, now)
		if err != nil {
			return
		}
		if len(c.Number()) < 12 || len(c.Number()) > 19 || !luhnValid(c.Number()) || c.Last4 != c.Number()[len(c.Number())-4:] {
			t.Fatalf("accepted a bad card: %v", c)
		}
	})
}
