// Package prefixid makes the opaque, typed identifiers every resource carries (pay_..., usr_...).
package prefixid

import (
	"bytes"
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

// last is the newest ID made by this process, so IDs made within one millisecond still sort in
// the order they were made: the entries of a payment's history are told apart by it.
var last struct {
	sync.Mutex
	raw [16]byte
}

// New returns prefix_ followed by 26 characters: 48 bits of milliseconds and 80 random bits,
// strictly increasing within the process (a later ID in the same millisecond is the last plus one).
func New(prefix string) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(time.Now().UnixMilli())<<16)
	rand.Read(raw[6:])
	last.Lock()
	if bytes.Compare(raw[:], last.raw[:]) <= 0 {
		raw = last.raw
		for i := len(raw) - 1; i >= 0; i-- {
			raw[i]++
			if raw[i] != 0 {
				break
			}
		}
	}
	last.raw = raw
	last.Unlock()
	return prefix + "_" + encoding.EncodeToString(raw[:])
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
