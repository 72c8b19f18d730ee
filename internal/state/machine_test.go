package state

import "testing"

func TestPaymentMoves(t *testing.T) {
	allowed := map[[2]PaymentStatus]bool{
		{PaymentPending, PaymentProcessing}:                  true,
		{PaymentPending, PaymentFailed}:                      false, // a payment fails only once processing
		{PaymentProcessing, PaymentSucceeded}:                true,
		{PaymentProcessing, PaymentFailed}:                   true,
		{PaymentProcessing, PaymentRequiresAction}:           true,
		{PaymentProcessing, PaymentRequiresCapture}:          true, // authorised, or a capture refused
		{PaymentRequiresAction, PaymentProcessing}:           true, // authenticated
		{PaymentRequiresAction, PaymentFailed}:               true,
		{PaymentRequiresAction, PaymentCanceled}:             true, // abandoned
		{PaymentRequiresCapture, PaymentProcessing}:          true, // a capture confirmed later
		{PaymentRequiresCapture, PaymentSucceeded}:           true,
		{PaymentRequiresCapture, PaymentCanceled}:            true,
		{PaymentRequiresAction, PaymentSucceeded}:            false, // only through processing
		{PaymentRequiresCapture, PaymentFailed}:              false, // a capture refused leaves the authorisation
		{PaymentCanceled, PaymentProcessing}:                 false,
		{PaymentSucceeded, PaymentPartiallyRefunded}:         true,
		{PaymentSucceeded, PaymentRefunded}:                  true,
		{PaymentPartiallyRefunded, PaymentPartiallyRefunded}: true,
		{PaymentPartiallyRefunded, PaymentRefunded}:          true,
	}
	statuses := PaymentStatus("").Values()
	for _, from := range statuses {
		for _, to := range statuses {
			move := [2]PaymentStatus{PaymentStatus(from), PaymentStatus(to)}
			if got := move[0].CanMoveTo(move[1]); got != allowed[move] {
				t.Errorf("%s -> %s allowed = %v, want %v", from, to, got, allowed[move])
			}
		}
	}
	for _, s := range []PaymentStatus{PaymentSucceeded, PaymentPartiallyRefunded} {
		if !s.Refundable() {
			t.Errorf("%s is not refundable", s)
		}
	}
	for _, s := range []PaymentStatus{PaymentPending, PaymentProcessing, PaymentFailed, PaymentRefunded,
		PaymentRequiresAction, PaymentRequiresCapture, PaymentCanceled} {
		if s.Refundable() {
			t.Errorf("%s is refundable", s)
		}
	}
}

func TestRefundMoves(t *testing.T) {
	for _, from := range RefundStatus("").Values() {
		for _, to := range RefundStatus("").Values() {
			want := from == string(RefundPending) && to != string(RefundPending)
			if got := RefundStatus(from).CanMoveTo(RefundStatus(to)); got != want {
				t.Errorf("%s -> %s allowed = %v, want %v", from, to, got, want)
			}
		}
	}
}
