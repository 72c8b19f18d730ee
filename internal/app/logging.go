package app

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// NewLogger returns the JSON logger Paygate writes to w, at level (debug, info, warn or error;
// info for anything else).
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// How long, and how much, a server's log holds before it writes. A server logs a line per request,
// and a write to its output per line cost a read by id about a tenth of its throughput: the
// system call, and every request in turn waiting for the others' under the handler's lock.
const (
	logHeldFor = 100 * time.Millisecond
	logHeldMax = 64 << 10
)

// NewServerLogger returns the logger a server writes to w with, as NewLogger's, and what ends it.
// Lines are held for up to logHeldFor (or logHeldMax bytes) and written together. A line at warn or
// above is written at once, after those held before it, so no warning or error waits; and stop
// writes out what is held: until then, a process killed outright loses the last moment's lines.
func NewServerLogger(w io.Writer, level string) (logger *slog.Logger, stop func()) {
	ticker := time.NewTicker(logHeldFor)
	logger, stopWriting := newHeldLogger(w, level, ticker.C)
	return logger, func() {
		ticker.Stop()
		stopWriting()
	}
}

// newHeldLogger is NewServerLogger's logger, writing out what it holds at each tick.
func newHeldLogger(w io.Writer, level string, ticks <-chan time.Time) (logger *slog.Logger, stop func()) {
	out := &heldOutput{to: w}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-ticks:
				out.writeOut()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return slog.New(writingOutAbove{NewLogger(out, level).Handler(), out}), func() {
		once.Do(func() {
			close(done)
			<-stopped
			out.writeOut()
		})
	}
}

// heldOutput holds what is written to it until writeOut.
type heldOutput struct {
	to   io.Writer
	mu   sync.Mutex
	held []byte
}

func (o *heldOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.held)+len(p) > logHeldMax {
		o.writeOutLocked()
	}
	o.held = append(o.held, p...)
	return len(p), nil
}

func (o *heldOutput) writeOut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writeOutLocked()
}

// writeOutLocked writes what is held and lets it go whether or not the write succeeds: an output
// that fails once (a full disk, a reader gone) then loses the lines it was given, as an unheld
// one would, rather than every line after.
func (o *heldOutput) writeOutLocked() {
	if len(o.held) == 0 {
		return
	}
	o.to.Write(o.held)
	o.held = o.held[:0]
}

// writingOutAbove writes out what its output holds after each line at warn or above.
type writingOutAbove struct {
	slog.Handler
	out *heldOutput
}

func (h writingOutAbove) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.out.writeOut()
	}
	return err
}

func (h writingOutAbove) WithAttrs(attrs []slog.Attr) slog.Handler {
	return writingOutAbove{h.Handler.WithAttrs(attrs), h.out}
}

func (h writingOutAbove) WithGroup(name string) slog.Handler {
	return writingOutAbove{h.Handler.WithGroup(name), h.out}
}
