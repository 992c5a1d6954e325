package contracts

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/internal/schemagen"
)

// fanOutSchema names the next level `branches` times from each of `levels`
// levels through allOf and $ref: a few hundred bytes to a couple of KB
// whose validation walks branches^levels subschemas.
func fanOutSchema(branches, levels int) []byte { return []byte(schemagen.FanOut(branches, levels)) }

// fanOutCost is SchemaCost of fanOutSchema: each level is itself plus, per
// branch, a $ref subschema and the next level.
func fanOutCost(branches, levels int) int64 {
	c := int64(1)
	for range levels {
		c = 1 + int64(branches)*(1+c)
	}
	return 1 + c
}

// dynamicFanOut hides a fan-out behind a $dynamicRef: the static target
// is the embedded resource itself, but the validator resolves the
// reference to the outermost resource that declares the anchor, here a
// $defs entry of the root that no static reference reaches.
func dynamicFanOut(branches, levels int) []byte {
	f := string(fanOutSchema(branches, levels))
	defs := f[len(`{"$ref":"#/$defs/l0","$defs":{`) : len(f)-2]
	return []byte(`{"$ref":"http://example.com/inner","$defs":{` +
		`"big":{"$dynamicAnchor":"x","allOf":[{"$ref":"#/$defs/l0"}]},` +
		`"inner":{"$id":"http://example.com/inner","$dynamicAnchor":"x","$dynamicRef":"#x"},` +
		defs + `}}`)
}

func compileForCost(t testing.TB, raw []byte) (*jsonschema.Schema, []*jsonschema.Schema) {
	t.Helper()
	s, extra, err := compileSchema("t", raw)
	if err != nil {
		t.Fatalf("compile %s: %v", raw, err)
	}
	return s, extra
}

func TestSchemaCost(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   int64
	}{
		{"boolean", `true`, 1},
		{"one keyword", `{"type":"string"}`, 1},
		{"flat properties", string(flatSchema(10)), 11},
		{"nested properties", string(nestedSchema(5)), 6},
		{"enum counts its values", `{"enum":[1,2,3]}`, 4},
		{"unreferenced $defs cost nothing", `{"type":"object","$defs":{"x":{"properties":{"a":{},"b":{}}}}}`, 1},
		{"$ref once", `{"properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, 3},
		{"$ref twice counts the target twice",
			`{"allOf":[{"$ref":"#/$defs/x"},{"$ref":"#/$defs/x"}],"$defs":{"x":{"properties":{"a":{},"b":{}}}}}`, 9},
		{"$ref to an $anchor", `{"allOf":[{"$ref":"#a"},{"$ref":"#a"}],"$defs":{"x":{"$anchor":"a","type":"string"}}}`, 5},
		{"$ref to an embedded $id",
			`{"allOf":[{"$ref":"http://example.com/x"},{"$ref":"http://example.com/x"}],"$defs":{"x":{"$id":"http://example.com/x","type":"string"}}}`, 5},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","anyOf":[{"$ref":"#/definitions/x"},{"$ref":"#/definitions/x"}],"definitions":{"x":{"not":{}}}}`, 7},
		{"recursive tree counts the cycle once",
			`{"$ref":"#/$defs/node","$defs":{"node":{"properties":{"children":{"items":{"$ref":"#/$defs/node"}}}}}}`, 5},
		{"self reference in place", `{"allOf":[{"$ref":"#"}]}`, 3},
		{"fan-out 2x3", string(fanOutSchema(2, 3)), fanOutCost(2, 3)},
		{"fan-out 3x4", string(fanOutSchema(3, 4)), fanOutCost(3, 4)},
		{"fan-out 2x26 saturates", string(fanOutSchema(2, 26)), 1001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, extra := compileForCost(t, []byte(tt.schema))
			if got := schemaCost(s, extra, 1000); got != tt.want {
				t.Errorf("schemaCost(%s) = %d, want %d", tt.schema, got, tt.want)
			}
		})
	}
}

// TestSchemaCostDynamicRef: a fan-out reached only through $dynamicRef's
// dynamic resolution is counted although no static reference reaches it.
func TestSchemaCostDynamicRef(t *testing.T) {
	s, extra := compileForCost(t, dynamicFanOut(2, 8))
	if got, want := schemaCost(s, extra, 0), fanOutCost(2, 8); got < want {
		t.Errorf("schemaCost(dynamic fan-out 2x8) = %d, want at least %d", got, want)
	}
	if _, err := CompileSchema("t", dynamicFanOut(2, 26)); !isLimit(err, LimitExpanded) {
		t.Errorf("CompileSchema(dynamic fan-out 2x26) = %v, want the expanded limit", err)
	}
}

func isLimit(err error, limit string) bool {
	var le *SchemaLimitError
	return errors.As(err, &le) && le.Limit == limit
}

// TestFromSchemaRefusesFanOut: the schemas of the report (a 1.7 KB schema
// that took minutes of CPU to validate one value with) are refused before
// any value is validated, with the expanded limit named.
func TestFromSchemaRefusesFanOut(t *testing.T) {
	tests := []struct {
		branches, levels int
	}{{2, 26}, {2, 20}, {3, 14}, {2, 14}}
	for _, tt := range tests {
		raw := fanOutSchema(tt.branches, tt.levels)
		if err := DefaultSchemaLimits.Check(raw); err != nil {
			t.Fatalf("fan-out %dx%d is over the text limits (%v): the test proves nothing", tt.branches, tt.levels, err)
		}
		_, err := FromSchema(raw)
		if !isLimit(err, LimitExpanded) {
			t.Errorf("FromSchema(fan-out %dx%d, %d bytes) = %v, want the expanded limit", tt.branches, tt.levels, len(raw), err)
		}
	}
	if _, err := FromSchema(fanOutSchema(2, 10)); err != nil {
		t.Errorf("FromSchema(fan-out 2x10) = %v, want it accepted", err)
	}
}

