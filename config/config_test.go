package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
}

func TestLoad(t *testing.T) {
	withDefaults := func(edit func(*Config)) Config {
		c := Default()
		edit(&c)
		return c
	}
	tests := []struct {
		name string
		yaml string
		want Config
	}{
		{"empty file keeps defaults", "", Default()},
		{"comment only", "# nothing\n", Default()},
		{
			"scalars",
			"listen: 0.0.0.0:8080\nupstream: http://ollama:11434\ncontracts_dir: /etc/contracts\nadmin_token: s3cret\n",
			withDefaults(func(c *Config) {
				c.Listen, c.Upstream, c.ContractsDir, c.AdminToken = "0.0.0.0:8080", "http://ollama:11434", "/etc/contracts", "s3cret"
			}),
		},
		{
			"sizes and durations",
			"max_body_bytes: 1MiB\nmax_response_bytes: 2000\nshutdown_grace: 3s\nupstream_timeout: 5m\ndeadline: 0s\nmax_llm_calls: 0\n",
			withDefaults(func(c *Config) {
				c.MaxBodyBytes, c.MaxResponseBytes = 1<<20, 2000
				c.ShutdownGrace, c.UpstreamTimeout, c.Deadline, c.MaxLLMCalls = 3*time.Second, 5*time.Minute, 0, 0
			}),
		},
		{
			"nested blocks keep unset defaults",
			"breaker:\n  failure_threshold: 2\ncache:\n  ttl: 1m\nlog: {level: debug}\n",
			withDefaults(func(c *Config) {
				c.Breaker.FailureThreshold = 2
				c.Cache.TTL = time.Minute
				c.Log.Level = "debug"
			}),
		},
		{
			"ad hoc schemas off",
			"ad_hoc_schemas: false\ndebug_store: true\n",
			withDefaults(func(c *Config) { c.AdHocSchemas, c.DebugStore = false, true }),
		},
		{
			"routes",
			"routes:\n  - model: quiz\n    upstream: llama3.2\n    contract: mcq@1\n    params: {count: 5, lang: en}\n    add_format: true\n    output: fenced\n",
			withDefaults(func(c *Config) {
				c.Routes = []Route{{Model: "quiz", Upstream: "llama3.2", Contract: "mcq@1",
					Params: map[string]string{"count": "5", "lang": "en"}, AddFormat: true, Output: "fenced"}}
			}),
		},
		{
			"route stream",
			"routes:\n  - model: quiz\n    contract: mcq\n    stream: buffered\n",
			withDefaults(func(c *Config) { c.Routes = []Route{{Model: "quiz", Contract: "mcq", Stream: "buffered"}} }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(writeFile(t, tt.yaml))
			if err != nil {
				t.Fatalf("Load(%q) error = %v", tt.yaml, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load(%q) mismatch (-want +got):\n%s", tt.yaml, diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error, besides the file name
	}{
		{"unknown top-level key", "listen: x:1\nlisten_addr: y\n", []string{`line 2: unknown key "listen_addr"`}},
		{"unknown nested key", "breaker:\n  failure_treshold: 3\n", []string{`line 2: unknown key "breaker.failure_treshold"`}},
		{"unknown key in a route", "routes:\n  - model: a\n    contract: mcq\n    param: {}\n", []string{`line 4: unknown key "routes[0].param"`}},
		{"every unknown key", "a: 1\nb: 2\n", []string{`unknown key "a"`, `unknown key "b"`}},
		{"wrong type", "max_llm_calls: many\n", []string{"line 1: max_llm_calls:", "many"}},
		{"duration without unit", "shutdown_grace: 10\n", []string{"line 1: shutdown_grace:"}},
		{"bad size", "max_body_bytes: 3 parsecs\n", []string{"line 1: max_body_bytes:", `"3 parsecs"`}},
		{"two documents", "listen: a:1\n---\nlisten: b:2\n", []string{"second YAML document"}},
		{"not a mapping", "- a\n- b\n", []string{"cannot unmarshal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.yaml)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%q) = nil error, want one containing %q", tt.yaml, tt.want)
			}
			for _, w := range append([]string{path}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q) = %v, want it to contain %q", tt.yaml, err, w)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	if !os.IsNotExist(err) || !strings.Contains(err.Error(), path) {
		t.Errorf("Load(%q) = %v, want a not-exist error naming the file", path, err)
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want func(*Config)
	}{
		{"nothing set", nil, func(*Config) {}},
		{"empty values are ignored", map[string]string{EnvListen: "", EnvUpstream: ""}, func(*Config) {}},
		{
			"all set",
			map[string]string{
				EnvListen: "0.0.0.0:9", EnvUpstream: "http://gpu:11434", EnvContracts: "/c", EnvAdminToken: "t",
				EnvMaxBody: "1KiB", EnvLogLevel: "debug", EnvLogFormat: "json",
			},
			func(c *Config) {
				c.Listen, c.Upstream, c.ContractsDir, c.AdminToken = "0.0.0.0:9", "http://gpu:11434", "/c", "t"
				c.MaxBodyBytes, c.Log.Level, c.Log.Format = 1024, "debug", "json"
			},
		},
		{"OLLAMA_HOST is not the upstream", map[string]string{"OLLAMA_HOST": "127.0.0.1:11435"}, func(*Config) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := Default(), Default()
			tt.want(&want)
			getenv := func(k string) string {
				if k == "OLLAMA_HOST" {
					t.Errorf("FromEnv read OLLAMA_HOST")
				}
				return tt.env[k]
			}
			if err := FromEnv(&got, getenv); err != nil {
				t.Fatalf("FromEnv(%v) = %v", tt.env, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("FromEnv(%v) mismatch (-want +got):\n%s", tt.env, diff)
			}
		})
	}
}

func TestFromEnvError(t *testing.T) {
	cfg := Default()
	err := FromEnv(&cfg, func(k string) string { return map[string]string{EnvMaxBody: "lots"}[k] })
	if err == nil || !strings.Contains(err.Error(), EnvMaxBody) {
		t.Errorf("FromEnv(%s=lots) = %v, want an error naming the variable", EnvMaxBody, err)
	}
	if cfg.MaxBodyBytes != Default().MaxBodyBytes {
		t.Errorf("MaxBodyBytes = %d after a bad value, want the default %d", cfg.MaxBodyBytes, Default().MaxBodyBytes)
	}
}

// TestPrecedence checks defaults < file < environment.
func TestPrecedence(t *testing.T) {
	path := writeFile(t, "listen: 127.0.0.1:1111\nupstream: http://file:1\nadmin_token: file\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvUpstream: "http://env:2"}
	if err := FromEnv(&cfg, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	got := [4]string{cfg.Listen, cfg.Upstream, cfg.AdminToken, cfg.ContractsDir}
	want := [4]string{"127.0.0.1:1111", "http://env:2", "file", ""}
	if got != want {
		t.Errorf("listen, upstream, admin_token, contracts_dir = %q, want %q", got, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want []string // substrings, one per expected problem; nil = valid
	}{
		{"defaults", func(*Config) {}, nil},
		{"zero breaker means defaults", func(c *Config) { c.Breaker = Breaker{} }, nil},
		{"zero limits mean defaults", func(c *Config) { c.MaxBodyBytes, c.MaxResponseBytes, c.Deadline, c.ShutdownGrace = 0, 0, 0, 0 }, nil},
		{"negative limits mean none", func(c *Config) {
			c.MaxBodyBytes, c.MaxResponseBytes, c.Cache.MaxBytes, c.MaxLLMCalls = -1, -1, -1, -1
			c.ShutdownGrace, c.Deadline, c.Cache.TTL = -1, -1, -1
		}, nil},
		{"redis url", func(c *Config) { c.Cache.Redis = "redis://127.0.0.1:6379/0" }, nil},
		{"bad redis url", func(c *Config) { c.Cache.Redis = "127.0.0.1:6379" }, []string{"cache.redis"}},
		{"https upstream with path", func(c *Config) { c.Upstream = "https://gpu.example/ollama" }, nil},
		{"ipv6 listen", func(c *Config) { c.Listen = "[::1]:11435" }, nil},
		{"empty listen", func(c *Config) { c.Listen = "" }, []string{"listen: empty"}},
		{"listen without port", func(c *Config) { c.Listen = "localhost" }, []string{"listen: \"localhost\""}},
		{"listen bad port", func(c *Config) { c.Listen = "localhost:http" }, []string{"port \"http\""}},
		{"upstream without scheme", func(c *Config) { c.Upstream = "127.0.0.1:11434" }, []string{"upstream: "}},
		{"upstream ftp", func(c *Config) { c.Upstream = "ftp://x" }, []string{"want an http:// or https:// URL"}},
		{"upstream no host", func(c *Config) { c.Upstream = "http://" }, []string{"no host"}},
		{"upstream with query", func(c *Config) { c.Upstream = "http://x/?a=1" }, []string{"no query"}},
		{"upstream with user", func(c *Config) { c.Upstream = "http://u:p@x" }, []string{"user info"}},
		{"upstream is the gateway", func(c *Config) { c.Listen, c.Upstream = "127.0.0.1:11435", "http://localhost:11435" }, []string{"gateway's own listen address"}},
		{"negative upstream timeout", func(c *Config) { c.UpstreamTimeout = -1 }, []string{"upstream_timeout"}},
		{"negative breaker", func(c *Config) { c.Breaker = Breaker{-1, -1, -1} },
			[]string{"breaker.failure_threshold", "breaker.open_timeout", "breaker.half_open_max_requests"}},
		{"bad log", func(c *Config) { c.Log = Log{Level: "loud", Format: "xml"} }, []string{"log.level \"loud\"", "log.format \"xml\""}},
		{"route problems", func(c *Config) {
			c.Routes = []Route{
				{Model: "quiz", Contract: "mcq"},
				{Model: "quiz", Contract: "mcq"},
				{Model: "", Contract: ""},
				{Model: "x", Contract: "mcq", Output: "yaml"},
			}
		}, []string{"routes[1].model \"quiz\": duplicate of routes[0]", "routes[2].model: required", "routes[2].contract: required", "routes[3].output \"yaml\""}},
		{"route stream", func(c *Config) { c.Routes = []Route{{Model: "x", Contract: "mcq", Stream: "progressive"}} }, nil},
		{"bad route stream", func(c *Config) { c.Routes = []Route{{Model: "x", Contract: "mcq", Stream: "live"}} },
			[]string{"routes[0].stream \"live\": want progressive or buffered"}},
		{"allowed hosts", func(c *Config) { c.AllowedHosts = []string{"gpu-box.lan", "Ollama.Example.COM", "10.0.0.7", "::1"} }, nil},
		{"bad allowed hosts", func(c *Config) { c.AllowedHosts = []string{"", "host:11435", "http://host", "a b"} },
			[]string{"allowed_hosts[0] \"\": empty", "allowed_hosts[1]", "allowed_hosts[2]", "allowed_hosts[3]"}},
		{"allowed origins", func(c *Config) {
			c.AllowedOrigins = []string{"https://app.example.com", "http://10.0.0.7:8080", "https://*.example.com", "chrome-extension://*", "chrome-extension://abc", "*"}
		}, nil},
		{"bad allowed origins", func(c *Config) {
			c.AllowedOrigins = []string{"", "app.example.com", "http://*.*.example.com", "ftp://x"}
		},
			[]string{"allowed_origins[0] \"\": empty", "allowed_origins[1]", "only one * is allowed", "allowed_origins[3]"}},
		{"every problem at once", func(c *Config) { c.Listen, c.Upstream, c.Breaker.FailureThreshold = "", "", -1 },
			[]string{"listen: empty", "upstream: empty", "breaker.failure_threshold"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			tt.edit(&cfg)
			err := cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", cfg, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want %q", cfg, tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("Validate() reported %d problems, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in      string
		want    ByteSize
		wantErr bool
	}{
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"32MiB", 32 << 20, false},
		{"32 mib", 32 << 20, false},
		{"1.5GB", 1_500_000_000, false},
		{"2KB", 2000, false},
		{"2KiB", 2048, false},
		{"10B", 10, false},
		{"-1", -1, false}, // parsed; Validate rejects it with the key's name
		{"", 0, true},
		{"MiB", 0, true},
		{"12 furlongs", 0, true},
		{"1e30GiB", 0, true},
		{"1.2.3", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"32MiB", "1.5 GB", "0", "-7", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseByteSize(s)
		if err != nil && n != 0 {
			t.Errorf("ParseByteSize(%q) = %d with error %v, want 0", s, n, err)
		}
	})
}

// TestExampleConfig keeps examples/config.yaml loadable, valid, and true to
// its word: every value but the example routes is the documented default.
// (gateway's TestExampleConfigServes builds a server from it.)
func TestExampleConfig(t *testing.T) {
	got, err := Load(filepath.Join("..", "examples", "config.yaml"))
	if err != nil {
		t.Fatalf("Load(examples/config.yaml) = %v", err)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("examples/config.yaml: Validate() = %v", err)
	}
	if len(got.Routes) == 0 {
		t.Errorf("examples/config.yaml has no example route")
	}
	got.Routes = nil
	want := Default()
	want.MaxBodyBytes, want.MaxResponseBytes, want.ShutdownGrace = 32<<20, 64<<20, 10*time.Second
	want.Deadline, want.MaxLLMCalls, want.StreamKeepAlive = 120*time.Second, 6, 10*time.Second
	want.IdleTimeout, want.BodyReadTimeout = 120*time.Second, 60*time.Second
	want.UpstreamMaxConns, want.ShutdownDelay = 256, 5*time.Second
	want.Cache = Cache{MaxBytes: 64 << 20, TTL: time.Hour, Lease: CacheLease{TTL: 10 * time.Second, Poll: 50 * time.Millisecond}}
	want.Breaker = Breaker{FailureThreshold: 5, OpenTimeout: 30 * time.Second, HalfOpenMaxRequests: 1}
	want.Outcomes = Outcomes{Retention: Retention(168 * time.Hour), SpoolMaxBytes: 256 << 20}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("examples/config.yaml differs from the defaults it claims (-default +file):\n%s", diff)
	}
}

func TestLoadEdgeKeys(t *testing.T) {
	cfg := Default()
	err := decode([]byte("allowed_hosts: [gpu-box.lan]\nallowed_origins: [\"https://*.example.com\"]\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpu-box.lan"}, cfg.AllowedHosts); diff != "" {
		t.Errorf("allowed_hosts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"https://*.example.com"}, cfg.AllowedOrigins); diff != "" {
		t.Errorf("allowed_origins (-want +got):\n%s", diff)
	}
}
