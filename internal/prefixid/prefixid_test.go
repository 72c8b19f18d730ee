package prefixid

import (
	"math/big"
	"slices"
	"strings"
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
		if Prefix(id) != "pay" || len(id) != len("pay_")+Length || Length != 29 {
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

// decode returns an ID's time head and its random part.
func decode(t *testing.T, id string) (uint64, *big.Int) {
	t.Helper()
	raw, err := encoding.DecodeString(strings.TrimPrefix(id, "pay_"))
	if err != nil || len(raw) != rawBytes {
		t.Fatalf("decoding %s: %d bytes, %v", id, len(raw), err)
	}
	var head uint64
	for _, b := range raw[:headBytes] {
		head = head<<8 | uint64(b)
	}
	return head, new(big.Int).SetBytes(raw[headBytes:])
}

// IDs made as fast as one goroutine can, most of them within the same millisecond as others, share
// nothing in their random parts: a neighbour cannot be found by adding to an ID, and each of the
// 80 bits is as often set as not. A counter, or fewer random bits, fails this.
func TestIDsCarryEightyRandomBitsWithinOneMillisecond(t *testing.T) {
	const n = 20000
	var setCount [randomBytes * 8]int
	distance := new(big.Int)
	near := new(big.Int).Lsh(big.NewInt(1), 48)
	var previous *big.Int
	sameMillisecond := 0
	var previousMillis uint64
	for i := range n {
		head, random := decode(t, New("pay"))
		if head>>16 == previousMillis {
			sameMillisecond++
		}
		previousMillis = head >> 16
		if previous != nil && distance.Sub(random, previous).Abs(distance).Cmp(near) < 0 {
			t.Fatalf("id %d's random part is within 2^48 of the one before it: derived, not drawn", i)
		}
		previous = random
		for bit := range setCount {
			setCount[bit] += int(random.Bit(bit))
		}
	}
	if sameMillisecond < n/2 {
		t.Fatalf("only %d of %d ids shared a millisecond with the one before; the test proves nothing", sameMillisecond, n)
	}
	for bit, set := range setCount {
		// Binomial(20000, 1/2) has a standard deviation of about 71: 8,000..12,000 is 28 of them.
		if set < n*2/5 || set > n*3/5 {
			t.Errorf("random bit %d was set in %d of %d ids", bit, set, n)
		}
	}
}

func TestHeadsNeverGoBackWhenTheClockDoes(t *testing.T) {
	var clock headClock
	now := time.Date(2030, 1, 1, 0, 0, 0, 500_000, time.UTC)
	first := clock.next(now)
	if first>>16 != uint64(now.UnixMilli()) || first&0xffff != 1<<15 {
		t.Fatalf("head %x: not the millisecond and half of its fraction", first)
	}
	again := clock.next(now)
	earlier := clock.next(now.Add(-time.Second))
	if again != first+1 || earlier != again+1 {
		t.Errorf("heads %x, %x, %x: a repeated or earlier clock must give the next head", first, again, earlier)
	}
	if later := clock.next(now.Add(time.Second)); later>>16 != uint64(now.Add(time.Second).UnixMilli()) {
		t.Errorf("a later clock's head %x is not its own millisecond", later)
	}
}
