package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadAccess reads the access section as the issue and the README
// write it: a key without models may use every model, an empty list none.
func TestLoadAccess(t *testing.T) {
	const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	yml := `
access:
  allow_anonymous: false
  keys:
    - name: quiz-app
      sha256: "` + sum + `"
      models: ["quiz", "llama3.2*"]
      manage: false
      limits:
        requests_per_minute: 60
        tokens_per_minute: 20000
        concurrent: 4
    - name: ops
      sha256: "` + strings.ToUpper(sum[:63]) + `0"
      manage: true
  anonymous:
    models: []
`
	cfg := Default()
	if err := decode([]byte(yml), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Access{
		Keys: []AccessKey{
			{Name: "quiz-app", SHA256: sum, Models: []string{"quiz", "llama3.2*"},
				Limits: AccessLimits{RequestsPerMinute: 60, TokensPerMinute: 20000, Concurrent: 4}},
			{Name: "ops", SHA256: strings.ToUpper(sum[:63]) + "0", Manage: true},
		},
		Anonymous: &AccessScope{Models: []string{}},
	}
	if diff := cmp.Diff(want, cfg.Access); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
	if cfg.Access.Keys[1].Models != nil || cfg.Access.Anonymous.Models == nil {
		t.Errorf("absent models must stay nil (every model) and [] empty (none)")
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	if err := decode([]byte("access:\n  keys:\n    - name: a\n      secret: x\n"), &cfg); err == nil || !strings.Contains(err.Error(), `"access.keys[0].secret"`) {
		t.Errorf("unknown key in access: %v, want it named", err)
	}
}

func TestValidateAccess(t *testing.T) {
	const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tests := []struct {
		name string
		a    Access
		want []string
	}{
		{"none", Access{}, nil},
		{"good", Access{Keys: []AccessKey{{Name: "a", SHA256: sum, Models: []string{"x*"}}}}, nil},
		{"no name, short hash", Access{Keys: []AccessKey{{SHA256: "abc"}}}, []string{"access.keys[0].name", "access.keys[0].sha256"}},
		{"duplicates", Access{Keys: []AccessKey{{Name: "a", SHA256: sum}, {Name: "a", SHA256: sum}}},
			[]string{"access.keys[1].name \"a\": duplicate", "access.keys[1].sha256: the same key"}},
		{"bad glob", Access{Keys: []AccessKey{{Name: "a", SHA256: sum, Models: []string{"[x"}}}}, []string{"access.keys[0].models[0]"}},
		{"negative limits", Access{Keys: []AccessKey{{Name: "a", SHA256: sum, Limits: AccessLimits{-1, -1, -1}}}},
			[]string{"requests_per_minute", "tokens_per_minute", "concurrent"}},
		{"bad anonymous glob", Access{Anonymous: &AccessScope{Models: []string{""}}}, []string{"access.anonymous.models[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.Access = tt.a
			err := cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestAccessProblemsLocated: the access section's problems name their
// file line, as every other key's do.
func TestAccessProblemsLocated(t *testing.T) {
	path := writeFile(t, "access:\n  keys:\n    - name: a\n      sha256: nothex\n      models: [\"[x\"]\n      limits:\n        concurrent: -1\n")
	cfg, src, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		path + `: line 4: access.keys[0].sha256: want the 64 hex digits of the key's SHA-256 (gateway keys new NAME prints it)`,
		path + `: line 5: access.keys[0].models[0] "[x": not a glob (*, ?, [a-z])`,
		path + `: line 7: access.keys[0].limits.concurrent: must not be negative (0 means no limit)`,
	}
	if diff := cmp.Diff(want, lines(src.Locate(cfg.Validate()))); diff != "" {
		t.Errorf("Locate(Validate()) (-want +got):\n%s", diff)
	}
}
