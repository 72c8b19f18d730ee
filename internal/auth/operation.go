package auth

import "context"

// Operation is one thing a client asks of Paygate, the same over REST and GraphQL: what the
// principal must hold to ask it, and whether an idempotency key applies. This table is the one
// place that says so; the services authorise every call from it, and each surface reads it to
// refuse early (REST before decoding a body, GraphQL before reading a root field's arguments;
// the schema's @hasScope directives, which a test holds to this table, say the same).
type Operation struct {
	// Name is the operation's GraphQL field; its REST route calls the same resolver.
	Name string
	// Scope is what the principal must hold.
	Scope string
	// Public operations are open to anyone, with or without credentials. Any other operation
	// without a scope is refused to everyone, so one left unset fails closed.
	Public bool
	// Idempotent operations take an idempotency key: a retry with the key replays the first
	// answer instead of running again.
	Idempotent bool
}

var (
	Login         = Operation{Name: "login", Public: true}
	RefreshToken  = Operation{Name: "refreshToken", Public: true}
	CreatePayment = Operation{Name: "createPayment", Scope: ScopePaymentsWrite, Idempotent: true}
	RefundPayment = Operation{Name: "refundPayment", Scope: ScopeRefundsWrite, Idempotent: true}
	GetPayment    = Operation{Name: "payment", Scope: ScopePaymentsRead}
	ListPayments  = Operation{Name: "payments", Scope: ScopePaymentsRead}
	GetRefund     = Operation{Name: "refund", Scope: ScopePaymentsRead}
)

// Operations lists every operation.
var Operations = []Operation{Login, RefreshToken, CreatePayment, RefundPayment, GetPayment, ListPayments, GetRefund}

// OperationNamed returns the operation of a GraphQL root field, if the field is one.
func OperationNamed(name string) (Operation, bool) {
	for _, op := range Operations {
		if op.Name == name {
			return op, true
		}
	}
	return Operation{}, false
}

// Authorize returns nil when the request's principal may ask op, and otherwise the error to
// answer with: 401 without valid credentials, 403 without the scope.
func Authorize(ctx context.Context, op Operation) error {
	if op.Public {
		return nil
	}
	return RequireScope(ctx, op.Scope)
}
