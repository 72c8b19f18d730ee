// Package apierror is the one error type of the API: a stable code, a message for people and the
// parameter at fault. It knows nothing of HTTP: the web package maps each code to its HTTP
// status at the edge; GraphQL answers with the code as extensions.code.
package apierror

import "errors"

// Code is a stable, machine-readable error code.
type Code string

const (
	InvalidRequest       Code = "invalid_request"
	InvalidAmount        Code = "invalid_amount"
	InvalidCurrency      Code = "invalid_currency"
	InvalidCard          Code = "invalid_card"
	InvalidPaymentMethod Code = "invalid_payment_method"
	MissingField         Code = "missing_field"
	Unauthenticated      Code = "unauthenticated"
	InvalidCredentials   Code = "invalid_credentials"
	TokenExpired         Code = "token_expired"
	TokenInvalid         Code = "token_invalid"
	TokenRevoked         Code = "token_revoked"
	RefreshTokenReused   Code = "refresh_token_reused"
	// UserDisabled ends a subscription whose user was disabled (a request of theirs is refused
	// token_revoked, as their sessions are revoked).
	UserDisabled Code = "user_disabled"
	// InvalidSignature refuses a provider webhook whose signature is missing or wrong.
	InvalidSignature  Code = "invalid_signature"
	CardDeclined      Code = "card_declined"
	InsufficientFunds Code = "insufficient_funds"
	ExpiredCard       Code = "expired_card"
	Forbidden         Code = "forbidden"
	NotFound          Code = "not_found"
	// MerchantUnavailable refuses acting for a merchant that does not exist or is disabled.
	MerchantUnavailable  Code = "merchant_unavailable"
	MethodNotAllowed     Code = "method_not_allowed"
	InvalidState         Code = "invalid_state"
	RefundExceedsPayment Code = "refund_exceeds_payment"
	// CaptureExceedsAuthorization refuses a capture of more than an authorisation holds.
	CaptureExceedsAuthorization Code = "capture_exceeds_authorization"
	IdempotencyKeyInUse         Code = "idempotency_key_in_use"
	IdempotencyKeyReused        Code = "idempotency_key_reused"
	PayloadTooLarge             Code = "payload_too_large"
	// UnsupportedMediaType refuses a request body that is not JSON.
	UnsupportedMediaType Code = "unsupported_media_type"
	// QueryTooComplex refuses a GraphQL document over a bound of size, depth or estimated cost.
	QueryTooComplex Code = "query_too_complex"
	// IntrospectionDisabled refuses GraphQL introspection in production.
	IntrospectionDisabled Code = "introspection_disabled"
	// RateLimited refuses a request over its bucket's rate; Retry-After says when to come back.
	RateLimited         Code = "rate_limited"
	ProviderUnavailable Code = "provider_unavailable"
	ServiceUnavailable  Code = "service_unavailable"
	// SubscriberTooSlow ends a subscription that reads changes slower than they come.
	SubscriberTooSlow Code = "subscriber_too_slow"
	Internal          Code = "internal_error"
)

// Error is an API error.
type Error struct {
	Code    Code
	Message string
	// Param names the request field at fault in REST's snake_case ("card.exp_month"), or is empty.
	Param string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New returns an error with no parameter.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// ForParam returns an error about one request field.
func ForParam(code Code, param, message string) *Error {
	return &Error{Code: code, Message: message, Param: param}
}

// From returns err as an API error; anything that is not one becomes internal_error, with a
// message that reveals nothing of the cause.
func From(err error) *Error {
	if apiErr, ok := errors.AsType[*Error](err); ok {
		return apiErr
	}
	return New(Internal, "an internal error occurred")
}
