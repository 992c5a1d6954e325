package config

import (
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// Access configures API keys, their scopes and limits, and protected mode.
// With no keys every request is let through, as Ollama does; with keys,
// every request but /healthz and the admin routes (which keep the admin
// token) needs one.
type Access struct {
	// AllowAnonymous lets the gateway start on a listen address other
	// than loopback with no keys (protected mode refuses that otherwise).
	// False by default. It grants nothing when keys exist: see Anonymous.
	AllowAnonymous bool `yaml:"allow_anonymous"`

	// Keys are the API keys ("gateway keys new NAME" makes one). Empty
	// means no access control.
	Keys []AccessKey `yaml:"keys"`

	// Anonymous is what a request without a key may do when keys exist.
	// Absent means nothing (401).
	Anonymous *AccessScope `yaml:"anonymous"`
}

// AccessKey is one API key: its name, the SHA-256 of its secret, its
// scope and its limits.
type AccessKey struct {
	// Name names the key in logs, metrics and stats. Required, unique.
	Name string `yaml:"name"`

	// SHA256 is the hex SHA-256 of the key; the file holds no secret.
	// Required.
	SHA256 string `yaml:"sha256"`

	// Models are globs over the model name the client sends ("quiz",
	// "llama3.2*"; a * does not cross a /). Absent means every model; an
	// empty list none.
	Models []string `yaml:"models"`

	// Manage allows /api/pull, /api/push, /api/create, /api/delete,
	// /api/copy and /api/blobs. Default false.
	Manage bool `yaml:"manage"`

	// Limits bound the key's use.
	Limits AccessLimits `yaml:"limits"`
}

// AccessScope is what requests without a key may do.
type AccessScope struct {
	// Models are globs as in AccessKey.Models. Absent means every model;
	// an empty list none.
	Models []string `yaml:"models"`
	// Manage allows model management. Default false.
	Manage bool `yaml:"manage"`
}

// AccessLimits bound one key. Zero means no limit. Requests and tokens are
// counted in cache.redis when it is set (shared by the replicas), else in
// memory; Concurrent is per replica.
type AccessLimits struct {
	// RequestsPerMinute is the key's request rate (bursts up to one
	// minute's worth).
	RequestsPerMinute int `yaml:"requests_per_minute"`
	// TokensPerMinute bounds the prompt and output tokens of every
	// upstream call the key's requests make, repairs included: a request
	// is admitted while the key is under it and charged when it ends.
	TokensPerMinute int `yaml:"tokens_per_minute"`
	// Concurrent bounds the key's requests in flight.
	Concurrent int `yaml:"concurrent"`
}

// validate reports every problem of the access section through add, each
// under its key (access.keys[0].sha256), so that it is located in the file.
func (a Access) validate(add func(key, format string, args ...any)) {
	names, sums := map[string]int{}, map[string]int{}
	for i, k := range a.Keys {
		key := fmt.Sprintf("access.keys[%d]", i)
		uniqueName(add, names, "access.keys", i, "name", k.Name, "it names the key in logs, metrics and stats")
		sum := strings.ToLower(k.SHA256)
		if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
			add(key+".sha256", "%s.sha256: want the 64 hex digits of the key's SHA-256 (gateway keys new NAME prints it)", key)
		} else if j, dup := sums[sum]; dup {
			add(key+".sha256", "%s.sha256: the same key as access.keys[%d]", key, j)
		} else {
			sums[sum] = i
		}
		validGlobs(key+".models", k.Models, add)
		for _, l := range []struct {
			name string
			v    int
		}{{"requests_per_minute", k.Limits.RequestsPerMinute}, {"tokens_per_minute", k.Limits.TokensPerMinute}, {"concurrent", k.Limits.Concurrent}} {
			if l.v < 0 {
				add(key+".limits."+l.name, "%s.limits.%s: must not be negative (0 means no limit)", key, l.name)
			}
		}
	}
	if a.Anonymous != nil {
		validGlobs("access.anonymous.models", a.Anonymous.Models, add)
	}
}

// uniqueName reports through add the field of item i of a list (a name
// the list's items are told apart by) when it is empty, with required
// saying what it is for, or when an earlier item has it (seen maps each
// name to the first item that has it); else it records it in seen.
func uniqueName(add func(key, format string, args ...any), seen map[string]int, list string, i int, field, name, required string) {
	key := fmt.Sprintf("%s[%d].%s", list, i, field)
	if strings.TrimSpace(name) == "" {
		add(key, "%s: required (%s)", key, required)
	} else if j, dup := seen[name]; dup {
		add(key, "%s %q: duplicate of %s[%d]", key, name, list, j)
	} else {
		seen[name] = i
	}
}

func validGlobs(key string, globs []string, add func(string, string, ...any)) {
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			k := fmt.Sprintf("%s[%d]", key, i)
			add(k, "%s %q: not a glob (*, ?, [a-z])", k, g)
		}
	}
}
