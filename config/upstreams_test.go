package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpstreams: upstreams replaces upstream in the layer that sets it
// (file, environment), both in one layer is a problem, and every bad
// member is reported with its line.
func TestUpstreams(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		want     []UpstreamServer
		problems []string // located, as the file's line or the variable
	}{
		{"upstream alone is a pool of one", "upstream: http://gpu:11434\n", nil,
			[]UpstreamServer{{URL: "http://gpu:11434"}}, nil},
		{"upstreams", "upstreams:\n  - url: http://a:11434\n    weight: 2\n  - url: http://b:11434\nupstream_health_interval: 2s\n", nil,
			[]UpstreamServer{{URL: "http://a:11434", Weight: 2}, {URL: "http://b:11434"}}, nil},
		{"both in the file", "upstream: http://gpu:11434\nupstreams:\n  - url: http://a:11434\n", nil,
			nil, []string{"F: line 2: upstreams: upstream is set too; keep upstreams (several Ollama servers) or upstream (one), not both"}},
		{"bad members, all reported", "upstreams:\n  - url: ftp://a\n  - url: http://b:1\n    weight: -1\n  - url: http://b:1/\n", nil,
			nil, []string{
				`F: line 2: upstreams[0].url: "ftp://a": want an http:// or https:// URL`,
				"F: line 4: upstreams[1].weight: must not be negative (got -1)",
				`F: line 5: upstreams[2].url "http://b:1/": duplicate of upstreams[1]`,
			}},
		{"environment's pool replaces the file's upstream", "upstream: http://gpu:11434\n", map[string]string{EnvUpstreams: "http://a:1;weight=3, http://b:2"},
			[]UpstreamServer{{URL: "http://a:1", Weight: 3}, {URL: "http://b:2"}}, nil},
		{"environment's upstream replaces the file's pool", "upstreams:\n  - url: http://a:11434\n", map[string]string{EnvUpstream: "http://gpu:1"},
			[]UpstreamServer{{URL: "http://gpu:1"}}, nil},
		{"both in the environment", "", map[string]string{EnvUpstream: "http://gpu:1", EnvUpstreams: "http://a:1"},
			nil, []string{"$GATEWAY_UPSTREAMS: upstreams: upstream is set too; keep upstreams (several Ollama servers) or upstream (one), not both"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			cfg, src, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string { return tt.env[k] }
			if err := FromEnv(&cfg, getenv); err != nil {
				t.Fatal(err)
			}
			src.OverrideEnv(getenv)
			var got []string
			for _, l := range lines(src.Locate(cfg.Validate())) {
				got = append(got, "F"+l[len(path):])
				if l[0] == '$' {
					got[len(got)-1] = l
				}
			}
			if diff := cmp.Diff(tt.problems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tt.problems == nil && !cmp.Equal(cfg.UpstreamList(), tt.want) {
				t.Errorf("UpstreamList() = %v, want %v", cfg.UpstreamList(), tt.want)
			}
		})
	}
}

func TestParseUpstreams(t *testing.T) {
	tests := []struct {
		in      string
		want    []UpstreamServer
		wantErr bool
	}{
		{"http://a:1", []UpstreamServer{{URL: "http://a:1"}}, false},
		{"http://a:1;weight=2,,http://b:2 ", []UpstreamServer{{URL: "http://a:1", Weight: 2}, {URL: "http://b:2"}}, false},
		{"http://a:1;w=2", nil, true},
		{" , ", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseUpstreams(tt.in)
		if (err != nil) != tt.wantErr || !cmp.Equal(got, tt.want) {
			t.Errorf("ParseUpstreams(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseUpstreams(f *testing.F) {
	f.Add("http://a:1;weight=2,http://b:2")
	f.Add(";weight=")
	f.Fuzz(func(t *testing.T, s string) {
		list, err := ParseUpstreams(s)
		if err == nil && len(list) == 0 {
			t.Fatalf("ParseUpstreams(%q) = no upstream and no error", s)
		}
	})
}
