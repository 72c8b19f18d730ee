// Package logtest holds what tests need to read a log that other goroutines write.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer collects what is written from any goroutine, for a test to read while they write.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
