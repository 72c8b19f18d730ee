package auth

import (
	"context"
	"slices"
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

// TestEveryOperationHasARateClass: an operation added without a rate class would escape every
// limit; one that checks credentials must be in the credentials class, which is throttled hardest.
func TestEveryOperationHasARateClass(t *testing.T) {
	for _, op := range Operations {
		if !slices.Contains(RateClasses, op.RateClass) {
			t.Errorf("operation %s has rate class %q, not one of %v", op.Name, op.RateClass, RateClasses)
		}
		if op.Public != (op.RateClass == RateCredentials) {
			t.Errorf("operation %s: public %v, rate class %s; the public operations are those that check credentials", op.Name, op.Public, op.RateClass)
		}
		if op.Idempotent && op.RateClass != RateWrite {
			t.Errorf("operation %s moves money (idempotent) but is in rate class %s", op.Name, op.RateClass)
		}
	}
}
