package auth

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/apierror"
)

// Bounds of what a client sends to log in, to name a user or to hand a token back, checked
// before anything is looked up or hashed.
const (
	// MaxEmailLength bounds an email address, in characters: the longest one mail can carry.
	MaxEmailLength = 254
	// MaxTokenLength bounds a token sent back, in characters: an access token Paygate issues is
	// a few hundred, a refresh token 46.
	MaxTokenLength = 2048
	// MaxAPIKeyName bounds an API key's name, in characters.
	MaxAPIKeyName = 100
)

// checkEmail refuses an email address, at param, longer than any address can be.
func checkEmail(param, email string) error {
	if utf8.RuneCountInString(email) > MaxEmailLength {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s is longer than %d characters", param, MaxEmailLength))
	}
	return nil
}

// checkPasswordLength refuses a password, at param, longer than any password is: one sent to be
// compared with a stored one, which the policy never checks (CheckPassword does for new ones).
func checkPasswordLength(param, password string) error {
	if len(password) > MaxPasswordBytes {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s is longer than %d bytes, which no password is", param, MaxPasswordBytes))
	}
	return nil
}

// checkToken refuses a token, at param, longer than any Paygate issues.
func checkToken(param, token string) error {
	if utf8.RuneCountInString(token) > MaxTokenLength {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s is longer than %d characters, which no token is", param, MaxTokenLength))
	}
	return nil
}

// AllScopes lists every scope there is: a list of scopes naming each once holds at most as many.
func AllScopes() []string { return slices.Clone(platformAdminScopes) }
