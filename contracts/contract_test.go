package contracts

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestBuiltinsLoad(t *testing.T) {
	cs, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range cs {
		ids[c.ID()] = true
		if !c.Builtin {
			t.Errorf("%s not marked built-in", c.ID())
		}
	}
	for _, want := range []string{"mcq@1", "oracle-score@1", "extraction@1", "extraction@2", "planning@1", "article-structure@1", "extract-prompts@1", "link-plan@1", "json@1"} {
		if !ids[want] {
			t.Errorf("built-in %s missing; have %v", want, ids)
		}
	}
}

func TestLoadIsStrict(t *testing.T) {
	tests := []struct {
		name, contract, wantErr string
	}{
		{"unknown key", `{"name":"a","version":"1","shcema":"s.json"}`, "shcema"},
		{"bad fallback", `{"name":"a","version":"1","fallback":{"mode":"retry"}}`, "fallback.mode"},
		{"static without value", `{"name":"a","version":"1","fallback":{"mode":"static"}}`, "fallback.static"},
		{"bad name", `{"name":"a@b","version":"1"}`, "name"},
		{"every problem at once", `{"name":"","version":"","output":"yaml"}`, "output"},
		{"trailing data", `{"name":"a","version":"1"} {}`, "trailing"},
		{"missing schema file", `{"name":"a","version":"1","schema":"nope.json"}`, "nope.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"c/contract.json": {Data: []byte(tt.contract)}}
			_, err := Load(fsys, "c")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Load(%s) = %v, want an error with %q", tt.contract, err, tt.wantErr)
			}
		})
	}
	fsys := fstest.MapFS{"c/contract.json": {Data: []byte(`{"name":"","version":"","output":"yaml"}`)}}
	_, err := Load(fsys, "c")
	for _, part := range []string{"name", "version", "output"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("Load reports %v; want %q among all problems", err, part)
		}
	}
}

