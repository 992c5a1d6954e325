// Package access decides who may use the gateway: API keys with model
// and management scopes, their request, token and concurrency limits, and
// the protected mode that keeps an open listener from serving anyone.
//
// Ollama has no authentication of its own, and a gateway in front of it
// that lets everyone through exposes model management (pull, create,
// delete) and the GPU to whoever can reach it. A key is the gateway's
// credential, never Ollama's: it is compared by its SHA-256 in constant
// time, and the gateway strips it before anything goes upstream.
//
// The package holds the decision — who is asking, may they use this model
// or endpoint, are they over a limit — and answers with *apierr.Error
// values (401, 403, 429 with Retry-After), which the gateway's one error
// writer renders in each API's shape. Its Gate applies the decision at the
// gateway's edge: the echo middleware that checks each request, shows a
// key only its own models in listings, charges the tokens each request
// spent and counts every request by key.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// Config is the access section of the gateway's configuration, mapped
// from config.Access once.
type Config struct {
	// AllowAnonymous lets the gateway start on a non-loopback listen
	// address with no keys (see [CheckProtected]). It grants nothing by
	// itself.
	AllowAnonymous bool
	// Keys are the API keys. Empty means access control is off: every
	// request is let through, as Ollama does.
	Keys []Key
	// Anonymous is what a request without a key may do when keys exist.
	// Nil means nothing: such a request gets 401.
	Anonymous *Scope
}

// Scope is what a caller may reach.
type Scope struct {
	// Models are globs (path.Match syntax) over the model name the client
	// sends: "quiz", "llama3.2*". A name matches as Ollama names it, so
	// "quiz" also covers "quiz:latest" and "library/quiz". Nil means every
	// model; empty means none.
	Models []string
	// Manage allows model management (/api/pull, /api/push, /api/create,
	// /api/delete, /api/copy, /api/blobs, /api/experimental/aliases), the
	// server's account (/api/me, /api/signout) and endpoints the gateway
	// does not know (see [Classify]). False refuses them with 403.
	Manage bool
}

// Key is one API key.
type Key struct {
	// Name names the key in logs, metrics and stats; the secret never
	// appears anywhere. Required, unique.
	Name string
	// SHA256 is the hex SHA-256 of the key: the configuration holds no
	// secret.
	SHA256 string
	Scope
	// Limits bound the key's use. Zero fields mean no limit.
	Limits Limits
}

// Limits bound what one key may spend. Every field's zero means no limit.
type Limits struct {
	// RequestsPerMinute is the key's request rate, with bursts of up to
	// one minute's worth.
	RequestsPerMinute int
	// TokensPerMinute bounds the prompt and output tokens of every
	// upstream call the key's requests make, repairs included. A request
	// is admitted while the key is under it, and charged when it ends.
	TokensPerMinute int
	// Concurrent bounds the key's requests in flight, per replica.
	Concurrent int
}

// AnonymousName is the name of the principal of requests without a key,
// in logs, metrics and stats.
const AnonymousName = "anonymous"

// MaxKeyLen bounds a presented key: longer is refused before hashing.
// Keys made by [NewKey] are 47 bytes.
const MaxKeyLen = 256

// Principal is the caller of one request: a key, or the anonymous policy.
type Principal struct {
	// Name is the key's name, or AnonymousName.
	Name   string
	scope  Scope
	limits Limits
}

// AllModels reports whether p may use every model, so that no request
// body needs reading to decide.
func (p *Principal) AllModels() bool { return p.scope.Models == nil }

// Manage reports whether p may manage models.
func (p *Principal) Manage() bool { return p.scope.Manage }

// Limits returns p's limits.
func (p *Principal) Limits() Limits { return p.limits }

// AllowsModel reports whether p may use the model a client names.
func (p *Principal) AllowsModel(name string) bool {
	if p.scope.Models == nil {
		return true
	}
	return matchModel(p.scope.Models, name)
}

