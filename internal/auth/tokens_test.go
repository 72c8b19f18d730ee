package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paygate/paygate/internal/apierror"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func codeOf(err error) apierror.Code {
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok {
		return apiErr.Code
	}
	return ""
}

func TestTokensRoundTrip(t *testing.T) {
	tokens, err := NewTokens(secret, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	token, err := tokens.Issue("usr_1", "developer", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := tokens.Verify(token)
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "usr_1" || p.Role != "developer" || !p.Can(ScopePaymentsWrite) || p.Can(ScopeRefundsWrite) {
		t.Errorf("principal = %+v", p)
	}
	if _, err := NewTokens([]byte("short"), time.Now); err == nil {
		t.Error("a short secret was accepted")
	}
}

func TestTokensRefuseForgeries(t *testing.T) {
	tokens, _ := NewTokens(secret, time.Now)
	now := time.Now()
	valid := jwt.MapClaims{"sub": "usr_1", "role": "admin", "scope": ScopePaymentsRead, "iss": issuer,
		"aud": audience, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	with := func(key string, value any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for k, v := range valid {
			c[k] = v
		}
		if value == nil {
			delete(c, key)
		} else {
			c[key] = value
		}
		return c
	}
	sign := func(method jwt.SigningMethod, claims jwt.MapClaims, key any) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := map[string]struct {
		token string
		code  apierror.Code
	}{
		"alg none":                    {sign(jwt.SigningMethodNone, valid, jwt.UnsafeAllowNoneSignatureType), apierror.TokenInvalid},
		"HS512":                       {sign(jwt.SigningMethodHS512, valid, secret), apierror.TokenInvalid},
		"other secret":                {sign(jwt.SigningMethodHS256, valid, []byte("another-secret-another-secret-00")), apierror.TokenInvalid},
		"wrong issuer":                {sign(jwt.SigningMethodHS256, with("iss", "evil"), secret), apierror.TokenInvalid},
		"wrong audience":              {sign(jwt.SigningMethodHS256, with("aud", "other"), secret), apierror.TokenInvalid},
		"no expiry":                   {sign(jwt.SigningMethodHS256, with("exp", nil), secret), apierror.TokenInvalid},
		"no subject":                  {sign(jwt.SigningMethodHS256, with("sub", nil), secret), apierror.TokenInvalid},
		"expired":                     {sign(jwt.SigningMethodHS256, with("exp", now.Add(-clockSkew-time.Second).Unix()), secret), apierror.TokenExpired},
		"issued in future":            {sign(jwt.SigningMethodHS256, with("iat", now.Add(clockSkew+time.Minute).Unix()), secret), apierror.TokenInvalid},
		"not a jwt":                   {"abc", apierror.TokenInvalid},
		"no issue time":               {sign(jwt.SigningMethodHS256, with("iat", nil), secret), apierror.TokenInvalid},
		"ten years":                   {sign(jwt.SigningMethodHS256, with("exp", now.AddDate(10, 0, 0).Unix()), secret), apierror.TokenInvalid},
		"issued long ago, valid long": {sign(jwt.SigningMethodHS256, with("iat", now.Add(-time.Hour).Unix()), secret), apierror.TokenInvalid},
		"a lifetime over the most":    {sign(jwt.SigningMethodHS256, with("exp", now.Add(AccessTokenLifetime+clockSkew+time.Minute).Unix()), secret), apierror.TokenInvalid},
	}
	if ok := sign(jwt.SigningMethodHS256, valid, secret); codeOf(func() error { _, err := tokens.Verify(ok); return err }()) != "" {
		t.Fatal("the valid control token was refused")
	}
	for name, tt := range tests {
		_, err := tokens.Verify(tt.token)
		if got := codeOf(err); got != tt.code {
			t.Errorf("%s: code %q, want %q", name, got, tt.code)
		}
	}
}

// TestVerifiedTokensStillEnd: a token remembered as verified still expires and is still revoked.
func TestVerifiedTokensStillEnd(t *testing.T) {
	clock := time.Now()
	tokens, _ := NewTokens(secret, func() time.Time { return clock })
	tokens.Revocations = NewRevocations(nil, func() time.Time { return clock })
	token, _ := tokens.Issue("usr_1", "viewer", "fam_1")
	for range 2 { // verified, then remembered
		if _, err := tokens.Verify(token); err != nil {
			t.Fatal(err)
		}
	}
	tokens.Revocations.remember("fam_1", clock.Add(time.Hour))
	if _, err := tokens.Verify(token); codeOf(err) != apierror.TokenRevoked {
		t.Errorf("a remembered token of a revoked session = %v", err)
	}
	other, _ := tokens.Issue("usr_1", "viewer", "fam_2")
	tokens.Verify(other)
	clock = clock.Add(AccessTokenLifetime + clockSkew)
	if _, err := tokens.Verify(other); codeOf(err) != apierror.TokenExpired {
		t.Errorf("a remembered token past its end = %v", err)
	}
}