// TestLoadRefusesFanOut: a contract file's schema over the cap is a load
// error that names the limit; the operator's schemas cost requests CPU as
// much as a client's do.
func TestLoadRefusesFanOut(t *testing.T) {
	contract := `{"name":"fan","version":"1","schema":"schema.json"}`
	tests := []struct {
		name   string
		schema []byte
		want   bool
	}{
		{"2x26 fan-out", fanOutSchema(2, 26), true},
		{"2x10 fan-out", fanOutSchema(2, 10), false},
	}
	for _, tt := range tests {
		fsys := fstest.MapFS{
			"c/fan/contract.json": {Data: []byte(contract)},
			"c/fan/schema.json":   {Data: tt.schema},
		}
		_, err := LoadDir(fsys, "c")
		if got := isLimit(err, LimitExpanded); got != tt.want {
			t.Errorf("LoadDir(%s) = %v, want the expanded limit: %v", tt.name, err, tt.want)
		}
	}
}

// TestBuiltinSchemaCosts: every built-in contract's schema is far below
// the cap, and so is the widest flat schema the text limits let through.
func TestBuiltinSchemaCosts(t *testing.T) {
	cs, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.SchemaJSON == nil {
			continue
		}
		s, extra := compileForCost(t, c.SchemaJSON)
		got := schemaCost(s, extra, 0)
		t.Logf("%s: %d bytes, expanded cost %d", c.ID(), len(c.SchemaJSON), got)
		if got > DefaultMaxSchemaCost/10 {
			t.Errorf("%s: expanded cost %d, want at most a tenth of %d", c.ID(), got, DefaultMaxSchemaCost)
		}
	}
	wide := flatSchema(DefaultSchemaLimits.MaxSubschemas - 2)
	s, extra := compileForCost(t, wide)
	if got := schemaCost(s, extra, 0); got > DefaultMaxSchemaCost/4 {
		t.Errorf("widest flat schema: expanded cost %d, want at most a quarter of %d", got, DefaultMaxSchemaCost)
	}
}

// FuzzSchemaCost: the estimate terminates on any schema that compiles, is
// deterministic, never counts fewer than the subschemas the validator can
// reach, and saturates consistently: with a cap it is the uncapped figure
// or cap+1, whichever is smaller.
func FuzzSchemaCost(f *testing.F) {
	for _, s := range []string{
		`true`, `{"type":"string"}`, string(flatSchema(5)), string(nestedSchema(4)),
		`{"enum":[1,2,3]}`,
		`{"allOf":[{"$ref":"#a"},{"$ref":"#a"}],"$defs":{"x":{"$anchor":"a","type":"string"}}}`,
		`{"$ref":"#/$defs/node","$defs":{"node":{"properties":{"children":{"items":{"$ref":"#/$defs/node"}}}}}}`,
		`{"allOf":[{"$ref":"#"}]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","anyOf":[{"$ref":"#/definitions/x"}],"definitions":{"x":{"not":{}}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"items":{"$recursiveRef":"#"}}`,
		`{"$ref":"https://json-schema.org/draft/2020-12/schema"}`,
		string(fanOutSchema(2, 6)), string(fanOutSchema(3, 3)), string(dynamicFanOut(2, 4)),
	} {
		f.Add([]byte(s), uint16(50))
	}
	f.Fuzz(func(t *testing.T, raw []byte, capped uint16) {
		if (SchemaLimits{MaxBytes: 4 << 10, MaxDepth: 16, MaxSubschemas: 256}).Check(raw) != nil {
			return
		}
		s, extra, err := compileSchema("f", raw)
		if err != nil {
			return
		}
		got := schemaCost(s, extra, 0)
		if again := schemaCost(s, extra, 0); again != got {
			t.Fatalf("schemaCost(%s) = %d, then %d", raw, got, again)
		}
		if n := int64(reachable(s)); got < n {
			t.Fatalf("schemaCost(%s) = %d, fewer than the %d subschemas reachable", raw, got, n)
		}
		m := int64(capped) + 1
		if c, want := schemaCost(s, extra, m), min(got, m+1); c != want {
			t.Fatalf("schemaCost(%s, cap %d) = %d, want %d (uncapped %d)", raw, m, c, want, got)
		}
	})
}

// reachable counts the distinct compiled subschemas reachable from s.
func reachable(s *jsonschema.Schema) int {
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{s}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		stack = appendChildren(stack, x)
	}
	return len(seen)
}

// BenchmarkSchemaCost estimates the report's 2x26 fan-out (saturating at
// the cap) and the widest flat schema the text limits admit.
func BenchmarkSchemaCost(b *testing.B) {
	for _, tt := range []struct {
		name string
		raw  []byte
	}{{"fan-out 2x26", fanOutSchema(2, 26)}, {"widest", flatSchema(DefaultSchemaLimits.MaxSubschemas - 2)}} {
		s, extra := compileForCost(b, tt.raw)
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				schemaCost(s, extra, DefaultMaxSchemaCost)
			}
		})
	}
}
