package database

import "strings"

// StorableText makes s text a column of at most maxBytes keeps: valid UTF-8 without NUL, which
// PostgreSQL's text refuses, cut at a character's start.
func StorableText(s string, maxBytes int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut]
}
