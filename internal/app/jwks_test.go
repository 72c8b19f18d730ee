package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/logtest"
)

// TestTokensSignedWithAKeyAreVerifiedByAnyone: a server given a private key signs its access
// tokens with it, and every server publishes its public half at /.well-known/jwks.json, where a
// JOSE library written by others verifies them. Servers still on the shared secret take the
// keyed tokens and the others take theirs, so a deployment moving to keys logs no one out. A key
// replaced stays published until its last token has expired, then is gone.
func TestTokensSignedWithAKeyAreVerifiedByAnyone(t *testing.T) {
	t.Parallel()
	edwards := writeKey(t, "PRIVATE KEY", func() []byte {
		_, private, _ := ed25519.GenerateKey(rand.Reader)
		der, _ := x509.MarshalPKCS8PrivateKey(private)
		return der
	})
	rsaKey := writeKey(t, "RSA PRIVATE KEY", func() []byte {
		private, _ := rsa.GenerateKey(rand.Reader, 2048)
		return x509.MarshalPKCS1PrivateKey(private)
	})
	databasetest.ForEachPools(t, 3, func(t *testing.T, pools []*database.DB) {
		keyed := newTestEnv(t, pools[0], "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey, "PAYGATE_JWT_PRIVATE_KEY_FILE="+edwards)
		shared := newTestEnv(t, pools[1], "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
		for _, s := range []*testEnv{keyed, shared} {
			s.app.Start(t.Context())
		}
		email := keyed.userWith("viewer")
		token, _ := keyed.login(email)
		header := tokenHeader(t, token)
		if header["alg"] != "EdDSA" || header["kid"] == "" {
			t.Fatalf("a keyed server's token has the header %v", header)
		}
		// Every server publishes the key, whether or not it signs with one itself.
		for name, s := range map[string]*testEnv{"keyed": keyed, "shared-secret": shared} {
			set := fetchJWKS(t, s)
			if set.Len() != 1 {
				t.Errorf("the %s server publishes %d keys", name, set.Len())
			}
			if _, err := jws.Verify([]byte(token), jws.WithKeySet(set, jws.WithRequireKid(true))); err != nil {
				t.Errorf("the token does not verify against the %s server's keys: %v", name, err)
			}
		}
		if status, _ := shared.answers(token); status != http.StatusOK {
			t.Errorf("a keyed token on a server on the shared secret answered %d", status)
		}
		sharedToken, _ := shared.login(email)
		if header := tokenHeader(t, sharedToken); header["alg"] != "HS256" {
			t.Errorf("a shared-secret server's token has the header %v", header)
		}
		if status, _ := keyed.answers(sharedToken); status != http.StatusOK {
			t.Errorf("a shared-secret token on a keyed server answered %d", status)
		}
		// A token signed with another key, or naming another algorithm for its key, is refused.
		forged := strings.Split(token, ".")
		forged[0] = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","kid":"` + header["kid"].(string) + `","typ":"JWT"}`))
		if status, code := keyed.answers(strings.Join(forged, ".")); status != http.StatusUnauthorized || code != "token_invalid" {
			t.Errorf("a token naming RS256 for an Ed25519 key = %d %s", status, code)
		}

		// The key is replaced on a server starting now: its tokens are taken at once by the
		// others, and both keys are published while the old one's tokens live.
		rotated := newTestEnv(t, pools[2], "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey, "PAYGATE_JWT_PRIVATE_KEY_FILE="+rsaKey)
		newToken, _ := rotated.login(email)
		if header := tokenHeader(t, newToken); header["alg"] != "RS256" {
			t.Fatalf("the rotated server's token has the header %v", header)
		}
		for name, s := range map[string]*testEnv{"keyed": keyed, "shared-secret": shared} {
			if status, _ := s.answers(newToken); status != http.StatusOK {
				t.Errorf("a token of the new key on the %s server answered %d", name, status)
			}
		}
		if status, _ := rotated.answers(token); status != http.StatusOK {
			t.Errorf("a token of the old key on the rotated server answered %d", status)
		}
		set := fetchJWKS(t, rotated)
		for _, tok := range []string{token, newToken} {
			if _, err := jws.Verify([]byte(tok), jws.WithKeySet(set, jws.WithRequireKid(true))); set.Len() != 2 || err != nil {
				t.Errorf("after the rotation, %d keys published: %v", set.Len(), err)
			}
		}
		// Once no server has said it signs with the old key for longer than its tokens live, it
		// is published no more.
		rotated.clock.Advance(auth.AccessTokenLifetime)
		if err := rotated.app.services.auth.Tokens().Keys.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		if set := fetchJWKS(t, rotated); set.Len() != 2 {
			t.Errorf("a token's lifetime after the old key was last announced, %d keys are published; want it still", set.Len())
		}
		rotated.clock.Advance(2 * time.Minute)
		if err := errors.Join(rotated.app.services.auth.Tokens().Keys.Announce(context.Background()), rotated.app.services.auth.Tokens().Keys.Load(context.Background())); err != nil {
			t.Fatal(err)
		}
		set = fetchJWKS(t, rotated)
		if _, err := jws.Verify([]byte(newToken), jws.WithKeySet(set, jws.WithRequireKid(true))); set.Len() != 1 || err != nil {
			t.Errorf("past the old key's tokens, %d keys published (%v); want the new one alone", set.Len(), err)
		}
	})
}

// TestABadSigningKeyStopsTheStart: a key file that is no key Paygate signs with is a start error
// naming the variable and what is wrong.
func TestABadSigningKeyStopsTheStart(t *testing.T) {
	t.Parallel()
	db := databasetest.SQLite(t)
	for name, tc := range map[string]struct{ path, want string }{
		"missing": {filepath.Join(t.TempDir(), "absent.pem"), "no such file"},
		"not PEM": {writeFile(t, []byte("not a key")), "no PEM block"},
		"a public key": {writeKey(t, "PUBLIC KEY", func() []byte {
			public, _, _ := ed25519.GenerateKey(rand.Reader)
			der, _ := x509.MarshalPKIXPublicKey(public)
			return der
		}), "no private key"},
		"an ECDSA key": {writeKey(t, "PRIVATE KEY", func() []byte {
			private, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			der, _ := x509.MarshalPKCS8PrivateKey(private)
			return der
		}), "Ed25519 or RSA"},
		"a short RSA key": {writeKey(t, "RSA PRIVATE KEY", func() []byte {
			private, _ := rsa.GenerateKey(rand.Reader, 1024)
			return x509.MarshalPKCS1PrivateKey(private)
		}), "too short"},
	} {
		cfg, err := config.Load([]string{"PAYGATE_DATA_DIR=" + t.TempDir(), "PAYGATE_JWT_SECRET=" + testJWTSecret,
			"PAYGATE_API_KEY_SECRET=" + testAPIKeySecret, "PAYGATE_JWT_PRIVATE_KEY_FILE=" + tc.path}, Providers)
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(t.Context(), cfg, db, NewLogger(&logtest.Buffer{}, "info"), clock.System)
		if err == nil || !strings.Contains(err.Error(), "PAYGATE_JWT_PRIVATE_KEY_FILE") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: start = %v, want an error naming the variable and %q", name, err, tc.want)
		}
	}
}

// TestWithoutAKeyNoKeyIsPublished: on the shared secret alone, the key set is empty, not missing.
func TestWithoutAKeyNoKeyIsPublished(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	if set := fetchJWKS(t, env); set.Len() != 0 {
		t.Errorf("%d keys published without a key file", set.Len())
	}
}

// writeKey writes a PEM block of type holding der() to a file of its own, and returns its path.
func writeKey(t *testing.T, blockType string, der func() []byte) string {
	t.Helper()
	return writeFile(t, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der()}))
}

func writeFile(t *testing.T, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fetchJWKS reads the server's published keys, as a verifying service would.
func fetchJWKS(t *testing.T, e *testEnv) jwk.Set {
	t.Helper()
	resp, err := http.Get(e.url + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /.well-known/jwks.json = %d %s %s, %v", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
	}
	set, err := jwk.Parse(body)
	if err != nil {
		t.Fatalf("the published keys are no JWK set: %v\n%s", err, body)
	}
	return set
}

// tokenHeader decodes a JWT's header.
func tokenHeader(t *testing.T, token string) map[string]any {
	t.Helper()
	encoded, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	var header map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &header)
	}
	if err != nil {
		t.Fatalf("the token's header: %v", err)
	}
	return header
}
