package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
	"github.com/contractgateway/gateway/gateway/access"
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

// TestServeProtectedAdmin: serve refuses a non-loopback listen address
// whose models are guarded by keys while its admin routes and /metrics
// have no admin token, saying which setting is missing; an admin token
// (from the file or $GATEWAY_ADMIN_TOKEN) or a loopback listen lets it
// through.
func TestServeProtectedAdmin(t *testing.T) {
	const keyed = "upstream: http://127.0.0.1:1\naccess:\n  keys:\n    - name: app\n      sha256: \"" +
		"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\"\n"
	tests := []struct {
		name   string
		config string
		env    map[string]string
		ok     bool
	}{
		{"keys, no admin token, every address", "listen: 0.0.0.0:0\n" + keyed, nil, false},
		{"keys, no admin token, a LAN address", "listen: 10.0.0.7:11435\n" + keyed, nil, false},
		{"keys, no admin token, IPv6 wildcard", "listen: \"[::]:0\"\n" + keyed, nil, false},
		{"keys, admin token in the file", "listen: 0.0.0.0:0\nadmin_token: t0k\n" + keyed, nil, true},
		{"keys, admin token from the environment", "listen: 0.0.0.0:0\n" + keyed, map[string]string{"GATEWAY_ADMIN_TOKEN": "t0k"}, true},
		{"keys, no admin token, loopback", "listen: 127.0.0.1:0\n" + keyed, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			mustWrite(t, path, tt.config)
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := config.FromEnv(&cfg, func(k string) string { return tt.env[k] }); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			err = gateway.CheckProtected(cfg)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckProtected = %v, want ok %v", err, tt.ok)
			}
			if err != nil && (!strings.Contains(err.Error(), "admin_token") || !strings.Contains(err.Error(), "/metrics")) {
				t.Errorf("CheckProtected = %v, want it to name admin_token and /metrics", err)
			}
		})
	}
	var out, errb bytes.Buffer
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	mustWrite(t, path, "listen: 0.0.0.0:0\n"+keyed)
	// A cancelled context: a serve that wrongly starts stops at once
	// instead of serving until the test's deadline.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := run(ctx, []string{"serve", "--config", path}, func(k string) string { return map[string]string{"XDG_STATE_HOME": dir}[k] },
		strings.NewReader(""), &out, &errb)
	if code := exitCode(err, &errb); code != 2 || !strings.Contains(errb.String(), "admin_token") {
		t.Errorf("serve with keys on 0.0.0.0 and no admin token: exit %d, stderr %q; want 2 naming admin_token", code, errb.String())
	}
}
