// Package config reads Paygate's configuration from the environment and provides its secrets.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/provider"
)

// Config is everything Paygate reads from its environment. Each variable's help tag is what
// `paygate help` says of it; its group tag is which of the Groups it is in, so that each
// command's help names only the variables the command reads.
type Config struct {
	Env         string `env:"PAYGATE_ENV" group:"secrets" envDefault:"development" help:"development or production (production: no playground, no introspection, every secret required)"`
	Addr        string `env:"PAYGATE_ADDR" group:"server" help:"listen address (default 127.0.0.1:8080)"`
	Port        string `env:"PORT" group:"server" help:"listen on :PORT when PAYGATE_ADDR is unset"`
	DatabaseURL string `env:"DATABASE_URL" group:"database" help:"sqlite://PATH (default sqlite://./paygate.db), sqlite://:memory: or postgres://user@host/db?sslmode=..."`
	DBMaxConns  int    `env:"PAYGATE_DB_MAX_CONNS" group:"database" envDefault:"20" help:"PostgreSQL connection pool size; reads that pgx scans itself have a second pool of this size"`
	DataDir     string `env:"PAYGATE_DATA_DIR" group:"secrets" envDefault:".paygate" help:"where development secrets are generated (mode 0600)"`
	JWTSecret   string `env:"PAYGATE_JWT_SECRET" group:"secrets" help:"HS256 key of access tokens, at least 32 bytes (openssl rand -hex 32)"`
	// JWTPrivateKeyFile, when set, signs access tokens with a key whose public half every server
	// publishes, so other services verify them without the shared secret.
	JWTPrivateKeyFile  string `env:"PAYGATE_JWT_PRIVATE_KEY_FILE" group:"secrets" help:"PEM file of an Ed25519 or RSA (2048 bits or more) private key to sign access tokens with, its public key served at /.well-known/jwks.json (openssl genpkey -algorithm ed25519 -out jwt.pem)"`
	CardFingerprintKey string `env:"PAYGATE_CARD_FINGERPRINT_KEY" group:"secrets" help:"key of the card fingerprint hash, at least 32 bytes (openssl rand -hex 32)"`
	APIKeySecret       string `env:"PAYGATE_API_KEY_SECRET" group:"secrets" help:"key of the hash API keys are kept as, at least 32 bytes (openssl rand -hex 32)"`
	AdminEmail         string `env:"PAYGATE_ADMIN_EMAIL" group:"server" help:"the first admin's email, created when there are no users"`
	AdminPassword      string `env:"PAYGATE_ADMIN_PASSWORD" group:"server" help:"the first admin's password (12 characters to 72 bytes)"`
	PasswordCost       int    `env:"PAYGATE_PASSWORD_COST" group:"server" envDefault:"12" help:"bcrypt cost of the passwords stored from now on: 12 to 16 in production, down to 4 elsewhere (tests)"`
	// PublicURL is where browsers reach Paygate: shoppers come back to it from authenticating
	// a payment, and open the built-in sandboxes' authentication pages at it.
	PublicURL   string   `env:"PAYGATE_PUBLIC_URL" group:"server" help:"the address browsers and providers reach Paygate at, e.g. https://pay.example.com (default http:// and the listen address)"`
	CORSOrigins []string `env:"PAYGATE_CORS_ORIGINS" group:"server" envSeparator:"," help:"comma-separated origins of the dashboards allowed to call from a browser, e.g. https://dash.example.com"`
	// MetricsPublic serves /metrics to anyone, for a Prometheus on a private network that sends
	// no credentials.
	MetricsPublic  bool          `env:"PAYGATE_METRICS_PUBLIC" group:"server" envDefault:"false" help:"true serves /metrics without credentials"`
	DebugAddr      string        `env:"PAYGATE_DEBUG_ADDR" group:"server" help:"loopback address to serve Go's profiles (pprof) on, e.g. 127.0.0.1:6060; unset: not served"`
	RedisURL       string        `env:"REDIS_URL" group:"server" help:"redis://[:password@]host:port/db: rate limits shared by every server; unset: each server keeps its own"`
	RedisKeyPrefix string        `env:"PAYGATE_REDIS_KEY_PREFIX" group:"server" envDefault:"paygate:ratelimit:" help:"what the rate limit keys in Redis begin with: one per deployment sharing a Redis"`
	TrustedProxies []string      `env:"PAYGATE_TRUSTED_PROXIES" group:"server" envSeparator:"," help:"comma-separated addresses or CIDRs of the load balancers whose X-Forwarded-For names the client; unset: the header is ignored"`
	MaxAmount      string        `env:"PAYGATE_MAX_AMOUNT" group:"server" envDefault:"999999.99" help:"largest amount of a payment, in major units"`
	LogLevel       string        `env:"PAYGATE_LOG_LEVEL" group:"log" envDefault:"info" help:"debug, info, warn or error"`
	SandboxLatency time.Duration `env:"PAYGATE_SANDBOX_LATENCY" group:"server" envDefault:"0s" help:"how long each call to a built-in sandbox takes"`
	// SandboxOutage names the built-in sandboxes that answer every request 503, as a provider
	// that is down does, so that failover can be shown.
	SandboxOutage []string `env:"PAYGATE_SANDBOX_OUTAGE" group:"server" envSeparator:"," help:"built-in sandboxes to run as down, e.g. stripe"`
	// ProductionAllows are what a production start is let run with that takes no real payments
	// or refuses their webhooks, each item KIND:PROVIDER (AllowSandbox, AllowNoWebhooks), as
	// Load checked and wrote them.
	ProductionAllows []string `env:"PAYGATE_PRODUCTION_ALLOWS" group:"server" envSeparator:"," help:"what production starts with anyway, comma-separated: sandbox:PROVIDER (served by its built-in sandbox), no-webhooks:PROVIDER (a real provider without its webhook secret, its webhooks refused)"`

	// Providers holds each provider's settings, by name, read from its registration's
	// variables (PAYGATE_{NAME}_{KEY}); a provider without a base URL is served by its built-in
	// sandbox.
	Providers map[string]provider.Settings
}

