package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

// TestReadLocatesEveryProblem: Read reports every unknown key and value of
// the wrong type with its line, decodes the rest, and its Source locates
// the problems Validate finds afterwards.
func TestReadLocatesEveryProblem(t *testing.T) {
	path := writeFile(t, "listen: 127.0.0.1:0\nlisten_adress: x\nmax_llm_calls: many\nlog:\n  level: verbose\nroutes:\n  - model: quiz\n    contract: mcq\n    output: yaml\n  - model: quiz\n")
	cfg, src, err := Read(path)
	want := []string{
		path + `: line 2: unknown key "listen_adress"`,
		path + `: line 3: max_llm_calls: cannot unmarshal !!str ` + "`many`" + ` into int`,
	}
	if diff := cmp.Diff(want, lines(err)); diff != "" {
		t.Errorf("Read() problems (-want +got):\n%s", diff)
	}
	if cfg.Listen != "127.0.0.1:0" || cfg.Log.Level != "verbose" || len(cfg.Routes) != 2 {
		t.Errorf("Read() decoded listen %q, log.level %q, %d routes; want the rest of the file", cfg.Listen, cfg.Log.Level, len(cfg.Routes))
	}
	want = []string{
		path + `: line 5: log.level "verbose": want debug, info, warn or error`,
		path + `: line 9: routes[0].output "yaml": want bare or fenced`,
		path + `: line 10: routes[1].model "quiz": duplicate of routes[0]`,
		path + `: line 10: routes[1].contract: required`,
	}
	if diff := cmp.Diff(want, lines(src.Locate(cfg.Validate()))); diff != "" {
		t.Errorf("Locate(Validate()) (-want +got):\n%s", diff)
	}
}

func lines(err error) []string {
	var out []string
	for _, e := range Problems(err) {
		out = append(out, e.Error())
	}
	return out
}

func TestSourceWhere(t *testing.T) {
	src := &Source{File: "g.yaml", lines: map[string]int{"log": 4, "log.level": 5, "routes": 7, "routes[1]": 9, "routes[1].contract": 10}}
	src.Override("listen", "--listen")
	src.OverrideEnv(func(k string) string { return map[string]string{EnvLogFormat: "xml"}[k] })
	tests := []struct {
		key, want string
	}{
		{"log.level", "g.yaml: line 5"},
		{"log.format", "$GATEWAY_LOG_FORMAT"},
		{"routes[1].contract", "g.yaml: line 10"},
		{"routes[1].params", "g.yaml: line 9"},
		{"routes[3].model", "g.yaml: line 7"},
		{"listen", "--listen"},
		{"upstream", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := src.Where(tt.key); got != tt.want {
			t.Errorf("Where(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	var none *Source
	if got := none.Where("listen"); got != "" {
		t.Errorf("nil Source: Where = %q, want \"\"", got)
	}
}

// FuzzRead: whatever a config file holds, decoding it never panics and
// every problem it reports is a *Problem on a line of the file.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"listen: a:1\n", "a: 1\nb: [\n", "routes:\n  - model: x\n    parm: 1\n", "log: {level: 3}\n", "---\n---\n", "- a\n", "max_body_bytes: 3 parsecs\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg := Default()
		err := decode([]byte(s), &cfg)
		n := yamlLines(s)
		for _, e := range Problems(err) {
			var p *Problem
			if !errors.As(e, &p) {
				continue // not YAML at all: yaml's own error
			}
			var line int
			if _, scanErr := fmt.Sscanf(p.Where, "line %d", &line); scanErr == nil && (line < 1 || line > n+1) {
				t.Errorf("decode(%q): problem %v on line %d of %d", s, e, line, n)
			}
		}
	})
}

// yamlLines counts the lines of s as YAML reads them: UTF-16 after its
// byte order mark, and a line ending at \n, \r\n, a lone \r, NEL, or
// the line and paragraph separators U+2028 and U+2029.
func yamlLines(s string) int {
	text := s
	if strings.HasPrefix(s, "\xfe\xff") || strings.HasPrefix(s, "\xff\xfe") {
		units := make([]uint16, 0, len(s)/2)
		for i := 2; i+1 < len(s); i += 2 {
			hi, lo := s[i], s[i+1]
			if s[0] == 0xff {
				hi, lo = lo, hi
			}
			units = append(units, uint16(hi)<<8|uint16(lo))
		}
		text = string(utf16.Decode(units))
	}
	n := 1
	for _, r := range strings.ReplaceAll(text, "\r\n", "\n") {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
