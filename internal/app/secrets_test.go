package app

import (
	"regexp"
	"strings"
)

// secret is something never stored, logged or exported in a trace: a card number, a CVC, a
// password, a token, an API key, a webhook secret.
type secret struct{ what, value string }

// leaks names each of secrets that text holds: a database dump (|value|value|), log lines or
// spans. A secret of four characters or fewer is a CVC (every other one is far longer): runs of
// random letters and digits (ids, hashes) spell its digits now and then, and so do numbers and
// times, so it counts only as a word of its own: a quoted value, a cell of a dump, a query's
// value (cvc=987), or a word among others in a message ("card 987 declined"). So does anything
// named cvc, by a JSON key or a column.
func leaks(text string, secrets ...secret) []string {
	var found []string
	for _, s := range secrets {
		held := strings.Contains(text, s.value)
		if len(s.value) <= 4 {
			held = regexp.MustCompile(`(^|[\s"=|])` + regexp.QuoteMeta(s.value) + `($|[\s"|,;&)])`).MatchString(text)
		}
		if held {
			found = append(found, s.what)
		}
	}
	if strings.Contains(strings.ToLower(text), `"cvc`) {
		found = append(found, "something named cvc")
	}
	return found
}
