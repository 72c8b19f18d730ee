package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/apierror"
)

// TestPasswordPolicy: 12 characters to 72 bytes, and nothing easy to guess, compared without
// regard to case; each refusal is invalid_request naming the field and never repeats the password.
func TestPasswordPolicy(t *testing.T) {
	if n := len(commonPasswords()); n != 10_000 {
		t.Fatalf("%d common passwords read, want 10,000", n)
	}
	for _, tc := range []struct {
		password string
		ok       bool
	}{
		{"correct horse battery staple", true},
		{"a password for the tests", true},
		{"Tr0ub4dor&3 plus more", true},
		{strings.Repeat("x", 60) + "0123456789yz", true}, // 72 bytes
		{strings.Repeat("é", 35) + "ab", true},           // 72 bytes, 37 characters
		{strings.Repeat("é", 11) + "a", true},            // 12 characters
		{"eleven char", false},
		{strings.Repeat("x", 60) + "0123456789xyz", false}, // 73 bytes
		{strings.Repeat("é", 37), false},                   // 74 bytes
		// Common passwords, as they are and with digits or symbols around them.
		{"1qaz2wsx3edc", false},
		{"QAZWSXEDCRFV", false},
		{"password123456", false},
		{"Password123456!", false},
		{"2024!!dragon2024", false},
		{"MONKEY 1234567", false},
		// Runs of keys, letters and digits, either way.
		{"qwertyuiopas", false},
		{"SAPOIUYTREWQ", false},
		{"abcdefghijklmn", false},
		{"123456789012", false},
		{"9876543210987", false},
		{"!@#$%^&*()_+", false},
		// Repetitions of a short or common piece.
		{"aaaaaaaaaaaa", false},
		{"abcabcabcabc", false},
		{"ÉéÉéÉéÉéÉéÉé", false},
		{"qwertyqwerty", false},
		{"sunshinesunshine", false},
		// The product's name and the user's email.
		{"paygate123456", false},
		{"PayGate!2024!", false},
		{"ann.lee@example.com", false},
		{"ann.lee2024!!", false},
		{"Ann.Lee@Example.com!", false},
	} {
		err := CheckPassword(tc.password, "Ann.Lee@example.com", "new_password")
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok %v", tc.password, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		var apiErr *apierror.Error
		if !errors.As(err, &apiErr) || apiErr.Code != apierror.InvalidRequest || apiErr.Param != "new_password" ||
			!strings.HasPrefix(apiErr.Message, "new_password ") {
			t.Errorf("%q: %#v, want invalid_request naming new_password", tc.password, err)
		}
		if strings.Contains(strings.ToLower(apiErr.Message), strings.ToLower(tc.password)) {
			t.Errorf("%q: the refusal repeats the password: %s", tc.password, apiErr.Message)
		}
	}
}
