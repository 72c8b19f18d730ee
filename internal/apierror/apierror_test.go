package apierror

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestEveryCodeHasAClientOrServerStatus(t *testing.T) {
	for code, status := range statusByCode {
		if status < 400 || status > 599 {
			t.Errorf("%s maps to %d", code, status)
		}
	}
	if got := CardDeclined.HTTPStatus(); got != http.StatusPaymentRequired {
		t.Errorf("card_declined = %d, want 402", got)
	}
	if got := Code("no_such_code").HTTPStatus(); got != http.StatusInternalServerError {
		t.Errorf("unknown code = %d, want 500", got)
	}
}

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
