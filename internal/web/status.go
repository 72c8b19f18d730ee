package web

import (
	"net/http"

	"github.com/paygate/paygate/internal/apierror"
)

// statusByCode is the HTTP status of each API error code: the one table REST answers and the
// GraphQL endpoint's request errors are rendered from.
var statusByCode = map[apierror.Code]int{
	apierror.InvalidRequest:              http.StatusBadRequest,
	apierror.InvalidAmount:               http.StatusBadRequest,
	apierror.InvalidCurrency:             http.StatusBadRequest,
	apierror.InvalidCard:                 http.StatusBadRequest,
	apierror.InvalidPaymentMethod:        http.StatusBadRequest,
	apierror.MissingField:                http.StatusBadRequest,
	apierror.Unauthenticated:             http.StatusUnauthorized,
	apierror.InvalidCredentials:          http.StatusUnauthorized,
	apierror.TokenExpired:                http.StatusUnauthorized,
	apierror.TokenInvalid:                http.StatusUnauthorized,
	apierror.TokenRevoked:                http.StatusUnauthorized,
	apierror.RefreshTokenReused:          http.StatusUnauthorized,
	apierror.UserDisabled:                http.StatusUnauthorized,
	apierror.InvalidSignature:            http.StatusUnauthorized,
	apierror.CardDeclined:                http.StatusPaymentRequired,
	apierror.InsufficientFunds:           http.StatusPaymentRequired,
	apierror.ExpiredCard:                 http.StatusPaymentRequired,
	apierror.Forbidden:                   http.StatusForbidden,
	apierror.MerchantUnavailable:         http.StatusForbidden,
	apierror.NotFound:                    http.StatusNotFound,
	apierror.MethodNotAllowed:            http.StatusMethodNotAllowed,
	apierror.InvalidState:                http.StatusConflict,
	apierror.RefundExceedsPayment:        http.StatusUnprocessableEntity,
	apierror.CaptureExceedsAuthorization: http.StatusUnprocessableEntity,
	apierror.IdempotencyKeyInUse:         http.StatusConflict,
	apierror.IdempotencyKeyReused:        http.StatusUnprocessableEntity,
	apierror.PayloadTooLarge:             http.StatusRequestEntityTooLarge,
	apierror.UnsupportedMediaType:        http.StatusUnsupportedMediaType,
	apierror.RateLimited:                 http.StatusTooManyRequests,
	apierror.QueryTooComplex:             http.StatusBadRequest,
	apierror.IntrospectionDisabled:       http.StatusBadRequest,
	apierror.ProviderUnavailable:         http.StatusBadGateway,
	apierror.ServiceUnavailable:          http.StatusServiceUnavailable,
	apierror.SubscriberTooSlow:           http.StatusTooManyRequests,
	apierror.Internal:                    http.StatusInternalServerError,
}

// Status returns the HTTP status an API error code answers with; a code not in the table is a
// server error.
func Status(code apierror.Code) int {
	if status, ok := statusByCode[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}
