package web

import (
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/apierror"
)

func TestEveryCodeHasAClientOrServerStatus(t *testing.T) {
	for code, status := range statusByCode {
		if status < 400 || status > 599 {
			t.Errorf("%s maps to %d", code, status)
		}
	}
	if got := Status(apierror.CardDeclined); got != http.StatusPaymentRequired {
		t.Errorf("card_declined = %d, want 402", got)
	}
	if got := Status("no_such_code"); got != http.StatusInternalServerError {
		t.Errorf("unknown code = %d, want 500", got)
	}
}
