// Package prefixid makes the opaque, typed identifiers every resource carries (pay_..., usr_...).
package prefixid

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

// The alphabet is in ascending byte order, so IDs sort by creation time: a new row lands at the
// end of the primary-key index instead of at a random page.
var encoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// New returns prefix_ followed by 26 characters: 48 bits of milliseconds and 80 random bits.
func New(prefix string) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(time.Now().UnixMilli())<<16)
	rand.Read(raw[6:])
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