// Checker identifies callers and checks their scope. Build it with [New].
type Checker struct {
	hashes [][sha256.Size]byte
	keys   []*Principal
	anon   *Principal
}

// New checks cfg and builds its Checker. Its errors name the key.
func New(cfg Config) (*Checker, error) {
	c := &Checker{}
	var errs []error
	seen := map[string]bool{}
	for i, k := range cfg.Keys {
		if err := ValidateKey(k); err != nil {
			errs = append(errs, fmt.Errorf("keys[%d]: %w", i, err))
			continue
		}
		if seen[k.Name] {
			errs = append(errs, fmt.Errorf("keys[%d]: name %q used twice", i, k.Name))
		}
		seen[k.Name] = true
		var h [sha256.Size]byte
		hex.Decode(h[:], []byte(k.SHA256))
		c.hashes = append(c.hashes, h)
		c.keys = append(c.keys, &Principal{Name: k.Name, scope: k.Scope, limits: k.Limits})
	}
	if cfg.Anonymous != nil {
		if err := validGlobs(cfg.Anonymous.Models); err != nil {
			errs = append(errs, fmt.Errorf("anonymous.models: %w", err))
		}
		c.anon = &Principal{Name: AnonymousName, scope: *cfg.Anonymous}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// ValidateKey checks one key's fields: a name, a hash of 64 hex digits,
// valid globs and limits that are not negative.
func ValidateKey(k Key) error {
	var errs []error
	if strings.TrimSpace(k.Name) == "" {
		errs = append(errs, errors.New("name: required (it names the key in logs and metrics)"))
	}
	if b, err := hex.DecodeString(k.SHA256); err != nil || len(b) != sha256.Size {
		errs = append(errs, errors.New("sha256: want the 64 hex digits of the key's SHA-256 (gateway keys new NAME prints it)"))
	}
	if err := validGlobs(k.Models); err != nil {
		errs = append(errs, fmt.Errorf("models: %w", err))
	}
	for _, l := range []struct {
		name string
		v    int
	}{{"requests_per_minute", k.Limits.RequestsPerMinute}, {"tokens_per_minute", k.Limits.TokensPerMinute}, {"concurrent", k.Limits.Concurrent}} {
		if l.v < 0 {
			errs = append(errs, fmt.Errorf("limits.%s: must not be negative (0 means none)", l.name))
		}
	}
	return errors.Join(errs...)
}

func validGlobs(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(strings.ToLower(g), ""); err != nil || strings.TrimSpace(g) == "" {
			return fmt.Errorf("%q is not a glob (path.Match syntax: *, ?, [a-z])", g)
		}
	}
	return nil
}

// Enabled reports whether access control is on: some key is configured.
func (c *Checker) Enabled() bool { return c != nil && len(c.keys) > 0 }

// Names lists the keys' names (and AnonymousName when anonymous requests
// are allowed), for metrics that start at zero.
func (c *Checker) Names() []string {
	out := make([]string, 0, len(c.keys)+1)
	for _, k := range c.keys {
		out = append(out, k.Name)
	}
	if c.anon != nil {
		out = append(out, AnonymousName)
	}
	return out
}

// Reasons a request is refused, in metrics.
const (
	ReasonUnauthenticated = "unauthenticated"
	ReasonModel           = "model"
	ReasonManage          = "manage"
	ReasonRequests        = "requests_per_minute"
	ReasonTokens          = "tokens_per_minute"
	ReasonConcurrent      = "concurrent"
)

// Refusal is the cause of an *apierr.Error of this package: why the
// request was refused, for the metrics.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return "access refused: " + r.Reason }

// ReasonOf returns the refusal reason of an error of this package, or "".
func ReasonOf(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

func unauthorized(msg string) *apierr.Error {
	return &apierr.Error{Code: http.StatusUnauthorized, Msg: msg, Err: &Refusal{ReasonUnauthenticated},
		Header: http.Header{"Www-Authenticate": {`Bearer realm="gateway"`}}}
}

func forbidden(reason, msg string) *apierr.Error {
	return &apierr.Error{Code: http.StatusForbidden, Msg: msg, Err: &Refusal{reason}}
}

// Identify returns the caller of a request from its headers:
// "Authorization: Bearer KEY" (OpenAI's SDKs, Ollama's libraries with a
// header) or "x-api-key: KEY" (Anthropic's SDK). No key is the anonymous
// principal when the config has one; a wrong key is always 401. Keys in
// query strings are never read: they end up in access logs.
//
// Every configured hash is compared, in constant time, whatever matches:
// the time taken says nothing of which key, or which prefix, is right.
func (c *Checker) Identify(h http.Header) (*Principal, error) {
	key, present, err := presentedKey(h)
	if err != nil {
		return nil, err
	}
	if !present {
		if c.anon != nil {
			return c.anon, nil
		}
		return nil, unauthorized("API key required: send Authorization: Bearer <key> or x-api-key: <key>")
	}
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range c.hashes {
		if subtle.ConstantTimeCompare(sum[:], c.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil, unauthorized("invalid API key")
	}
	return c.keys[found], nil
}

// presentedKey reads the key of a request. Both headers at once must agree;
// a header sent twice, an Authorization that is not Bearer, or a key too
// long or not visible ASCII is refused.
func presentedKey(h http.Header) (key string, present bool, err error) {
	auth, xkey := h.Values("Authorization"), h.Values("X-Api-Key")
	if len(auth) > 1 || len(xkey) > 1 {
		return "", false, unauthorized("send one API key header, once")
	}
	if len(auth) == 1 {
		scheme, token, _ := strings.Cut(strings.TrimSpace(auth[0]), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", false, unauthorized("invalid API key: send Authorization: Bearer <key>")
		}
		key = strings.TrimSpace(token)
		present = true
	}
	if len(xkey) == 1 {
		x := strings.TrimSpace(xkey[0])
		if present && subtle.ConstantTimeCompare([]byte(x), []byte(key)) != 1 {
			return "", false, unauthorized("Authorization and x-api-key hold different keys")
		}
		key, present = x, true
	}
	if !present {
		return "", false, nil
	}
	if key == "" || len(key) > MaxKeyLen || !visibleASCII(key) {
		return "", false, unauthorized("invalid API key")
	}
	return key, true, nil
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// StripKey removes the headers that carry a key, so that the upstream
// never sees the gateway's credential.
func StripKey(h http.Header) {
	h.Del("Authorization")
	h.Del("X-Api-Key")
}

// manageWhat names what a key without manage may not do, by class.
var manageWhat = map[Class]string{
	ClassManage:  "manage models (pull, push, create, delete, copy, blobs, aliases)",
	ClassAccount: "act on the server's account (sign in, sign out)",
	ClassUnknown: "use an endpoint the gateway does not know (it needs manage)",
	"":           "manage models (pull, push, create, delete, copy, blobs, aliases)",
}

// Authorize checks a request's needs against p's scope: 403 for a model
// outside its globs (or a request that names none when p is restricted),
// for management, account and unknown endpoints without Manage, and for an
// alias by prefix when p's models are restricted.
func (p *Principal) Authorize(n Need) error {
	if n.Manage && !p.scope.Manage {
		return forbidden(ReasonManage, fmt.Sprintf("key %q may not %s", p.Name, manageWhat[n.Class]))
	}
	if p.scope.Models == nil {
		return nil
	}
	if n.AllModels {
		return forbidden(ReasonModel, fmt.Sprintf("key %q may use only some models, and the request reaches every model whose name starts with its alias", p.Name))
	}
	if n.NeedsModel && len(n.Models) == 0 {
		return forbidden(ReasonModel, fmt.Sprintf("key %q may use only some models, and the request names none", p.Name))
	}
	for _, m := range n.Models {
		if !p.AllowsModel(m) {
			return forbidden(ReasonModel, fmt.Sprintf("key %q may not use model %q", p.Name, m))
		}
	}
	return nil
}
