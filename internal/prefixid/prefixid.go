// Package prefixid makes the opaque, typed identifiers every resource carries (pay_..., usr_...).
package prefixid

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// The alphabet is in ascending byte order, so IDs sort by creation time: a new row lands at the
// end of the primary-key index instead of at a random page.
var encoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// An ID's raw bytes: a time head of 48 bits of Unix milliseconds and 16 bits of the millisecond's
// fraction, then randomBytes fresh from crypto/rand. Nothing of one ID can be derived from
// another: the random part is drawn anew for every ID, even within one millisecond.
const (
	headBytes   = 8
	randomBytes = 10 // 80 bits
	rawBytes    = headBytes + randomBytes
)

// Length is the length of an ID's part after "prefix_". IDs made before the head carried the
// millisecond's fraction have 26 characters (48 bits of milliseconds, 80 random bits); they stay
// valid, as every ID is opaque.
const Length = (rawBytes*8 + 4) / 5

// heads gives this process's time heads, which never go back or repeat even when the clock does:
// a payment's status history and events made in one millisecond still sort in the order they
// were made.
var heads headClock

// headClock remembers the newest time head it gave.
type headClock struct {
	sync.Mutex
	last uint64
}

// New returns prefix_ followed by Length characters.
func New(prefix string) string {
	var raw [rawBytes]byte
	binary.BigEndian.PutUint64(raw[:headBytes], heads.next(time.Now()))
	rand.Read(raw[headBytes:])
	return prefix + "_" + encoding.EncodeToString(raw[:])
}

// next is now's time head, or one past the last head given when now's is not later: the clock,
// made strictly increasing. Only the head is ever bumped; the random bits are never derived from
// anything.
func (c *headClock) next(now time.Time) uint64 {
	millis := uint64(now.UnixMilli())
	fraction := uint64(now.Nanosecond()%int(time.Millisecond)) << 16 / uint64(time.Millisecond)
	head := millis<<16 | fraction
	c.Lock()
	defer c.Unlock()
	if head <= c.last {
		head = c.last + 1
	}
	c.last = head
	return head
}

// Generator returns a function that makes IDs with the given prefix, for ent's DefaultFunc.
func Generator(prefix string) func() string {
	return func() string { return New(prefix) }
}

// Prefix returns the type prefix of an ID ("pay" for "pay_...") or "" when it has none.
func Prefix(id string) string {
	prefix, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return prefix
}
