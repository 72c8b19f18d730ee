package app

import "strings"

// secret is something never stored, logged or exported in a trace: a card number, a CVC, a
// password, a token, an API key, a webhook secret.
type secret struct{ what, value string }

// leaks names each of secrets that text holds: a database dump (|value|value|), log lines or
// spans. A short secret (a CVC), which runs of random letters and digits (ids, hashes) spell now
// and then, counts only as a value of its own: quoted, as JSON has it, or a cell of a dump. So
// does anything named cvc, by a JSON key or a column.
func leaks(text string, secrets ...secret) []string {
	var found []string
	for _, s := range secrets {
		held := strings.Contains(text, s.value)
		if len(s.value) <= 4 {
			held = strings.Contains(text, `"`+s.value+`"`) || strings.Contains(text, "|"+s.value+"|")
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
