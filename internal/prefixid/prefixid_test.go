package prefixid

import (
	"slices"
	"testing"
	"time"
)

func TestIDsArePrefixedUniqueAndSortByTime(t *testing.T) {
	var ids []string
	seen := map[string]bool{}
	for range 1000 {
		id := New("pay")
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if Prefix(id) != "pay" || len(id) != len("pay_")+26 {
			t.Fatalf("id %s", id)
		}
		ids = append(ids, id)
	}
	before := New("pay")
	time.Sleep(2 * time.Millisecond)
	if after := New("pay"); after <= before {
		t.Errorf("an id made later sorts first: %s <= %s", after, before)
	}
	if !slices.IsSorted(ids) {
		t.Error("ids made one after another do not sort in that order")
	}
	if Prefix("nounderscore") != "" {
		t.Error("Prefix of an unprefixed id")
	}
}
