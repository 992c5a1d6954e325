package config

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a configuration: the YAML key it
// concerns, where that key's value came from, and what is wrong. Load,
// Validate and the gateway's checks of routes and contracts all report
// Problems, so that a caller gathers every one of every stage and prints
// them in one run, each with its line.
type Problem struct {
	// Key is the dotted YAML key ("routes[1].contract", "log.level"), or
	// "" when the problem concerns the file as a whole.
	Key string
	// Where is where the value came from: "FILE: line N", "$GATEWAY_LISTEN"
	// or "--listen"; "" until [Source.Locate] fills it in, and after when
	// the value is a default.
	Where string
	// Err says what is wrong; its message starts with the key, so that it
	// reads alone.
	Err error
}

// Error returns "WHERE: message", or the message alone when Where is not
// known.
func (p *Problem) Error() string {
	if p.Where == "" {
		return p.Err.Error()
	}
	return p.Where + ": " + p.Err.Error()
}

func (p *Problem) Unwrap() error { return p.Err }

// Source says where the keys of a Config were set: the lines of its file,
// and the environment variables and flags that replaced them. The zero
// Source knows no file.
type Source struct {
	// File is the config file's path, or "" when there is none.
	File  string
	lines map[string]int    // dotted key → line in File
	set   map[string]string // dotted key → "$VAR" or "--flag" that replaced it
}

// Override records that origin ("$GATEWAY_LISTEN", "--listen") set key
// after the file: a problem of key is then that origin's, not the file
// line's.
func (s *Source) Override(key, origin string) {
	if s.set == nil {
		s.set = map[string]string{}
	}
	s.set[key] = origin
}

// OverrideEnv records the keys FromEnv sets from getenv.
func (s *Source) OverrideEnv(getenv func(string) string) {
	for _, e := range envKeys {
		if getenv(e.env) != "" {
			s.Override(e.key, "$"+e.env)
		}
	}
}

// envKeys pairs the variables FromEnv reads with their YAML keys.
var envKeys = []struct{ env, key string }{
	{EnvListen, "listen"}, {EnvUpstream, "upstream"}, {EnvUpstreams, "upstreams"}, {EnvContracts, "contracts_dir"},
	{EnvAdminToken, "admin_token"}, {EnvMaxBody, "max_body_bytes"},
	{EnvLogLevel, "log.level"}, {EnvLogFormat, "log.format"},
	{EnvOutcomesSQLite, "outcomes.sqlite"}, {EnvOutcomesPostgres, "outcomes.postgres"},
}

// Where returns where key's value came from: its override, else the line
// of the key in the file (or of the nearest enclosing key or list item the
// file has, "routes[1]" for a route's missing params), else "".
func (s *Source) Where(key string) string {
	if s == nil {
		return ""
	}
	for k := key; k != ""; k = parentKey(k) {
		if o, ok := s.set[k]; ok {
			return o
		}
		if line, ok := s.lines[k]; ok {
			return fmt.Sprintf("%s: line %d", s.File, line)
		}
	}
	return ""
}

// parentKey strips the last element of a dotted key: "routes[1].params"
// → "routes[1]" → "routes" → "".
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// Locate fills in where each Problem in err came from (see Where) and
// returns err's problems joined, in their order; an error that is not a
// Problem is kept as it is. nil stays nil.
func (s *Source) Locate(err error) error {
	var out []error
	for _, e := range Problems(err) {
		var p *Problem
		if errors.As(e, &p) && p.Where == "" {
			p.Where = s.Where(p.Key)
			if p.Where == "" && p.Key == "" && s != nil && s.File != "" {
				p.Where = s.File
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// Problems lists the errors err joins (errors.Join, at any depth), one per
// problem; nil for nil.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	return []error{err}
}

// keyLines maps every mapping key and list item of the document to its
// line, by dotted path with list indexes in brackets ("routes[1].params").
func keyLines(n *yaml.Node) map[string]int {
	out := map[string]int{}
	walkKeys(n, func(path string, node *yaml.Node, _ bool) { out[path] = node.Line })
	return out
}

// walkKeys calls visit with every mapping key and list item of the
// document, by dotted path with list indexes in brackets
// ("routes[1].params"): the key's node for a mapping key (key true), the
// item's for a list item.
func walkKeys(n *yaml.Node, visit func(path string, node *yaml.Node, key bool)) {
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, prefix)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if prefix != "" {
					p = prefix + "." + k.Value
				}
				visit(p, k, true)
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", prefix, i)
				visit(p, c, false)
				walk(c, p)
			}
		}
	}
	walk(n, "")
}
