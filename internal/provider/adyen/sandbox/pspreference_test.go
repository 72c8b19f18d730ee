package sandbox

import (
	"regexp"
	"testing"
)

// A pspReference names a payment on the sandbox's pages and in its answers: it must not be
// guessable from another. Each of its 16 places takes every one of 32 symbols (5 bits each, 80 in
// all); a number drawn below 10^16, as Adyen's older references were, takes only digits.
func TestPSPReferencesCarryEightyRandomBits(t *testing.T) {
	shape := regexp.MustCompile(`^[A-Z2-7]{16}$`)
	seen := map[string]bool{}
	var symbols [16]map[rune]bool
	for i := range symbols {
		symbols[i] = map[rune]bool{}
	}
	for range 4000 {
		reference := pspReference()
		if !shape.MatchString(reference) || seen[reference] {
			t.Fatalf("reference %q: not 16 upper-case letters and digits, or made twice", reference)
		}
		seen[reference] = true
		for place, symbol := range reference {
			symbols[place][symbol] = true
		}
	}
	for place, used := range symbols {
		if len(used) != 32 {
			t.Errorf("place %d took %d of 32 symbols in 4,000 references", place, len(used))
		}
	}
}
