// Package clock is Paygate's one source of the time: the application is handed a clock, so
// tests can move time forward instead of waiting for it.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock says what time it is.
type Clock func() time.Time

// System is the machine's time in UTC, to the microsecond: as PostgreSQL keeps it, so a time
// written and read back compares equal.
func System() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Adjustable is the machine's time moved forward by however much it was advanced: time still
// passes, and a test can pass an hour or a day of it at once.
type Adjustable struct {
	ahead atomic.Int64 // nanoseconds
}

// Now is the machine's time plus what the clock was advanced by.
func (a *Adjustable) Now() time.Time { return System().Add(time.Duration(a.ahead.Load())) }

// Advance moves the clock forward by d.
func (a *Adjustable) Advance(d time.Duration) { a.ahead.Add(int64(d)) }
