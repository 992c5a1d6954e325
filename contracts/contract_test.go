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
		{"trailing data", `{"name":"a","version":"1"} {}`, "line 1, column 28: unexpected '{' after the end of the JSON value"},
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

// TestLoadLocatesProblems: a contract file's JSON syntax error, its
// unknown fields (every one, at any depth) and its values of the wrong
// type name the file, the line and the column; a broken schema file
// names its own.
func TestLoadLocatesProblems(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"syntax error in contract.json", map[string]string{
			"c/contract.json": "{\n  \"name\": \"a\",\n  \"version\": \"1\",\n}\n",
		}, []string{"c/contract.json: line 3, column 17: trailing comma"}},
		{"unknown fields", map[string]string{
			"c/contract.json": "{\n  \"name\": \"a\", \"version\": \"1\",\n  \"fallbak\": {\"mode\": \"error\"},\n  \"policy\": {\"max_repair\": 1}\n}\n",
		}, []string{`c/contract.json: line 3, column 3: unknown field "fallbak"`, `c/contract.json: line 4, column 14: unknown field "policy.max_repair"`}},
		{"wrong type", map[string]string{
			"c/contract.json": "{\"name\": \"a\", \"version\": \"1\",\n \"policy\": {\"max_repairs\": \"two\"}}",
		}, []string{`c/contract.json: line 2, column 28: policy.max_repairs: want an integer, got a JSON string`}},
		{"syntax error in the schema", map[string]string{
			"c/contract.json": `{"name": "a", "version": "1", "schema": "schema.json"}`,
			"c/schema.json":   "{\n  \"type\": \"object\",\n}\n",
		}, []string{"c/schema.json: line 2, column 19: trailing comma"}},
		{"every problem of a contract", map[string]string{
			"c/contract.json": "{\"name\": \"a\", \"version\": \"1\", \"fallbak\": 1, \"output\": \"yaml\", \"schema\": \"s.json\"}",
			"c/s.json":        "{\"type\": }",
		}, []string{`line 1, column 31: unknown field "fallbak"`, `c/contract.json: output "yaml"`, "c/s.json: line 1, column 10: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := Load(fsys, "c")
			if err == nil {
				t.Fatalf("Load() = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load() = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestLoadDirReportsEveryContract: a directory with several broken
// contracts reports each, named by its path on disk, and still returns the
// ones that load.
func TestLoadDirReportsEveryContract(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good/contract.json", `{"name": "good", "version": "1"}`)
	write("typo/contract.json", "{\"name\": \"typo\", \"version\": \"1\",\n \"fallbak\": {}}")
	write("broken/contract.json", `{"name": "broken", "version": "1", "schema": "schema.json"}`)
	write("broken/schema.json", "{\"type\": \"object\",}")
	cs, err := loadDir(os.DirFS(dir), ".", dir)
	for _, w := range []string{
		filepath.Join(dir, "typo", "contract.json") + `: line 2, column 2: unknown field "fallbak"`,
		filepath.Join(dir, "broken", "schema.json") + ": line 1, column 18: trailing comma",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("loadDir() = %v\nwant it to contain %q", err, w)
		}
	}
	if len(cs) != 1 || cs[0].ID() != "good@1" {
		t.Errorf("loadDir() loaded %d contracts, want good@1 alone", len(cs))
	}
	if _, err := LoadRegistry(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "typo", "contract.json")+": line 2") {
		t.Errorf("LoadRegistry() = %v, want the typo's path on disk and line", err)
	}
}

// FuzzDecodeLocated: whatever a contract file holds, decoding it reports
// problems with positions inside the file and never panics.
func FuzzDecodeLocated(f *testing.F) {
	for _, s := range []string{`{"name":"a","version":"1"}`, "{\n\"fallbak\": 1}", `{"policy":{"max_repairs":"x"}}`, `{"shape":[1]}`, "{\"a\":", "\xff", `[]`, `{"policy":{"temperatures":[{"x":1}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v file
		errs, _ := decodeLocated("c.json", raw, &v)
		lines := strings.Count(string(raw), "\n") + 1
		for _, err := range errs {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("decodeLocated(%q) error %v is not a *FileError", raw, err)
			}
			if fe.Line < 0 || fe.Line > lines || (fe.Line > 0 && fe.Col < 1) {
				t.Errorf("decodeLocated(%q) located %d:%d outside the file", raw, fe.Line, fe.Col)
			}
		}
	})
}