// Group is a group of Config's variables, named by a field's group tag, for a command to say
// which it reads.
type Group string

const (
	// GroupDatabase is what opening the database reads.
	GroupDatabase Group = "database"
	// GroupLog is what the log reads.
	GroupLog Group = "log"
	// GroupSecrets is what LoadSecrets reads: the mode, the secrets and the data dir.
	GroupSecrets Group = "secrets"
	// GroupServer is what only the server reads.
	GroupServer Group = "server"
)

// Groups is every group: what the server reads.
func Groups() []Group { return []Group{GroupDatabase, GroupLog, GroupSecrets, GroupServer} }

// Variable is one environment variable, as the help of a command describes it.
type Variable struct {
	Name, Help string
	// Default is the value an unset variable has, if any.
	Default string
}

// Variables are Config's variables in the groups, in the order of its fields.
func Variables(groups ...Group) []Variable {
	var vars []Variable
	for _, field := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		name := field.Tag.Get("env")
		if name != "" && slices.Contains(groups, Group(field.Tag.Get("group"))) {
			vars = append(vars, Variable{Name: name, Help: field.Tag.Get("help"), Default: field.Tag.Get("envDefault")})
		}
	}
	return vars
}

// Describe lists variables one per line, for the help of a command.
func Describe(vars ...Variable) string {
	var b strings.Builder
	for _, v := range vars {
		help := v.Help
		if v.Default != "" {
			help += " (default " + v.Default + ")"
		}
		fmt.Fprintf(&b, "  %-32s %s\n", v.Name, help)
	}
	return b.String()
}

// ProviderVariables are the variables of the providers, in the order of their registrations.
func ProviderVariables(providers []provider.Registration) []Variable {
	var vars []Variable
	for _, p := range providers {
		for _, v := range p.Variables {
			vars = append(vars, Variable{Name: provider.VariableName(p.Name, v.Key), Help: v.Help})
		}
	}
	return vars
}

