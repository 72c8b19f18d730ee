package clock

import (
	"testing"
	"time"
)

func TestSystemIsUTCToTheMicrosecond(t *testing.T) {
	now := System()
	if now.Location() != time.UTC || now.Nanosecond()%1000 != 0 {
		t.Errorf("System() = %v", now)
	}
}

func TestAdjustableMovesForward(t *testing.T) {
	var c Adjustable
	before := c.Now()
	c.Advance(25 * time.Hour)
	if moved := c.Now().Sub(before); moved < 25*time.Hour || moved > 25*time.Hour+time.Minute {
		t.Errorf("advanced 25h, the clock moved %v", moved)
	}
}
