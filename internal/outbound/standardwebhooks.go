package outbound

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Paygate signs what it sends merchants the Standard Webhooks way (standardwebhooks.com), so a
// merchant verifies a delivery with any of its libraries rather than by hand: a webhook-id, a
// webhook-timestamp, and a webhook-signature of "v1,<base64 HMAC-SHA256 of id.timestamp.body>"
// under each secret that signs, space-separated.

// signingSecretPrefix starts every signing secret, as the Standard Webhooks libraries expect.
const signingSecretPrefix = "whsec_"

// Bounds of a signing secret's key, in bytes, as the Standard Webhooks specification sets them.
const (
	minSigningKey = 24
	maxSigningKey = 64
	newSigningKey = 32
)

// MaxSigningSecret is the length of the longest signing secret: whsec_ and the base64 of
// maxSigningKey bytes.
const MaxSigningSecret = len(signingSecretPrefix) + (maxSigningKey+2)/3*4

// NewSigningSecret makes a signing secret: whsec_ and the base64 of 32 random bytes.
func NewSigningSecret() string {
	key := make([]byte, newSigningKey)
	rand.Read(key)
	return signingSecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// CheckSigningSecret refuses a secret that is not whsec_ and the base64 of 24 to 64 bytes: one
// the Standard Webhooks libraries would read otherwise, or not at all.
func CheckSigningSecret(secret string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, signingSecretPrefix))
	if !strings.HasPrefix(secret, signingSecretPrefix) || err != nil || len(key) < minSigningKey || len(key) > maxSigningKey {
		return fmt.Errorf("a signing secret is %s followed by the base64 of %d to %d bytes", signingSecretPrefix, minSigningKey, maxSigningKey)
	}
	return nil
}

// SignedHeaders are the Standard Webhooks headers of body sent as message id at: one signature per
// secret, so that while a rotated secret still signs beside its successor, an endpoint that
// knows either verifies the delivery.
func SignedHeaders(id string, at time.Time, body []byte, secrets ...string) (http.Header, error) {
	signatures := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		signer, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, err
		}
		signature, err := signer.Sign(id, at, body)
		if err != nil {
			return nil, err
		}
		signatures = append(signatures, signature)
	}
	header := http.Header{}
	header.Set(standardwebhooks.HeaderWebhookID, id)
	header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	header.Set(standardwebhooks.HeaderWebhookSignature, strings.Join(signatures, " "))
	return header, nil
}
