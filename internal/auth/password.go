package auth

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/apierror"
)

// The password policy, the one place that says what a password may be: creating a user (the API,
// the first admin, paygate user create), changing one's own, an admin's reset and paygate user
// set-password all check it. Logging in does not: a user whose password predates a rule still
// logs in with it.
const (
	// MinPasswordChars is the shortest password, in characters.
	MinPasswordChars = 12
	// MaxPasswordBytes is the longest password: bcrypt reads no further, so a longer one would be
	// taken as its first 72 bytes, and any suffix would log in. It is refused, never cut.
	MaxPasswordBytes = 72
)

// commonPasswordsText is the 10,000 most common passwords, in lower case; the file says where
// they come from.
//
//go:embed common_passwords.txt
var commonPasswordsText string

// commonPasswords is commonPasswordsText as a set, read once, when a password is first checked.
var commonPasswords = sync.OnceValue(func() map[string]bool {
	set := make(map[string]bool, 10_000)
	for line := range strings.Lines(commonPasswordsText) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			set[line] = true
		}
	}
	return set
})

// keyRuns are runs of keys (rows and columns of a US keyboard), the alphabet and the digits: a
// password read off one of them, forwards or backwards, is no secret ("qwertyuiopas").
var keyRuns = func() []string {
	runs := []string{
		"qwertyuiopasdfghjklzxcvbnm",
		"abcdefghijklmnopqrstuvwxyz",
		strings.Repeat("0123456789", 9),
		"`1234567890-=",
		"~!@#$%^&*()_+",
		"1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik,9ol.0p;/-['=]",
		"zaq1xsw2cde3vfr4bgt5nhy6mju7,ki8.lo9/;p0",
		"qazwsxedcrfvtgbyhnujmikolp",
	}
	for _, run := range slices.Clone(runs) {
		reversed := []rune(run)
		slices.Reverse(reversed)
		runs = append(runs, string(reversed))
	}
	return runs
}()

// CheckPassword returns nil when password may be the password of the user with email, and
// otherwise an invalid_request error naming param that says why. No error repeats the password.
//
// A password must be 12 characters to 72 bytes, and not too easy to guess, which is checked
// case-insensitively: not one of the 10,000 most common passwords, nor one of them with digits or
// symbols around it ("Password123456!"); not a run of keys, letters or digits ("qwertyuiopas",
// "123456789012"); not a short or guessable piece repeated ("abcabcabcabc"); not "paygate", the
// email, or the email's part before the @, with digits or symbols around it.
func CheckPassword(password, email, param string) error {
	switch {
	case utf8.RuneCountInString(password) < MinPasswordChars:
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s must be at least %d characters", param, MinPasswordChars))
	case len(password) > MaxPasswordBytes:
		return apierror.ForParam(apierror.InvalidRequest, param,
			fmt.Sprintf("%s must be at most %d bytes in UTF-8: bcrypt reads no further, and a longer password is refused rather than cut", param, MaxPasswordBytes))
	}
	email = normalizeEmail(email)
	words := []string{"paygate"}
	if email != "" {
		local, _, _ := strings.Cut(email, "@")
		words = append(words, email, local)
	}
	if why := guessable(strings.ToLower(password), words); why != "" {
		return apierror.ForParam(apierror.InvalidRequest, param, param+" "+why+"; choose another")
	}
	return nil
}

// guessable says why a password in lower case is too easy to guess, or "" when it is not; words
// are the words that are nobody's password here.
func guessable(password string, words []string) string {
	if commonPasswords()[password] {
		return "is one of the most common passwords"
	}
	core := strings.TrimFunc(password, func(r rune) bool { return !unicode.IsLetter(r) })
	switch {
	case core != "" && commonPasswords()[core]:
		return "is one of the most common passwords with digits or symbols around it"
	case core != "" && slices.Contains(words, core):
		return `is made of the email or the word "paygate"`
	}
	for _, run := range keyRuns {
		if strings.Contains(run, password) {
			return "is a run of keys, letters or digits"
		}
	}
	if piece := repeatedPiece(password); piece != "" && (utf8.RuneCountInString(piece) <= 4 || guessable(piece, words) != "") {
		return "repeats a short or common piece"
	}
	return ""
}

// repeatedPiece returns the shortest piece that s is made of, repeated twice or more, or "" when
// s is no repetition.
func repeatedPiece(s string) string {
	runes := []rune(s)
	for n := 1; n <= len(runes)/2; n++ {
		if len(runes)%n == 0 && strings.Repeat(string(runes[:n]), len(runes)/n) == s {
			return string(runes[:n])
		}
	}
	return ""
}
