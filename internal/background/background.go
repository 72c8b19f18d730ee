// Package background runs Paygate's periodic work, each job in a loop of its own: every interval
// (and at once when woken) until the context ends or the group is stopped. A round that fails is
// logged and the next one goes on, since each job picks up whatever the last round left.
package background

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Loop is one periodic job.
type Loop struct {
	// Name says, in the log, what failed.
	Name  string
	Every time.Duration
	// AtStart runs a round as soon as the loop starts, not only after the first interval.
	AtStart bool
	// AtStop runs a round once more after the group stopped (RunAtStop): the job writes what
	// would otherwise be lost with the process, such as the API keys' last uses.
	AtStop bool
	// Wake, when set, starts a round at once whenever it receives.
	Wake <-chan struct{}
	// Spacing, when set, is the least time from the start of one round to the start of the next:
	// the wakes and ticks within it make one round at its end, so a burst of wakes (a payment
	// committed by each request under load) costs a round per Spacing, not one each.
	Spacing time.Duration
	Run     func(ctx context.Context) error
	// Wait, when set, returns once the work the rounds left running has ended (the webhook
	// deliveries' tries go on after the round that started them, under its context): the loop
	// stops only after it.
	Wait func()
}

// Group is loops started together and stopped together.
type Group struct {
	logger *slog.Logger
	loops  []Loop
	// stopping is closed by Stop: no round starts after it.
	stopping chan struct{}
	stopOnce sync.Once
	// cancel ends the context the rounds run under.
	cancel  context.CancelFunc
	running sync.WaitGroup
}

// Start runs each loop in its own goroutine until ctx ends, which cancels the rounds under way,
// or until the group is stopped in order with Stop.
func Start(ctx context.Context, logger *slog.Logger, loops ...Loop) *Group {
	ctx, cancel := context.WithCancel(ctx)
	g := &Group{logger: logger, loops: loops, stopping: make(chan struct{}), cancel: cancel}
	for _, loop := range loops {
		g.running.Go(func() { loop.run(ctx, g.stopping, logger) })
	}
	return g
}

// Stop stops the loops in order: no round starts once it is called, the rounds under way (and
// the work they left running) may finish until ctx ends, and whatever still runs then is
// cancelled. It returns once every loop has returned.
func (g *Group) Stop(ctx context.Context) {
	g.stopOnce.Do(func() { close(g.stopping) })
	stopped := make(chan struct{})
	go func() {
		g.running.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		g.cancel()
		<-stopped
	}
	g.cancel() // every round has returned: this only releases their context
}

// RunAtStop runs, once each, a round of the loops marked AtStop, under ctx, and logs every round
// that failed, ctx's end included: what it did not write is lost. Call it after Stop, once
// nothing else makes what those rounds write (the requests are served).
func (g *Group) RunAtStop(ctx context.Context) {
	for _, loop := range g.loops {
		if !loop.AtStop {
			continue
		}
		if err := loop.Run(ctx); err != nil {
			g.logger.ErrorContext(ctx, loop.Name+" failed at stop: what it had to write is lost", "error", err)
		}
	}
}

func (l Loop) run(ctx context.Context, stopping <-chan struct{}, logger *slog.Logger) {
	if l.Wait != nil {
		defer l.Wait()
	}
	ticker := time.NewTicker(l.Every)
	defer ticker.Stop()
	if l.AtStart && !ended(ctx, stopping) && !l.spacedRound(ctx, stopping, logger) {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-stopping:
			return
		case <-ticker.C:
		case <-l.Wake:
		}
		if ended(ctx, stopping) {
			return // a tick that came with the end starts no round
		}
		if !l.spacedRound(ctx, stopping, logger) {
			return
		}
	}
}

// spacedRound runs a round, then waits until Spacing has passed since it started; it reports
// whether the loop goes on.
func (l Loop) spacedRound(ctx context.Context, stopping <-chan struct{}, logger *slog.Logger) bool {
	started := time.Now()
	l.round(ctx, logger)
	wait := l.Spacing - time.Since(started)
	if wait <= 0 {
		return true
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-stopping:
		return false
	case <-timer.C:
		return true
	}
}

// ended reports whether the loop is to start no more rounds.
func ended(ctx context.Context, stopping <-chan struct{}) bool {
	select {
	case <-stopping:
		return true
	default:
		return ctx.Err() != nil
	}
}

func (l Loop) round(ctx context.Context, logger *slog.Logger) {
	if err := l.Run(ctx); err != nil && ctx.Err() == nil {
		logger.WarnContext(ctx, l.Name+" failed", "error", err)
	}
}
