package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// NewLogger returns the JSON logger Paygate writes to w, at level (debug, info, warn or error;
// info for anything else).
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(withTraceIDs{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}

// withTraceIDs adds to a line written within a traced request or job its trace_id and span_id,
// so that a line and its trace are found from each other.
type withTraceIDs struct{ slog.Handler }

func (h withTraceIDs) Handle(ctx context.Context, line slog.Record) error {
	if span := trace.SpanContextFromContext(ctx); span.IsValid() {
		line.AddAttrs(slog.String("trace_id", span.TraceID().String()), slog.String("span_id", span.SpanID().String()))
	}
	return h.Handler.Handle(ctx, line)
}

func (h withTraceIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withTraceIDs{h.Handler.WithAttrs(attrs)}
}

func (h withTraceIDs) WithGroup(name string) slog.Handler {
	return withTraceIDs{h.Handler.WithGroup(name)}
}

// How long, and how much, a server's log holds before it writes. A server logs a line per request,
// and a write to its output per line cost a read by id 5-20% more CPU: the system call, and
// every request in turn waiting under the handler's lock for the others' writes.
const (
	logHeldFor = 100 * time.Millisecond
	logHeldMax = 64 << 10
	// logWriteMax is the most one write carries when it holds more than one line: PIPE_BUF, what a
	// pipe takes whole, so a line is never split by another writer's bytes (stderr sent to the
	// same pipe, say), as it was not when each line was a write of its own.
	logWriteMax = 4096
)

// NewServerLogger returns the logger a server writes to w with, as NewLogger's, and what ends it.
// Lines are held for up to logHeldFor (or logHeldMax bytes) and written together. A line at warn or
// above is written at once, after those held before it, so no warning or error waits; stop writes
// out what is held, and every line after it goes straight to w. A process that ends without stop
// (killed outright, a crash outside a request) loses the last moment's lines.
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
			out.stop()
		})
	}
}

// heldOutput holds what is written to it until writeOut, and holds nothing once stopped.
type heldOutput struct {
	to      io.Writer
	mu      sync.Mutex
	held    []byte
	stopped bool
}

func (o *heldOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return o.to.Write(p)
	}
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

// stop writes out what is held; what comes after is written as it comes.
func (o *heldOutput) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writeOutLocked()
	o.stopped = true
}

// writeOutLocked writes what is held, whole lines at a time, at most logWriteMax bytes a write
// unless one line is longer. It lets go of what it wrote whether or not the write succeeded: an
// output that fails once (a full disk, a reader gone) then loses the lines it was given, as an
// unheld one would, rather than every line after.
func (o *heldOutput) writeOutLocked() {
	for rest := o.held; len(rest) > 0; {
		n := bytes.LastIndexByte(rest[:min(len(rest), logWriteMax)], '\n') + 1
		if n == 0 { // a line longer than logWriteMax goes alone
			if n = bytes.IndexByte(rest, '\n') + 1; n == 0 {
				n = len(rest)
			}
		}
		o.to.Write(rest[:n])
		rest = rest[n:]
	}
	o.held = o.held[:0]
	if cap(o.held) > 2*logHeldMax { // one long line's room is not kept for good
		o.held = nil
	}
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