func TestSchemaLoaderRefusesExternalRefs(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []string{
		`{"$ref":"file://` + secret + `"}`,
		`{"$ref":"` + secret + `"}`,
		`{"$ref":"http://127.0.0.1:1/schema.json"}`,
		`{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
	}
	for _, schema := range tests {
		_, err := CompileSchema("t", []byte(schema))
		if err == nil {
			t.Errorf("CompileSchema(%s) succeeded", schema)
			continue
		}
		if !errors.Is(err, ErrExternalRef) && !strings.Contains(err.Error(), "external $ref") {
			t.Errorf("CompileSchema(%s) = %v, want ErrExternalRef", schema, err)
		}
	}
	if _, err := CompileSchema("t", []byte(`{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`)); err != nil {
		t.Errorf("local $ref refused: %v", err)
	}
	if _, err := CompileSchema("t", []byte(`{"type":"objekt"}`)); err == nil {
		t.Error("a schema that breaks the meta-schema compiled")
	}
}

func TestRegistryLookup(t *testing.T) {
	r := NewRegistry()
	for _, v := range []string{"2", "10", "1"} {
		if err := r.Add(&Contract{Name: "x", Version: v}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(&Contract{Name: "x", Version: "2"}, false); err == nil {
		t.Error("duplicate ID accepted")
	}
	for _, v := range []string{"1.9", "1.10", "1.2.3"} {
		if err := r.Add(&Contract{Name: "dotted", Version: v}, false); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ ref, want string }{{"x", "x@10"}, {"x@2", "x@2"}, {"x@3", ""}, {"y", ""}, {"dotted", "dotted@1.10"}}
	for _, tt := range tests {
		c, ok := r.Lookup(tt.ref)
		got := ""
		if ok {
			got = c.ID()
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestExpectsContainer(t *testing.T) {
	tests := []struct {
		shape  string
		schema string
		want   bool
	}{
		{"object", "", true},
		{"any", `{"type":"object"}`, true},
		{"any", `{"type":["array","object"]}`, true},
		{"any", `{"type":["string","object"]}`, false},
		{"any", `{}`, false},
		{"any", "", false},
	}
	for _, tt := range tests {
		c := &Contract{Shape: Shape{Expect: tt.shape}}
		if tt.schema != "" {
			c.SchemaJSON = []byte(tt.schema)
		}
		if got := c.ExpectsContainer(); got != tt.want {
			t.Errorf("ExpectsContainer(shape %s, schema %s) = %v, want %v", tt.shape, tt.schema, got, tt.want)
		}
	}
}

func TestFromSchema(t *testing.T) {
	c, err := FromSchema([]byte(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Fallback.Mode != FallbackBestEffort || c.Schema == nil || !strings.HasPrefix(c.ID(), "schema@") {
		t.Errorf("FromSchema = %+v", c)
	}
	if _, err := FromSchema([]byte(`{"type":`)); err == nil {
		t.Error("malformed schema accepted")
	}
}

func TestRegistryListOrder(t *testing.T) {
	r := NewRegistry()
	for _, v := range []string{"1.10", "2", "1.9", "10", "1.2.3", "beta"} {
		if err := r.Add(&Contract{Name: "x", Version: v}, false); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, c := range r.List() {
		got = append(got, c.Version)
	}
	want := []string{"1.2.3", "1.9", "1.10", "2", "10", "beta"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("List() versions = %v, want %v", got, want)
	}
}

// TestLoadRegistryUserDuplicates: a user contract may replace a built-in,
// but two user contracts with one name@version are a load error naming
// both directories, not a silent choice of one.
func TestLoadRegistryUserDuplicates(t *testing.T) {
	dir := t.TempDir()
	write := func(sub, version string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		raw := `{"name":"mcq","version":"` + version + `"}`
		if err := os.WriteFile(filepath.Join(dir, sub, "contract.json"), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mcq-override", "1")
	r, err := LoadRegistry(dir)
	if err != nil {
		t.Fatalf("LoadRegistry with an override of a built-in: %v", err)
	}
	if c, _ := r.Lookup("mcq@1"); c == nil || c.Builtin {
		t.Errorf("Lookup(mcq@1) = %+v, want the user contract", c)
	}
	write("mcq-copy", "1")
	_, err = LoadRegistry(dir)
	if err == nil || !strings.Contains(err.Error(), "mcq-copy") || !strings.Contains(err.Error(), "mcq-override") {
		t.Errorf("LoadRegistry with two user mcq@1 = %v, want an error naming both directories", err)
	}
}

// TestBuiltinDescriptionsAreTrue: a built-in's description states its
// rules in words (no pointer to a requirement document), and a contract
// whose policy makes model calls never claims to repair only locally.
func TestBuiltinDescriptionsAreTrue(t *testing.T) {
	cs, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	pointer := regexp.MustCompile(`(?i)\bREQ[-_ ]?\d|§|\.md\b|\bsee (the )?(spec|requirement)`)
	localOnly := regexp.MustCompile(`(?i)\b(syntactic|local|syntax) repair only\b|\bno model\b|\bwithout (a )?model`)
	for _, c := range cs {
		t.Run(c.ID(), func(t *testing.T) {
			if len(c.Description) < 40 {
				t.Errorf("description %q: too short to state the contract's rules", c.Description)
			}
			if m := pointer.FindString(c.Description); m != "" {
				t.Errorf("description points elsewhere (%q) instead of stating its rules: %q", m, c.Description)
			}
			calls := c.Policy.MaxRepairs > 0 || len(c.Policy.Temperatures) > 0 || c.Fallback.Mode == FallbackModel
			if m := localOnly.FindString(c.Description); calls && m != "" {
				t.Errorf("description says %q, but the policy makes model calls (max_repairs %d, temperatures %v): %q",
					m, c.Policy.MaxRepairs, c.Policy.Temperatures, c.Description)
			}
		})
	}
}
