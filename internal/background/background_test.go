package background

import (
	"context"
	"errors"
	"log/slog"
	"strings"
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
