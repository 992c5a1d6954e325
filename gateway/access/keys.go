package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
)

// KeyPrefix starts every key NewKey makes, so that a key found in a file
// or a log can be recognised (and scanners can look for it).
const KeyPrefix = "cgk_"

// NewKey returns a fresh random key (256 bits from crypto/rand) and the
// hex SHA-256 the configuration holds in its place.
func NewKey() (key, sum string) {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	key = KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, Hash(key)
}

// Hash is the hex SHA-256 of a key, as the configuration holds it.
func Hash(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// CheckProtected is the protected mode (Redis's rule): a gateway that
// listens on an address other than loopback, with no key, would let
// anyone on the network pull, create and delete models and spend the
// GPU; it refuses to start unless the config says that is meant
// (access.allow_anonymous). An empty host (":11435") listens on every
// interface.
func CheckProtected(listen string, cfg Config) error {
	if len(cfg.Keys) > 0 || cfg.AllowAnonymous || Loopback(listen) {
		return nil
	}
	return fmt.Errorf("protected mode: listen %q is reachable from other machines and access has no keys, so anyone could use every model and pull, create or delete them; "+
		"add a key (gateway keys new NAME prints one) under access.keys, listen on 127.0.0.1, or set access.allow_anonymous: true to serve everyone on purpose", listen)
}

// Loopback reports whether a listen address (host:port) is on loopback
// only: localhost or a loopback IP.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ConfigLines are the lines of the configuration's access.keys list for a
// new key named name: its name and hash, never the key.
func ConfigLines(name, sum string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("a key needs a name")
	}
	return fmt.Sprintf("access:\n  keys:\n    - name: %q\n      sha256: %q\n      # models: [\"llama3.2*\"]   # absent: every model\n      # manage: false\n      # limits: {requests_per_minute: 0, tokens_per_minute: 0, concurrent: 0}\n", name, sum), nil
}
