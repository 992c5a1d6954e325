package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
)

func TestServeConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gateway.yaml")
	mustWrite(t, file, "listen: 127.0.0.1:1001\nupstream: http://file:1\ncontracts_dir: /file\nadmin_token: file\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want [4]string // listen, upstream, contracts_dir, admin_token
	}{
		{"defaults", nil, nil, [4]string{config.DefaultListen, config.DefaultUpstream, "", ""}},
		{"file", []string{"--config", file}, nil, [4]string{"127.0.0.1:1001", "http://file:1", "/file", "file"}},
		{"file from the environment", nil, map[string]string{"GATEWAY_CONFIG": file}, [4]string{"127.0.0.1:1001", "http://file:1", "/file", "file"}},
		{"environment over file", []string{"--config", file},
			map[string]string{"GATEWAY_UPSTREAM": "http://env:2", "GATEWAY_ADMIN_TOKEN": "env"},
			[4]string{"127.0.0.1:1001", "http://env:2", "/file", "env"}},
		{"flags over environment", []string{"--config", file, "--upstream", "http://flag:3", "--listen", "127.0.0.1:1003", "--contracts", "/flag", "--admin-token", "flag"},
			map[string]string{"GATEWAY_UPSTREAM": "http://env:2", "GATEWAY_LISTEN": "127.0.0.1:1002"},
			[4]string{"127.0.0.1:1003", "http://flag:3", "/flag", "flag"}},
		{"OLLAMA_HOST is ignored", nil, map[string]string{"OLLAMA_HOST": "http://127.0.0.1:11435"},
			[4]string{config.DefaultListen, config.DefaultUpstream, "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := serveConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("serveConfig(%q) = %v", tt.args, err)
			}
			got := [4]string{cfg.Listen, cfg.Upstream, cfg.ContractsDir, cfg.AdminToken}
			if got != tt.want {
				t.Errorf("serveConfig(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	mustWrite(t, bad, "listen: 127.0.0.1:1\nlisten_adress: x\n")
	misspelt := filepath.Join(dir, "misspelt.yaml")
	mustWrite(t, misspelt, "listen: 127.0.0.1:0\nroutes:\n  - model: quiz\n    contract: mcq\n    params:\n      questoin_count: \"5\"\n")
	noContract := filepath.Join(dir, "nocontract.yaml")
	mustWrite(t, noContract, "listen: 127.0.0.1:0\nroutes:\n  - model: quiz\n    contract: nope\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, ""},
		{"positional argument", []string{"extra"}, "no arguments"},
		{"unknown key in the file", []string{"--config", bad}, `bad.yaml: line 2: unknown key "listen_adress"`},
		{"missing file", []string{"--config", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{"invalid values, all reported", []string{"--upstream", "ollama:11434", "--listen", "nohost"}, "upstream"},
		{"a flag's problem names the flag", []string{"--contracts", filepath.Join(dir, "none")}, "--contracts: contracts_dir"},
		{"misspelt route param", []string{"--config", misspelt}, `unknown param "questoin_count"`},
		{"unknown contract", []string{"--config", noContract}, `unknown contract "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", append([]string{"serve"}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.want)
			}
		})
	}
}

// TestServeRuns starts `gateway serve` in-process on a free port, reads
// the address it prints, passes a request through and shuts it down.
func TestServeRuns(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/generate" {
			io.WriteString(w, `{"model":"m","response":"Sure! {\"a\": 1,}","done":true}`)
			return
		}
		io.WriteString(w, "Ollama is running")
	}))
	defer up.Close()
	// No shutdown delay: this test stops the gateway, no balancer watches.
	cfgPath := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfgPath, []byte("shutdown_delay: -1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		env := map[string]string{"GATEWAY_UPSTREAM": up.URL, "GATEWAY_CONFIG": cfgPath}
		done <- cmdServe(ctx, []string{"--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var addr string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			addr = a
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if addr == "" {
		t.Fatalf("no \"listening on\" line; serve returned %v", <-done)
	}
	resp, err := http.Get(addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Ollama is running" {
		t.Errorf("GET / through the gateway = %q, want the upstream's answer", body)
	}
	// The served gateway guards: an ad-hoc schema request comes back repaired.
	resp, err = http.Post(addr+"/api/generate", "application/json",
		strings.NewReader(`{"model":"m","prompt":"p","stream":false,"format":{"type":"object"}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Contract-Status") != "repaired" || !strings.Contains(string(body), `"response":"{\"a\":1}"`) {
		t.Errorf("guarded generate = %q %s, want repaired {\"a\":1}", resp.Header.Get("X-Contract-Status"), body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after cancel, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

// TestServeWarnsNotImplemented: settings the gateway accepts but does not
// act on yet are named at startup, so that nobody relies on them unknowing.
func TestServeWarnsNotImplemented(t *testing.T) {
	tests := []struct {
		name string
		edit func(*config.Config)
		want []string
	}{
		{"defaults", func(*config.Config) {}, nil},
		{"debug store is implemented", func(c *config.Config) { c.DebugStore = true }, nil},
		{"cache is implemented", func(c *config.Config) { c.Cache.MaxBytes = 1 << 30 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			tt.edit(&cfg)
			got := notImplemented(cfg)
			if len(got) != len(tt.want) {
				t.Fatalf("notImplemented() = %q, want keys %q", got, tt.want)
			}
			for i, k := range tt.want {
				if !strings.HasPrefix(got[i], k+":") {
					t.Errorf("notImplemented()[%d] = %q, want it about %s", i, got[i], k)
				}
			}
		})
	}
}

// TestServeReportsEveryProblem: a config with mistakes in every stage —
// an unknown key, values Validate refuses, routes over an unknown
// contract and with a misspelt parameter, a broken contract in its
// contracts_dir — is reported whole in one run, each problem with the line
// of the file (or the variable) it came from.
func TestServeReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "contracts", "typo", "contract.json"), "{\"name\": \"typo\", \"version\": \"1\",\n  \"fallbak\": {}}")
	file := filepath.Join(dir, "gateway.yaml")
	mustWrite(t, file, `listen: 127.0.0.1:0
contracts_dir: `+filepath.Join(dir, "contracts")+`
upstream_timeuot: 5s
log:
  level: verbose
breaker:
  failure_threshold: -1
routes:
  - model: quiz
    contract: nope
  - model: scorer
    contract: mcq
    params:
      questoin_count: "5"
  - model: ""
    contract: mcq
`)
	env := map[string]string{"GATEWAY_LOG_FORMAT": "xml"}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"serve", "--config", file}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	code := exitCode(err, &errb)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{
		file + `: line 3: unknown key "upstream_timeuot"`,
		file + `: line 5: log.level "verbose": want debug, info, warn or error`,
		`$GATEWAY_LOG_FORMAT: log.format "xml": want text or json`,
		file + `: line 7: breaker.failure_threshold: must not be negative`,
		file + `: line 10: routes[0].contract: route "quiz": unknown contract "nope"`,
		file + `: line 13: routes[1].params: route "scorer": `,
		`unknown param "questoin_count"`,
		file + `: line 15: routes[2].model: required`,
		filepath.Join(dir, "contracts", "typo", "contract.json") + `: line 2, column 3: unknown field "fallbak"`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if n := strings.Count(errb.String(), "\n"); n != 9 {
		t.Errorf("stderr has %d lines, want the heading and 8 problems:\n%s", n, errb.String())
	}
}

// TestServeConfigUpstreams: --upstreams and $GATEWAY_UPSTREAMS give a
// pool that replaces the upstream of a lower layer, as --upstream does.
func TestServeConfigUpstreams(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	mustWrite(t, file, "upstreams:\n  - url: http://file:1\n  - url: http://file:2\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []config.UpstreamServer
	}{
		{"file", []string{"--config", file}, nil, []config.UpstreamServer{{URL: "http://file:1"}, {URL: "http://file:2"}}},
		{"flag over file", []string{"--config", file, "--upstreams", "http://flag:1;weight=2,http://flag:2"}, nil,
			[]config.UpstreamServer{{URL: "http://flag:1", Weight: 2}, {URL: "http://flag:2"}}},
		{"one upstream flag over the file's pool", []string{"--config", file, "--upstream", "http://flag:3"}, nil,
			[]config.UpstreamServer{{URL: "http://flag:3"}}},
		{"environment over the default", nil, map[string]string{"GATEWAY_UPSTREAMS": "http://env:1,http://env:2"},
			[]config.UpstreamServer{{URL: "http://env:1"}, {URL: "http://env:2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := serveConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatalf("serveConfig(%q) = %v", tt.args, err)
			}
			if got := cfg.UpstreamList(); !slices.Equal(got, tt.want) {
				t.Errorf("serveConfig(%q) upstreams = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}
