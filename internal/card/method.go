package card

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PaymentMethod is how a payment is paid; stored and served over REST in lower case.
type PaymentMethod string

// MethodCreditCard is the only method so far.
const MethodCreditCard PaymentMethod = "credit_card"

// Values lists every payment method; ent uses it for the column's allowed values.
func (PaymentMethod) Values() []string { return []string{string(MethodCreditCard)} }

// Valid reports whether m is a known method.
func (m PaymentMethod) Valid() bool { return m == MethodCreditCard }

// MarshalGQL writes the GraphQL enum name.
func (m PaymentMethod) MarshalGQL(w io.Writer) {
	io.WriteString(w, strconv.Quote(strings.ToUpper(string(m))))
}

// UnmarshalGQL reads the GraphQL enum name.
func (m *PaymentMethod) UnmarshalGQL(v any) error {
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("payment method must be a string")
	}
	*m = PaymentMethod(strings.ToLower(name))
	if !m.Valid() {
		return fmt.Errorf("%q is not a payment method", name)
	}
	return nil
}
