package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadOutcomesKeys(t *testing.T) {
	runDecodeCases(t, func(c Config) Outcomes { return c.Outcomes }, []decodeCase[Outcomes]{
		{"all keys", "outcomes:\n  sqlite: /var/lib/cg/o.db\n  postgres: \"\"\n  retention: 72h\n  disabled: false\n",
			Outcomes{SQLite: "/var/lib/cg/o.db", Retention: Retention(72 * time.Hour)}, ""},
		{"keep everything", "outcomes: {retention: -1}\n", Outcomes{Retention: -1}, ""},
		{"disabled", "outcomes: {disabled: true}\n", Outcomes{Disabled: true}, ""},
		{"retention not a duration", "outcomes:\n  retention: a week\n", Outcomes{}, "outcomes.retention"},
		{"unknown key", "outcomes:\n  sqlite_path: x\n", Outcomes{}, "outcomes.sqlite_path"},
	})
}

// decodeCase is a row of a table test of one config section's decoding:
// the YAML, and the section it gives or a part of the error it gives.
type decodeCase[T comparable] struct {
	name string
	yaml string
	want T
	err  string // "" for none
}

// runDecodeCases decodes each case's YAML over the defaults and compares
// the section that section reads with the case's.
func runDecodeCases[T comparable](t *testing.T, section func(Config) T, tests []decodeCase[T]) {
	t.Helper()
	for _, tt := range tests {
		cfg := Default()
		err := decode([]byte(tt.yaml), &cfg)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: decode = %v", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: decode = %v, want an error naming %s", tt.name, err, tt.err)
		case tt.err == "" && section(cfg) != tt.want:
			t.Errorf("%s: section = %+v, want %+v", tt.name, section(cfg), tt.want)
		}
	}
}

func TestValidateOutcomes(t *testing.T) {
	tests := []struct {
		name string
		o    Outcomes
		want string // "" for valid
	}{
		{"sqlite", Outcomes{SQLite: "/tmp/o.db"}, ""},
		{"postgres url", Outcomes{Postgres: "postgres://u:p@db:5432/cg"}, ""},
		{"postgres key value", Outcomes{Postgres: "host=db user=cg"}, ""},
		{"both", Outcomes{SQLite: "/tmp/o.db", Postgres: "postgres://db/cg"}, "outcomes.postgres"},
		{"not postgres", Outcomes{Postgres: "mysql://u:secret@db/cg"}, "outcomes.postgres"},
	}
	for _, tt := range tests {
		cfg := Default()
		cfg.Outcomes = tt.o
		err := cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate() = %v, want an error naming %s", tt.name, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: Validate() = %v, which shows the DSN's password", tt.name, err)
		}
	}
}

func TestOutcomesFromEnv(t *testing.T) {
	env := map[string]string{EnvOutcomesSQLite: "/data/o.db", EnvOutcomesPostgres: "postgres://db/cg"}
	cfg := Default()
	if err := FromEnv(&cfg, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if cfg.Outcomes.SQLite != "/data/o.db" || cfg.Outcomes.Postgres != "postgres://db/cg" {
		t.Errorf("Outcomes = %+v, want both from the environment", cfg.Outcomes)
	}
	src := &Source{}
	src.OverrideEnv(func(k string) string { return env[k] })
	if got := src.Where("outcomes.postgres"); got != "$"+EnvOutcomesPostgres {
		t.Errorf("Where(outcomes.postgres) = %q, want $%s", got, EnvOutcomesPostgres)
	}
}

func TestDefaultOutcomesSQLite(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/contract-gateway/outcomes.db"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/contract-gateway/outcomes.db"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := DefaultOutcomesSQLite(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("DefaultOutcomesSQLite(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
