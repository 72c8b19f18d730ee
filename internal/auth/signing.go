package auth

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/signingkey"
	"github.com/paygate/paygate/internal/tenant"
)

const (
	// keyAnnouncedEvery is how often a server says, in the database, that it still signs with its
	// key.
	keyAnnouncedEvery = time.Minute
	// keyPublishedFor is how long after its last announcement a key is still published and its
	// tokens verified: the last token signed just before the next announcement would have been
	// due lives this long.
	keyPublishedFor = keyAnnouncedEvery + AccessTokenLifetime + clockSkew
	// keysReloadedEvery bounds the reads of the published keys a token naming an unknown key may
	// cause: one a second per server, however many such tokens come.
	keysReloadedEvery = time.Second
	// minRSABits is the smallest RSA key taken: 2048 bits, as NIST asks of keys in use today.
	minRSABits = 2048
)

// SigningKey is a private key access tokens are signed with: Ed25519 (EdDSA) or RSA (RS256).
type SigningKey struct {
	// ID is the key's JWK thumbprint (RFC 7638), the kid of its tokens.
	ID      string
	method  jwt.SigningMethod
	private crypto.Signer
	// jwk is its public half, as published.
	jwk jose.JSONWebKey
}

// ReadSigningKey reads a PEM private key, PKCS #8 (Ed25519 or RSA) or PKCS #1 (RSA).
func ReadSigningKey(path string) (*SigningKey, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(text)
	if block == nil {
		return nil, errors.New("no PEM block: write the key as PEM (openssl genpkey -algorithm ed25519)")
	}
	var parsed any
	switch block.Type {
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		parsed, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("a PEM %q block is no private key Paygate signs with: give an Ed25519 or RSA private key", block.Type)
	}
	if err != nil {
		return nil, err
	}
	key := &SigningKey{}
	switch private := parsed.(type) {
	case ed25519.PrivateKey:
		key.method, key.private = jwt.SigningMethodEdDSA, private
	case *rsa.PrivateKey:
		if private.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("an RSA key of %d bits is too short: give one of at least %d", private.N.BitLen(), minRSABits)
		}
		key.method, key.private = jwt.SigningMethodRS256, private
	default:
		return nil, fmt.Errorf("a %T is no key Paygate signs with: give an Ed25519 or RSA private key", parsed)
	}
	key.jwk = jose.JSONWebKey{Key: key.private.Public(), Algorithm: key.method.Alg(), Use: "sig"}
	thumbprint, err := key.jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	key.ID = base64.RawURLEncoding.EncodeToString(thumbprint)
	key.jwk.KeyID = key.ID
	return key, nil
}

// publishedKey is a key some server signs with, or did lately.
type publishedKey struct {
	algorithm string
	public    crypto.PublicKey
}

// PublishedKeys keeps the public keys every server signs tokens with, as announced in the
// database: this server verifies the tokens of any of them, and publishes them as a JWK set.
type PublishedKeys struct {
	client *ent.Client
	now    func() time.Time
	// own is this server's key; nil when it signs with the shared secret (HS256).
	own *SigningKey

	mu          sync.RWMutex
	keys        map[string]publishedKey
	jwks        []byte
	announcedAt time.Time
	// missReadAt is when a token naming an unknown key last made the keys be read again.
	missReadAt time.Time
}

// NewPublishedKeys returns the keys of the servers sharing client's database; own is this
// server's, or nil.
func NewPublishedKeys(client *ent.Client, own *SigningKey, now func() time.Time) *PublishedKeys {
	return &PublishedKeys{client: client, own: own, now: now, keys: map[string]publishedKey{}, jwks: []byte(`{"keys":[]}`)}
}

// Announce says, once a keyAnnouncedEvery, that this server signs with its key.
func (p *PublishedKeys) Announce(ctx context.Context) error {
	if p.own == nil {
		return nil
	}
	now := p.now()
	p.mu.RLock()
	due := now.Sub(p.announcedAt) >= keyAnnouncedEvery
	p.mu.RUnlock()
	if !due {
		return nil
	}
	ctx = tenant.System(ctx)
	updated, err := p.client.SigningKey.Update().Where(signingkey.ID(p.own.ID)).SetAnnouncedAt(now).Save(ctx)
	if err != nil {
		return err
	}
	if updated == 0 {
		public, err := json.Marshal(p.own.jwk)
		if err != nil {
			return err
		}
		err = p.client.SigningKey.Create().SetID(p.own.ID).SetAlgorithm(p.own.method.Alg()).SetPublicKey(string(public)).
			SetCreatedAt(now).SetAnnouncedAt(now).Exec(ctx)
		if ent.IsConstraintError(err) {
			// Another server with the same key announced it first: say so again, over its row.
			err = p.client.SigningKey.Update().Where(signingkey.ID(p.own.ID)).SetAnnouncedAt(now).Exec(ctx)
		}
		if err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.announcedAt = now
	p.mu.Unlock()
	return nil
}

// Load reads the keys announced within keyPublishedFor, and this server's own.
func (p *PublishedKeys) Load(ctx context.Context) error {
	now := p.now()
	rows, err := p.client.SigningKey.Query().
		Where(signingkey.AnnouncedAtGT(now.Add(-keyPublishedFor))).Order(ent.Asc(signingkey.FieldID)).All(tenant.System(ctx))
	if err != nil {
		return err
	}
	keys := map[string]publishedKey{}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	if p.own != nil {
		keys[p.own.ID] = publishedKey{algorithm: p.own.method.Alg(), public: p.own.private.Public()}
		set.Keys = append(set.Keys, p.own.jwk)
	}
	for _, row := range rows {
		if _, known := keys[row.ID]; known {
			continue
		}
		var jwk jose.JSONWebKey
		if err := json.Unmarshal([]byte(row.PublicKey), &jwk); err != nil || !jwk.IsPublic() || jwk.KeyID != row.ID {
			return fmt.Errorf("the signing key %s announced in the database is no public JWK of that id", row.ID)
		}
		keys[row.ID] = publishedKey{algorithm: row.Algorithm, public: jwk.Key}
		set.Keys = append(set.Keys, jwk)
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.keys, p.jwks = keys, jwks
	p.mu.Unlock()
	return nil
}

// JWKS is the JWK set of the published keys, as /.well-known/jwks.json serves it.
func (p *PublishedKeys) JWKS() []byte {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.jwks
}

// key returns the public key kid names, for a token signed with algorithm. A kid not known reads
// the keys again, at most once a keysReloadedEvery: a server started a moment ago may have
// issued the token.
func (p *PublishedKeys) key(kid, algorithm string) (crypto.PublicKey, error) {
	p.mu.Lock()
	found, ok := p.keys[kid]
	now := p.now()
	reread := !ok && now.Sub(p.missReadAt) >= keysReloadedEvery
	if reread {
		p.missReadAt = now
	}
	p.mu.Unlock()
	if reread {
		ctx, cancel := context.WithTimeout(context.Background(), keysReloadedEvery)
		defer cancel()
		if err := p.Load(ctx); err != nil {
			return nil, err
		}
		p.mu.RLock()
		found, ok = p.keys[kid]
		p.mu.RUnlock()
	}
	if !ok || found.algorithm != algorithm {
		return nil, errors.New("the token names no key Paygate signs with")
	}
	return found.public, nil
}
