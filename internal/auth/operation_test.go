package auth

import (
	"context"
	"testing"

	"github.com/paygate/paygate/internal/apierror"
)

// TestAuthorizeFailsClosed: an operation without a scope is refused to everyone unless it is
// public or open to any principal, so one added without its scope is never open by mistake.
func TestAuthorizeFailsClosed(t *testing.T) {
	admin := WithPrincipal(context.Background(), Principal{Subject: "usr_a", Role: "admin", Scopes: ScopesOf("admin")})
	anonymous := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		op   Operation
		want apierror.Code
	}{
		{"unset, anonymous", anonymous, Operation{Name: "new"}, apierror.Unauthenticated},
		{"unset, admin", admin, Operation{Name: "new"}, apierror.Forbidden},
		{"public, anonymous", anonymous, Login, ""},
		{"scoped, anonymous", anonymous, CreatePayment, apierror.Unauthenticated},
		{"scoped, admin", admin, CreatePayment, ""},
		{"any principal, anonymous", anonymous, Logout, apierror.Unauthenticated},
		{"any principal, scopeless", WithPrincipal(context.Background(), Principal{Subject: "usr_b", Role: "none"}), Logout, ""},
	} {
		if got := codeOf(Authorize(tc.ctx, tc.op)); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, op := range Operations {
		if op.Scope == "" && !op.Public && !op.Authenticated {
			t.Errorf("operation %s has no scope and is neither public nor open to any principal: nobody may ask it", op.Name)
		}
	}
}

// TestEveryMerchantOperationsArePlatformStaffs: an operation that reads every merchant's data is
// refused to anyone but platform staff, whatever scopes they hold.
func TestEveryMerchantOperationsArePlatformStaffs(t *testing.T) {
	for _, op := range Operations {
		if op.EveryMerchant && (!op.Platform || op.Public || op.Authenticated || op.Scope == "") {
			t.Errorf("%s reads every merchant's data but is not a platform operation with a scope: %+v", op.Name, op)
		}
	}
}
