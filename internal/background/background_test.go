package background

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/logtest"
)

func TestLoopRunsAtStartWhenWokenAndLogsFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rounds := make(chan int, 10)
	wake := make(chan struct{})
	count := 0
	var logs logtest.Buffer
	Start(ctx, slog.New(slog.NewTextHandler(&logs, nil)), Loop{Name: "counting", Every: time.Hour, AtStart: true, Wake: wake,
		Run: func(context.Context) error {
			count++
			rounds <- count
			return errors.New("round failed")
		}})
	wait := func(want int) {
		t.Helper()
		select {
		case got := <-rounds:
			if got != want {
				t.Errorf("round %d, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d never ran", want)
		}
	}
	wait(1) // at start, not an hour later
	wake <- struct{}{}
	wait(2)
	cancel()
	if deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "counting failed") {
		for time.Now().Before(deadline) && !strings.Contains(logs.String(), "counting failed") {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !strings.Contains(logs.String(), `msg="counting failed" error="round failed"`) {
		t.Errorf("logs = %q", logs.String())
	}
}

func TestLoopStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{}, 100)
	Start(ctx, slog.New(slog.DiscardHandler), Loop{Name: "ticking", Every: time.Millisecond,
		Run: func(context.Context) error { ran <- struct{}{}; return nil }})
	<-ran
	cancel()
	time.Sleep(20 * time.Millisecond) // a round under way when cancelled may still finish
	for len(ran) > 0 {
		<-ran
	}
	time.Sleep(20 * time.Millisecond)
	if len(ran) != 0 {
		t.Errorf("%d rounds ran after the context ended", len(ran))
	}
}

// stopping runs Stop(ctx) on g in the background and returns a channel closed when it returns.
func stopping(g *Group, ctx context.Context) <-chan struct{} {
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		g.Stop(ctx)
	}()
	return returned
}

// stillRunning fails the test if done is closed: what it waits for must not have ended. A wrong
// Stop could slip past the short look; a right one never fails it.
func stillRunning(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
		t.Fatal(what)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestStopLetsTheRoundUnderWayFinish: once Stop is called no round starts, the round under way
// finishes with its context intact, and the work it left running is waited for too; Stop returns
// after both, and the loops marked AtStop then run once more.
func TestStopLetsTheRoundUnderWayFinish(t *testing.T) {
	events := make(chan string, 10)
	started, release, releaseLeft := make(chan struct{}), make(chan struct{}), make(chan struct{})
	wake := make(chan struct{}, 1)
	var left sync.WaitGroup
	rounds := 0
	g := Start(t.Context(), slog.New(slog.DiscardHandler),
		Loop{Name: "working", Every: time.Hour, AtStart: true, Wake: wake, Wait: left.Wait, Run: func(ctx context.Context) error {
			rounds++
			left.Go(func() { // as a webhook delivery's try goes on after its round
				<-releaseLeft
				events <- "the work left running ended"
			})
			close(started)
			<-release
			if ctx.Err() != nil {
				events <- "the round was cancelled"
			}
			events <- "the round finished"
			return nil
		}},
		Loop{Name: "writing what is kept in memory", Every: time.Hour, AtStop: true, Run: func(ctx context.Context) error {
			events <- "the round at stop"
			return nil
		}})
	<-started
	stopped := stopping(g, context.Background())
	<-g.stopping
	wake <- struct{}{} // wants a round: none starts once stopping
	stillRunning(t, stopped, "Stop returned while a round was under way")
	close(release)
	// The round's own end first, however slow the machine: the work it left is still held.
	if first := <-events; first != "the round finished" {
		t.Fatalf("the round ended with %q", first)
	}
	stillRunning(t, stopped, "Stop returned while the work a round left was running")
	close(releaseLeft)
	<-stopped
	g.RunAtStop(context.Background())
	close(events)
	var got []string
	for e := range events {
		got = append(got, e)
	}
	want := []string{"the work left running ended", "the round at stop"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if rounds != 1 {
		t.Errorf("%d rounds ran, want the one under way at Stop", rounds)
	}
}

// TestStopCancelsARoundPastItsBound: a round still running when Stop's context ends is
// cancelled, and Stop returns as it ends.
func TestStopCancelsARoundPastItsBound(t *testing.T) {
	events := make(chan string, 10)
	started := make(chan struct{})
	g := Start(t.Context(), slog.New(slog.DiscardHandler), Loop{Name: "stuck", Every: time.Hour, AtStart: true, Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		events <- "the round was cancelled"
		return ctx.Err()
	}})
	<-started
	bound, passBound := context.WithCancel(context.Background())
	stopped := stopping(g, bound)
	stillRunning(t, stopped, "Stop returned before its bound, with a round under way")
	events <- "the bound passed"
	passBound()
	<-stopped
	events <- "Stop returned"
	close(events)
	var got []string
	for e := range events {
		got = append(got, e)
	}
	if want := []string{"the bound passed", "the round was cancelled", "Stop returned"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestRoundAtStopLogsItsFailure: what a round at stop failed to write is lost, so its failure is
// logged, even one for its bound.
func TestRoundAtStopLogsItsFailure(t *testing.T) {
	var logs logtest.Buffer
	g := Start(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)),
		Loop{Name: "writing uses", Every: time.Hour, AtStop: true, Run: func(ctx context.Context) error { return ctx.Err() }})
	g.Stop(context.Background())
	past, cancel := context.WithCancel(context.Background())
	cancel()
	g.RunAtStop(past)
	if !strings.Contains(logs.String(), `msg="writing uses failed at stop`) || !strings.Contains(logs.String(), "context canceled") {
		t.Errorf("logs = %q", logs.String())
	}
}

// TestSpacingMakesABurstOfWakesOneRound: the wakes during a round and the spacing after it make
// one more round, at the spacing's end, not one each; Stop does not wait out the spacing.
func TestSpacingMakesABurstOfWakesOneRound(t *testing.T) {
	const spacing = 300 * time.Millisecond
	rounds := make(chan time.Time, 10)
	wake := make(chan struct{}, 1)
	g := Start(t.Context(), slog.New(slog.DiscardHandler), Loop{Name: "spaced", Every: time.Hour, Wake: wake, Spacing: spacing,
		Run: func(context.Context) error { rounds <- time.Now(); return nil }})
	next := func() time.Time {
		t.Helper()
		select {
		case at := <-rounds:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no round ran")
			return time.Time{}
		}
	}
	wake <- struct{}{}
	first := next()
	for range 20 { // a burst, as every payment committed under load wakes the deliveries
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	// Half the spacing: each round notes its start a moment after the loop's own clock does, and
	// that moment differs from round to round; without spacing the gap is microseconds.
	if second := next(); second.Sub(first) < spacing/2 {
		t.Errorf("the second round began %s after the first, well within the spacing of %s", second.Sub(first), spacing)
	}
	time.Sleep(2 * spacing) // no wake is left: a third round would be one of the burst's
	if len(rounds) != 0 {
		t.Errorf("%d more rounds ran for one burst of wakes", len(rounds))
	}
	g.Stop(context.Background())

	g = Start(t.Context(), slog.New(slog.DiscardHandler), Loop{Name: "spaced for long", Every: time.Hour, AtStart: true, Spacing: time.Hour,
		Run: func(context.Context) error { rounds <- time.Now(); return nil }})
	next() // a round, then an hour's spacing
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g.Stop(ctx)
	if ctx.Err() != nil {
		t.Error("Stop waited out the spacing instead of ending the loop")
	}
}
