package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Load reads the YAML file at path over [Default]. Keys the file does not
// set keep their defaults. An unknown key, a value of the wrong type or a
// second YAML document is an error naming the file, the line and the key;
// every such problem is reported, and the rest of the file is decoded.
// Load does not validate: call [Config.Validate] once the environment and
// flags have been applied.
func Load(path string) (Config, error) {
	cfg, _, err := Read(path)
	return cfg, err
}

// Read is Load, and returns besides the Config the [Source] that locates
// its keys, so that the problems later stages find (Validate, the
// gateway's routes) name their lines too. Its error joins one *Problem per
// problem, each located; the Config holds what could be decoded.
func Read(path string) (Config, *Source, error) {
	cfg := Default()
	src := &Source{File: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, src, err
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil {
		src.lines = keyLines(&root)
	}
	if _, pool := src.lines["upstreams"]; pool {
		if _, one := src.lines["upstream"]; !one {
			cfg.Upstream = "" // the file's pool replaces the default upstream
		}
	}
	if err := decode(data, &cfg); err != nil {
		var out []error
		for _, e := range Problems(err) {
			var p *Problem
			if !errors.As(e, &p) {
				p = &Problem{Err: e}
			}
			p.Where = strings.TrimSuffix(path+": "+p.Where, ": ")
			out = append(out, p)
		}
		return cfg, src, errors.Join(out...)
	}
	return cfg, src, nil
}

func decode(data []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(cfg)
	if errors.Is(err, io.EOF) {
		return nil // an empty file is the defaults
	}
	var errs []error
	if err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			// Not YAML: nothing was decoded, nor can a second document
			// be looked for.
			return explain(data, err)
		}
		errs = append(errs, explain(data, err))
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		// Not YAML after the first document: yaml's message has the line.
		errs = append(errs, &Problem{Err: err})
	default:
		errs = append(errs, &Problem{Where: fmt.Sprintf("line %d", extra.Line), Err: errors.New("a second YAML document; the file must hold one")})
	}
	return errors.Join(errs...)
}

// typeErrLine matches one message of a yaml.TypeError.
var typeErrLine = regexp.MustCompile(`^line (\d+): (?:field (\S+) not found in type \S+|(.*))$`)

// explain rewrites yaml.v3's type errors, which name Go types
// ("field foo not found in type config.Breaker"), in terms of the file:
// one *Problem per message, with the line and the dotted key
// ("breaker.foo").
func explain(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return err
	}
	keys := keyPaths(&root)
	var errs []error
	for _, msg := range te.Errors {
		m := typeErrLine.FindStringSubmatch(msg)
		if m == nil {
			errs = append(errs, errors.New(msg))
			continue
		}
		line, _ := strconv.Atoi(m[1])
		where := "line " + m[1]
		if m[2] != "" {
			key := keys[lineKey{line, m[2]}]
			if key == "" {
				key = m[2]
			}
			errs = append(errs, &Problem{Key: key, Where: where, Err: fmt.Errorf("unknown key %q", key)})
			continue
		}
		// Other messages ("cannot unmarshal !!str `x` into int") name the
		// value; the key is the one on that line, if there is one.
		if key := keyOnLine(keys, line); key != "" {
			errs = append(errs, &Problem{Key: key, Where: where, Err: fmt.Errorf("%s: %s", key, strings.TrimPrefix(m[3], "yaml: "))})
			continue
		}
		errs = append(errs, &Problem{Where: where, Err: errors.New(strings.TrimPrefix(m[3], "yaml: "))})
	}
	return errors.Join(errs...)
}

type lineKey struct {
	line int
	name string
}

// keyPaths maps every mapping key in the document to its dotted path,
// with sequence indexes in brackets: "routes[1].params".
func keyPaths(n *yaml.Node) map[lineKey]string {
	out := map[lineKey]string{}
	walkKeys(n, func(path string, node *yaml.Node, key bool) {
		if key {
			out[lineKey{node.Line, node.Value}] = path
		}
	})
	return out
}

// keyOnLine returns the longest key path on line, so that "log: {level: x}"
// names log.level rather than log.
func keyOnLine(keys map[lineKey]string, line int) string {
	best := ""
	for k, p := range keys {
		if k.line == line && len(p) > len(best) {
			best = p
		}
	}
	return best
}

// ByteSize is a size in bytes. In YAML it is an integer or a string with a
// unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024),
// as in "32MiB" or "1.5 GB".
type ByteSize int64

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	// A TypeError joins yaml's own list, so that explain names the key.
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a size such as 32MiB or 1048576", n.Line)}}
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*b = v
	return nil
}

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseByteSize parses "1048576", "32MiB", "1.5 GB" and the like.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool {
		return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+'
	})
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult, ok := byteUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with a unit (B, KB, MB, GB, KiB, MiB, GiB)", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil && mult == 1 {
		return ByteSize(n), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("size %q: bad number", s)
	}
	v := f * mult
	if v >= math.MaxInt64 || v <= math.MinInt64 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	return ByteSize(v), nil
}

// UnmarshalYAML implements yaml.Unmarshaler: a duration such as "168h",
// or -1 (keep everything), which a time.Duration refuses.
func (r *Retention) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "-1" {
			*r = -1
			return nil
		}
		if d, err := time.ParseDuration(n.Value); err == nil {
			*r = Retention(d)
			return nil
		}
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a duration such as 168h, or -1 to keep everything", n.Line)}}
}