// Load reads the configuration from environ (KEY=value strings, as os.Environ gives them), with
// the settings of the providers registered.
func Load(environ []string, providers []provider.Registration) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if key, value, ok := strings.Cut(kv, "="); ok {
			vars[key] = value
		}
	}
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars}); err != nil {
		return Config{}, err
	}
	if cfg.Env != "development" && cfg.Env != "production" {
		return Config{}, fmt.Errorf("PAYGATE_ENV must be development or production, not %q", cfg.Env)
	}
	if _, err := cfg.MaxAmountHundredths(); err != nil {
		return Config{}, err
	}
	if least := map[bool]int{true: 12, false: 4}[cfg.Production()]; cfg.PasswordCost < least || cfg.PasswordCost > 16 {
		return Config{}, fmt.Errorf("PAYGATE_PASSWORD_COST must be from %d to 16", least)
	}
	cfg.Providers = make(map[string]provider.Settings, len(providers))
	for _, p := range providers {
		settings := provider.Settings{}
		for _, v := range p.Variables {
			if value := vars[provider.VariableName(p.Name, v.Key)]; value != "" {
				settings[v.Key] = value
			}
		}
		if err := p.Check(settings); err != nil {
			return Config{}, err
		}
		cfg.Providers[p.Name] = settings
	}
	for _, name := range cfg.SandboxOutage {
		if settings, known := cfg.Providers[name]; !known || settings.BaseURL() != "" {
			return Config{}, fmt.Errorf("PAYGATE_SANDBOX_OUTAGE: %q is not a provider served by its built-in sandbox", name)
		}
	}
	allows, err := productionAllowances(cfg.ProductionAllows, providers)
	if err != nil {
		return Config{}, err
	}
	cfg.ProductionAllows = allows
	for i, origin := range cfg.CORSOrigins {
		normal, err := normalOrigin(origin)
		if err != nil {
			return Config{}, err
		}
		cfg.CORSOrigins[i] = normal
	}
	if _, err := cfg.TrustedProxyPrefixes(); err != nil {
		return Config{}, err
	}
	if cfg.RedisURL != "" {
		if u, err := url.Parse(cfg.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			return Config{}, errors.New("REDIS_URL must be a redis:// or rediss:// URL")
		}
	}
	if cfg.Production() && cfg.PublicURL == "" {
		// Providers send shoppers back to it: a guess from the listen address is never public.
		return Config{}, errors.New("PAYGATE_PUBLIC_URL is required in production: the address browsers reach Paygate at, e.g. https://pay.example.com")
	}
	if cfg.PublicURL != "" {
		cfg.PublicURL = strings.TrimSuffix(strings.TrimSpace(cfg.PublicURL), "/")
		if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return Config{}, errors.New("PAYGATE_PUBLIC_URL must be an http or https URL without query, e.g. https://pay.example.com")
		}
	}
	if cfg.DebugAddr != "" && !isLoopbackAddr(cfg.DebugAddr) {
		// The profiles show the process's code and memory to whoever reaches them.
		return Config{}, fmt.Errorf("PAYGATE_DEBUG_ADDR must be a loopback address and port (127.0.0.1:6060, [::1]:6060, localhost:6060), not %q", cfg.DebugAddr)
	}
	if (cfg.AdminEmail == "") != (cfg.AdminPassword == "") {
		return Config{}, errors.New("set both PAYGATE_ADMIN_EMAIL and PAYGATE_ADMIN_PASSWORD, or neither")
	}
	return cfg, nil
}

// The kinds of PAYGATE_PRODUCTION_ALLOWS's items, each written KIND:PROVIDER (sandbox:stripe).
const (
	// AllowSandbox lets a provider be served by its built-in sandbox, where no real money moves.
	AllowSandbox = "sandbox"
	// AllowNoWebhooks lets a provider's real API be used without its webhook secret: every
	// webhook from it is refused, so what happens at the provider alone (a refund made in its
	// dashboard, a dispute) is never heard of.
	AllowNoWebhooks = "no-webhooks"
)

// Allowance is the item of PAYGATE_PRODUCTION_ALLOWS that allows kind for the provider.
func Allowance(kind, providerName string) string { return kind + ":" + providerName }

// Allows reports whether PAYGATE_PRODUCTION_ALLOWS allows kind for the provider.
func (c Config) Allows(kind, providerName string) bool {
	return slices.Contains(c.ProductionAllows, Allowance(kind, providerName))
}

// productionAllowances reads PAYGATE_PRODUCTION_ALLOWS's items, trimmed and in lower case: an
// item of an unknown kind or naming no provider is refused, since an allowance written wrong
// would allow nothing and be found out only at a production start.
func productionAllowances(items []string, providers []provider.Registration) ([]string, error) {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.Name
	}
	var allows []string
	for _, item := range items {
		written := strings.TrimSpace(item)
		if written == "" {
			continue
		}
		kind, name, _ := strings.Cut(strings.ToLower(written), ":")
		if kind != AllowSandbox && kind != AllowNoWebhooks {
			return nil, fmt.Errorf("PAYGATE_PRODUCTION_ALLOWS: %q is not an allowance; write %s:PROVIDER or %s:PROVIDER", written, AllowSandbox, AllowNoWebhooks)
		}
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("PAYGATE_PRODUCTION_ALLOWS: %q names no provider; the providers are %s", written, strings.Join(names, ", "))
		}
		allows = append(allows, Allowance(kind, name))
	}
	return allows, nil
}

// TrustedProxyPrefixes reads PAYGATE_TRUSTED_PROXIES: each an address (one host) or a CIDR.
func (c Config) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for _, text := range c.TrustedProxies {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if addr, err := netip.ParseAddr(text); err == nil {
			prefixes = append(prefixes, netip.PrefixFrom(addr, addr.BitLen()))
			continue
		}
		prefix, err := netip.ParsePrefix(text)
		if err != nil {
			return nil, fmt.Errorf("PAYGATE_TRUSTED_PROXIES: %q is neither an address nor a CIDR such as 10.0.0.0/8", text)
		}
		prefixes = append(prefixes, prefix.Masked())
	}
	return prefixes, nil
}

