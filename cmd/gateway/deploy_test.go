package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// deployDir is deploy/ seen from the package's directory.
const deployDir = "../../deploy"

// deployEnv is the environment the deploy/ topology gives each gateway.
var deployEnv = map[string]string{
	"GATEWAY_ADMIN_TOKEN":       "change-me",
	"GATEWAY_OUTCOMES_POSTGRES": "postgres://gateway:change-me@postgres:5432/gateway?sslmode=disable",
}

// readYAMLDocs parses every document of a YAML file into maps.
func readYAMLDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s holds no YAML document", path)
	}
	return docs
}

// dig walks a parsed YAML document along keys (string for a map, int for
// a list) and fails t when a step is missing.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("dig %v: %q not in a map", path, k)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("dig %v: no %q", path, k)
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("dig %v: no element %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

func TestDeployManifestsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(deployDir, "kubernetes", "*.yaml"))
	files = append(files, more...)
	if len(files) < 6 {
		t.Fatalf("deploy/ holds %d YAML files, want gateway.yaml, compose.yaml and the Kubernetes manifests: %q", len(files), files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { readYAMLDocs(t, f) })
	}
}

// TestDeployGatewayConfig loads deploy/gateway.yaml, and the copy the
// Kubernetes ConfigMap holds, as the gateway would in the topology.
func TestDeployGatewayConfig(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(deployDir, "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := readYAMLDocs(t, filepath.Join(deployDir, "kubernetes", "configmap.yaml"))[0]
	inCM, _ := dig(t, cm, "data", "gateway.yaml").(string)
	if inCM != string(file) {
		t.Errorf("kubernetes/configmap.yaml's gateway.yaml differs from deploy/gateway.yaml")
	}
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	mustWrite(t, path, inCM)
	cfg, _, err := serveConfig([]string{"--config", path}, func(k string) string { return deployEnv[k] }, io.Discard)
	if err != nil {
		t.Fatalf("serveConfig(configmap's gateway.yaml) = %v", err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"upstreams", len(cfg.Upstreams), 2},
		{"cache.redis", cfg.Cache.Redis, "redis://redis:6379/0"},
		{"outcomes.postgres", cfg.Outcomes.Postgres, deployEnv["GATEWAY_OUTCOMES_POSTGRES"]},
		{"admin_token", cfg.AdminToken, deployEnv["GATEWAY_ADMIN_TOKEN"]},
		{"keys", len(cfg.Access.Keys), 1},
		{"shutdown_delay", cfg.ShutdownDelay, 5 * time.Second},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}

	dep := readYAMLDocs(t, filepath.Join(deployDir, "kubernetes", "deployment.yaml"))[0]
	if got := dig(t, dep, "spec", "replicas"); got != 3 {
		t.Errorf("replicas = %v, want 3", got)
	}
	grace, _ := dig(t, dep, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if min := cfg.ShutdownDelay + cfg.ShutdownGrace + 5*time.Second; time.Duration(grace)*time.Second <= min {
		t.Errorf("terminationGracePeriodSeconds = %d, want above shutdown_delay + shutdown_grace + 5s = %v", grace, min)
	}
	ctr := dig(t, dep, "spec", "template", "spec", "containers", 0)
	probes := []struct{ probe, want string }{{"readinessProbe", "/readyz"}, {"livenessProbe", "/healthz"}}
	for _, p := range probes {
		if got := dig(t, ctr, p.probe, "httpGet", "path"); got != p.want {
			t.Errorf("%s path = %v, want %s", p.probe, got, p.want)
		}
	}

	compose := readYAMLDocs(t, filepath.Join(deployDir, "compose.yaml"))[0]
	for _, name := range []string{"gateway-1", "gateway-2", "gateway-3", "haproxy", "redis", "postgres", "ollama-1", "ollama-2"} {
		dig(t, compose, "services", name)
	}
	gw := dig(t, compose, "services", "gateway-1")
	if got := dig(t, gw, "environment", "GATEWAY_CONFIG"); got != "/etc/gateway/gateway.yaml" {
		t.Errorf("compose GATEWAY_CONFIG = %v, want /etc/gateway/gateway.yaml", got)
	}
	if got := dig(t, gw, "volumes", 0); got != "./gateway.yaml:/etc/gateway/gateway.yaml:ro" {
		t.Errorf("compose gateway volume = %v, want deploy/gateway.yaml mounted", got)
	}
}

// haproxyBinary returns haproxy's path, or skips t without it unless
// CG_REQUIRE_HAPROXY=1 (CI), where it fails.
func haproxyBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err == nil {
		return bin
	}
	if os.Getenv("CG_REQUIRE_HAPROXY") == "1" {
		t.Fatal("haproxy not found and CG_REQUIRE_HAPROXY=1 (scripts/install-haproxy.sh installs it)")
	}
	t.Skip("haproxy not found (scripts/install-haproxy.sh installs it)")
	return ""
}

func TestDeployHAProxyConfig(t *testing.T) {
	bin := haproxyBinary(t)
	cfg, err := os.ReadFile(filepath.Join(deployDir, "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"option httpchk GET /readyz", "http-check expect status 200", "balance roundrobin"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("haproxy.cfg lacks %q", want)
		}
	}
	tests := []struct {
		name string
		env  []string
	}{
		{"defaults", nil},
		{"loopback", []string{"GW1=127.0.0.1:1", "GW2=127.0.0.1:2", "GW3=127.0.0.1:3", "HAPROXY_BIND=127.0.0.1:4", "HAPROXY_CHECK_INTER=200ms", "HAPROXY_RETRIES=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-c", "-f", filepath.Join(deployDir, "haproxy.cfg"))
			cmd.Env = append(os.Environ(), tt.env...)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
				t.Errorf("haproxy -c (%q) = %v:\n%s", tt.env, err, out)
			}
		})
	}
}
