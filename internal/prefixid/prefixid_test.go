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
	if !slices.IsSorted([]string{ids[0][:14], ids[len(ids)-1][:14]}) {
		t.Error("ids do not start with their time")
	}
	if Prefix("nounderscore") != "" {
		t.Error("Prefix of an unprefixed id")
	}
}
