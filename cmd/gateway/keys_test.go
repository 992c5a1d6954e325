package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/access"
	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
)

// TestKeysNew: `gateway keys new NAME` prints a key and config lines that
// hold its hash, never the key; the lines load as a valid access section.
func TestKeysNew(t *testing.T) {
	code, out, stderr := runCLI(t, "", "keys", "new", "quiz-app")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`(?m)^key: (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no key line in:\n%s", out)
	}
	key := m[1]
	_, lines, _ := strings.Cut(out, "config:\n\n")
	if strings.Contains(lines, key) || !strings.Contains(lines, access.Hash(key)) {
		t.Errorf("config lines must hold the hash and not the key:\n%s", lines)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	mustWrite(t, path, lines)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil || len(cfg.Access.Keys) != 1 || cfg.Access.Keys[0].Name != "quiz-app" {
		t.Errorf("loaded %+v, %v", cfg.Access, err)
	}
	_, out2, _ := runCLI(t, "", "keys", "new", "quiz-app")
	if strings.Contains(out2, key) {
		t.Errorf("two runs printed one key")
	}
	for _, args := range [][]string{{"keys"}, {"keys", "new"}, {"keys", "old", "x"}, {"keys", "new", ""}} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestServeProtectedMode: serve refuses a non-loopback listen address with
// no keys, saying why, unless access.allow_anonymous is set.
func TestServeProtectedMode(t *testing.T) {
	code, _, stderr := runCLI(t, "", "serve", "--listen", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "protected mode") || !strings.Contains(stderr, "allow_anonymous") {
		t.Errorf("serve on 0.0.0.0 without keys: exit %d, stderr %q; want 2 and the protected mode's reason", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	mustWrite(t, path, "listen: 0.0.0.0:0\nupstream: http://127.0.0.1:1\naccess:\n  allow_anonymous: true\n")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := gateway.CheckProtected(cfg); err != nil {
		t.Errorf("allow_anonymous: CheckProtected = %v, want nil", err)
	}
	cfg.Access.AllowAnonymous = false
	if err := gateway.CheckProtected(cfg); err == nil {
		t.Errorf("CheckProtected(0.0.0.0, no keys) = nil, want the protected mode's refusal")
	}
}
