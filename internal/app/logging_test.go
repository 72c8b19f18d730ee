package app

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/logtest"
)

// messages are the msg of each line written, in order; a line that is not whole JSON fails the test.
func messages(t *testing.T, written string) []string {
	t.Helper()
	var msgs []string
	scanner := bufio.NewScanner(strings.NewReader(written))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var line struct{ Msg string }
		if err := json.Unmarshal(scanner.Bytes(), &line); err != nil {
			t.Fatalf("a line that is not whole: %q (%v)", scanner.Text(), err)
		}
		msgs = append(msgs, line.Msg)
	}
	return msgs
}

func TestServerLogHoldsLinesUntilATickAWarningOrTheStop(t *testing.T) {
	out := &logtest.Buffer{}
	ticks := make(chan time.Time) // unbuffered: a second tick is taken only once the first is done
	logger, stop := newHeldLogger(out, "info", ticks)
	defer stop()

	logger.Debug("below the level")
	logger.Info("first")
	logger.Info("second")
	if got := out.String(); got != "" {
		t.Fatalf("written before any tick: %s", got)
	}
	ticks <- time.Now()
	ticks <- time.Now()
	if got := messages(t, out.String()); strings.Join(got, ",") != "first,second" {
		t.Fatalf("after a tick = %v, want first, second", got)
	}

	logger.Info("third")
	logger.With("component", "x").WithGroup("g").Warn("a warning")
	if got := messages(t, out.String()); strings.Join(got, ",") != "first,second,third,a warning" {
		t.Fatalf("after a warning = %v: the warning, and what was held before it, are written at once", got)
	}
	logger.Error("an error")
	if got := messages(t, out.String()); len(got) != 5 || got[4] != "an error" {
		t.Fatalf("after an error = %v", got)
	}

	slog.NewLogLogger(logger.Handler(), slog.LevelWarn).Print("net/http's error log")
	if got := messages(t, out.String()); len(got) != 6 || got[5] != "net/http's error log" {
		t.Fatalf("after a line of an http.Server's ErrorLog = %v: it is a warning, written at once", got)
	}

	logger.Info("last")
	stop()
	stop() // a second stop is harmless
	if got := messages(t, out.String()); len(got) != 7 || got[6] != "last" {
		t.Fatalf("after the stop = %v: it writes out what is held", got)
	}
	logger.Info("after the stop")
	if got := messages(t, out.String()); len(got) != 8 || got[7] != "after the stop" {
		t.Fatalf("a line after the stop = %v: it is written at once", got)
	}
}

func TestServerLoggerWritesWithinItsTime(t *testing.T) {
	out := &logtest.Buffer{}
	logger, stop := NewServerLogger(out, "info")
	defer stop()
	logger.Info("held")
	// No bound on the time is asserted, only that the ticker writes the line out at all.
	for deadline := time.Now().Add(30 * time.Second); out.String() == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a held line was not written without a stop")
		}
	}
	if got := messages(t, out.String()); strings.Join(got, ",") != "held" {
		t.Errorf("written = %v", got)
	}
}

// writes records each write apart.
type writes struct {
	mu   sync.Mutex
	each []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.each = append(w.each, string(p))
	return len(p), nil
}

func (w *writes) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.each)
}

func TestServerLogWritesOutWhenItHoldsItsMostInWholeLines(t *testing.T) {
	out := &writes{}
	logger, stop := newHeldLogger(out, "info", nil)
	defer stop()
	logger.Info(strings.Repeat("long", logWriteMax/2)) // a line longer than a write's most
	var want int
	for want = 1; len(out.all()) == 0; want++ {
		if want*1000 > 2*logHeldMax {
			t.Fatalf("nothing written after %d lines", want)
		}
		logger.Info(strings.Repeat("x", 900+want%200))
	}
	held := 0
	for _, w := range out.all() {
		held += len(w)
	}
	if held > logHeldMax {
		t.Errorf("wrote %d bytes before the next line, more than the %d held at most", held, logHeldMax)
	}
	stop()
	for i, w := range out.all() {
		lines := strings.Count(w, "\n")
		if !strings.HasSuffix(w, "\n") || (lines > 1 && len(w) > logWriteMax) {
			t.Errorf("write %d: %d bytes, %d lines, ending %q: want whole lines, at most %d bytes unless one line", i, len(w), lines, w[max(0, len(w)-10):], logWriteMax)
		}
	}
	if got := messages(t, strings.Join(out.all(), "")); len(got) != want {
		t.Errorf("%d lines written, want %d", len(got), want)
	}
}

// failingOnce fails its first write and takes every one after.
type failingOnce struct {
	logtest.Buffer
	failed bool
}

func (w *failingOnce) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}

func TestServerLogGoesOnAfterAFailedWrite(t *testing.T) {
	out := &failingOnce{}
	logger, stop := newHeldLogger(out, "info", nil)
	defer stop()
	logger.Warn("lost")
	logger.Warn("written")
	if got := messages(t, out.String()); strings.Join(got, ",") != "written" {
		t.Errorf("after a failed write = %v, want the next line written", got)
	}
}

func TestServerLogFromManyGoroutinesKeepsEveryLineWhole(t *testing.T) {
	out := &logtest.Buffer{}
	ticks := make(chan time.Time)
	logger, stop := newHeldLogger(out, "info", ticks)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				if i%97 == 0 {
					logger.Warn(fmt.Sprintf("%d-%d", w, i))
				} else {
					logger.Info(fmt.Sprintf("%d-%d", w, i), "padding", strings.Repeat("p", i))
				}
			}
		})
	}
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		for range 50 {
			ticks <- time.Now()
		}
	}()
	wg.Wait()
	<-ticking
	stop()
	seen := map[string]int{}
	next := make([]int, writers)
	for _, msg := range messages(t, out.String()) {
		seen[msg]++
		var w, i int
		if _, err := fmt.Sscanf(msg, "%d-%d", &w, &i); err != nil {
			t.Fatalf("unexpected line %q", msg)
		}
		if i != next[w] {
			t.Fatalf("writer %d's line %d came where %d was due: lines out of order", w, i, next[w])
		}
		next[w]++
	}
	if len(seen) != writers*lines {
		t.Errorf("%d distinct lines written, want %d", len(seen), writers*lines)
	}
	for msg, n := range seen {
		if n != 1 {
			t.Errorf("%s written %d times", msg, n)
		}
	}
}
