package config

import (
	"strings"
	"testing"
)

func TestValidateObservability(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" for valid
	}{
		{"tracing endpoint", func(c *Config) { c.Tracing.Endpoint = "http://localhost:4318" }, ""},
		{"tracing endpoint not http", func(c *Config) { c.Tracing.Endpoint = "localhost:4318" }, "tracing.endpoint"},
		{"negative debug store bytes", func(c *Config) { c.DebugStoreMaxBytes = -1 }, "debug_store_max_bytes"},
		{"negative debug store ttl", func(c *Config) { c.DebugStoreTTL = -1 }, "debug_store_ttl"},
		{"route report", func(c *Config) {
			c.Routes = []Route{{Model: "quiz", Upstream: "m", Contract: "mcq", Report: "corrections"}}
		}, ""},
		{"route report unknown", func(c *Config) {
			c.Routes = []Route{{Model: "quiz", Upstream: "m", Contract: "mcq", Report: "all"}}
		}, "report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.Upstream = "http://127.0.0.1:11434"
			tt.edit(&cfg)
			err := cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestLoadDebugStoreKeys(t *testing.T) {
	cfg := Default()
	err := decode([]byte("debug_store: true\ndebug_store_max_bytes: 1MiB\ndebug_store_ttl: 2m\ndebug_store_redact: [/a/b, c.d]\ntracing: {endpoint: http://c:4318}\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.DebugStore || cfg.DebugStoreMaxBytes != 1<<20 || cfg.DebugStoreTTL.Minutes() != 2 ||
		strings.Join(cfg.DebugStoreRedact, ",") != "/a/b,c.d" || cfg.Tracing.Endpoint != "http://c:4318" {
		t.Errorf("parsed %+v", cfg)
	}
}
