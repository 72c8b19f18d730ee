package apierror

import (
	"errors"
	"fmt"
	"testing"
)

func TestFromKeepsAPIErrorsAndHidesOthers(t *testing.T) {
	wrapped := fmt.Errorf("creating: %w", ForParam(InvalidAmount, "amount", "too small"))
	if got := From(wrapped); got.Code != InvalidAmount || got.Param != "amount" {
		t.Errorf("From(wrapped) = %+v", got)
	}
	got := From(errors.New("pq: connection refused to secret-host"))
	if got.Code != Internal || got.Message != "an internal error occurred" {
		t.Errorf("From(other) = %+v", got)
	}
}