// isLoopbackAddr reports whether addr is a host and port of this machine's loopback interface
// alone: localhost, 127.0.0.0/8 or ::1.
func isLoopbackAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// normalOrigin returns an origin as browsers send it: scheme://host[:port], without the
// trailing slash people copy from the address bar (which would never match), or an error for
// anything that is not an origin.
func normalOrigin(origin string) (string, error) {
	origin = strings.TrimSuffix(strings.TrimSpace(origin), "/")
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("PAYGATE_CORS_ORIGINS: %q is not an origin; write scheme://host[:port], e.g. https://dash.example.com", origin)
	}
	return strings.ToLower(origin), nil
}

// PublicAddress is where browsers reach Paygate: PAYGATE_PUBLIC_URL, else the listen address over
// http (localhost for an address that names no host).
func (c Config) PublicAddress() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	host, port, err := net.SplitHostPort(c.ListenAddr())
	if err != nil {
		return "http://" + c.ListenAddr()
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Production reports whether Paygate runs in production mode.
func (c Config) Production() bool { return c.Env == "production" }

// ListenAddr is where the server listens: PAYGATE_ADDR, else :PORT, else 127.0.0.1:8080.
func (c Config) ListenAddr() string {
	switch {
	case c.Addr != "":
		return c.Addr
	case c.Port != "":
		return ":" + c.Port
	default:
		return "127.0.0.1:8080"
	}
}

// MaxAmountHundredths is the largest payment amount, in hundredths of a major unit.
func (c Config) MaxAmountHundredths() (int64, error) {
	limit, err := money.Parse(c.MaxAmount, "USD")
	if err != nil || limit.Minor <= 0 {
		return 0, fmt.Errorf("PAYGATE_MAX_AMOUNT must be a positive amount with at most two decimals, not %q", c.MaxAmount)
	}
	return limit.Minor, nil
}

// Secrets are the keys Paygate signs and hashes with.
type Secrets struct {
	JWT                []byte
	CardFingerprintKey []byte
	// APIKeySecret keys the hash API keys are stored as.
	APIKeySecret []byte
	// Generated lists the secrets that were missing and generated into the data dir.
	Generated []string
}

// secret is one of the keys Paygate signs and hashes with.
type secret struct {
	name, value, file string
	into              *[]byte
}

func (c Config) secrets(s *Secrets) []secret {
	return []secret{
		{"PAYGATE_JWT_SECRET", c.JWTSecret, "jwt_secret", &s.JWT},
		{"PAYGATE_CARD_FINGERPRINT_KEY", c.CardFingerprintKey, "card_fingerprint_key", &s.CardFingerprintKey},
		{"PAYGATE_API_KEY_SECRET", c.APIKeySecret, "api_key_secret", &s.APIKeySecret},
	}
}

// CheckSecrets says, without touching anything, what is wrong with the secrets: in production
// every one missing or too short, at once, each with a way to make a good one; in development
// only those set too short, since the rest are generated.
func (c Config) CheckSecrets() error {
	var problems []string
	for _, secret := range c.secrets(&Secrets{}) {
		switch {
		case secret.value == "" && c.Production():
			problems = append(problems, fmt.Sprintf("%s is not set (make one: openssl rand -hex 32)", secret.name))
		case secret.value != "" && len(secret.value) < 32:
			problems = append(problems, fmt.Sprintf("%s must be at least 32 bytes (make one: openssl rand -hex 32)", secret.name))
		}
	}
	if len(problems) > 0 {
		return errors.New("the secrets are not ready:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

// LoadSecrets returns the configured secrets. In development a missing secret is read from, or
// generated into, the data dir (mode 0600); production refuses to start without them.
func (c Config) LoadSecrets() (Secrets, error) {
	if err := c.CheckSecrets(); err != nil {
		return Secrets{}, err
	}
	var s Secrets
	for _, secret := range c.secrets(&s) {
		value := secret.value
		if value == "" {
			var generated bool
			var err error
			if value, generated, err = c.devSecret(secret.file); err != nil {
				return Secrets{}, fmt.Errorf("%s: %w", secret.name, err)
			}
			if generated {
				s.Generated = append(s.Generated, filepath.Join(c.DataDir, secret.file))
			}
			if len(value) < 32 {
				return Secrets{}, fmt.Errorf("%s in %s must be at least 32 bytes", secret.name, filepath.Join(c.DataDir, secret.file))
			}
		}
		*secret.into = []byte(value)
	}
	return s, nil
}

func (c Config) devSecret(file string) (value string, generated bool, err error) {
	path := filepath.Join(c.DataDir, file)
	content, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(content)), false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return "", false, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	value = hex.EncodeToString(raw)
	// O_EXCL: when two servers start at once on one data dir, the second reads the first's secret.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return c.devSecret(file)
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if _, err := f.WriteString(value + "\n"); err != nil {
		return "", false, err
	}
	return value, true, nil
}
