// Package background runs Paygate's periodic work, each job in a loop of its own: every interval
// (and at once when woken) until the context ends. A round that fails is logged and the next one
// goes on, since each job picks up whatever the last round left.
package background

import (
	"context"
	"log/slog"
	"time"
)

// Loop is one periodic job.
type Loop struct {
	// Name says, in the log, what failed.
	Name  string
	Every time.Duration
	// AtStart runs a round as soon as the loop starts, not only after the first interval.
	AtStart bool
	// Wake, when set, starts a round at once whenever it receives.
	Wake <-chan struct{}
	Run  func(ctx context.Context) error
}

// Start runs each loop in its own goroutine until ctx ends.
func Start(ctx context.Context, logger *slog.Logger, loops ...Loop) {
	for _, loop := range loops {
		go loop.run(ctx, logger)
	}
}

func (l Loop) run(ctx context.Context, logger *slog.Logger) {
	ticker := time.NewTicker(l.Every)
	defer ticker.Stop()
	if l.AtStart {
		l.round(ctx, logger)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-l.Wake:
		}
		if ctx.Err() != nil {
			return // a tick that came with the end starts no round
		}
		l.round(ctx, logger)
	}
}

func (l Loop) round(ctx context.Context, logger *slog.Logger) {
	if err := l.Run(ctx); err != nil && ctx.Err() == nil {
		logger.WarnContext(ctx, l.Name+" failed", "error", err)
	}
}
