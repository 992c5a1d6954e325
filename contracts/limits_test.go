package contracts

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func nestedSchema(depth int) []byte {
	return []byte(strings.Repeat(`{"type":"object","properties":{"a":`, depth) + `{"type":"string"}` + strings.Repeat(`}}`, depth))
}

func flatSchema(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

func TestSchemaLimits(t *testing.T) {
	l := SchemaLimits{MaxBytes: 1 << 20, MaxDepth: 32, MaxSubschemas: 100}
	tests := []struct {
		name   string
		schema []byte
		want   string // the limit named, "" for none
	}{
		{"small", []byte(`{"type":"object","required":["a"]}`), ""},
		// nestedSchema(d) nests 2d+1 containers.
		{"depth within", nestedSchema(15), ""},
		{"depth over", nestedSchema(16), "depth"},
		{"3000 levels", nestedSchema(3000), "depth"},
		{"flat within", flatSchema(98), ""},
		{"flat over", flatSchema(100), "subschemas"},
		{"braces in strings do not count", []byte(`{"description":"{{{{[[[[` + strings.Repeat("{", 200) + `\"}"}`), ""},
		{"bytes over", []byte(`{"description":"` + strings.Repeat("x", 1<<20) + `"}`), "bytes"},
	}
	for _, tt := range tests {
		err := l.Check(tt.schema)
		var le *SchemaLimitError
		got := ""
		if errors.As(err, &le) {
			got = le.Limit
		}
		if got != tt.want {
			t.Errorf("Check(%s) = %v, want limit %q", tt.name, err, tt.want)
		}
	}
}

// TestFromSchemaRefusesBeforeCompiling: a schema nested 3,000 levels deep
// (which took a core for over a minute to compile) is refused at once.
func TestFromSchemaRefusesBeforeCompiling(t *testing.T) {
	for _, raw := range [][]byte{nestedSchema(3000), flatSchema(30000)} {
		_, err := FromSchema(raw)
		var le *SchemaLimitError
		if !errors.As(err, &le) {
			t.Errorf("FromSchema(%d bytes) = %v, want a SchemaLimitError", len(raw), err)
		}
	}
}

// FuzzSchemaLimits: Check never panics, and a JSON document it accepts is
// within the depth and object counts it claims.
func FuzzSchemaLimits(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	f.Add([]byte(`{"a":"\"{{","b":[[[{}]]]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		l := SchemaLimits{MaxBytes: 1 << 16, MaxDepth: 4, MaxSubschemas: 8}
		err := l.Check(raw)
		v, perr := strictjson.Parse(raw)
		if err != nil || perr != nil {
			return
		}
		depth, objects := measure(v, 1)
		if depth > l.MaxDepth || objects > l.MaxSubschemas {
			t.Fatalf("Check(%q) = nil, but depth %d, %d objects", raw, depth, objects)
		}
	})
}

func measure(v *strictjson.Value, d int) (depth, objects int) {
	switch v.Kind {
	case strictjson.KindArray:
		depth = d
		for _, it := range v.Items {
			dd, oo := measure(it, d+1)
			depth, objects = max(depth, dd), objects+oo
		}
	case strictjson.KindObject:
		depth, objects = d, 1
		for _, m := range v.Members {
			dd, oo := measure(m.Value, d+1)
			depth, objects = max(depth, dd), objects+oo
		}
	}
	return depth, objects
}

// BenchmarkCompileWithinLimits compiles the worst shapes the default
// limits let through: the deepest nesting, and the most subschemas.
func BenchmarkCompileWithinLimits(b *testing.B) {
	deep := nestedSchema(DefaultSchemaLimits.MaxDepth/2 - 1)
	wide := flatSchema(DefaultSchemaLimits.MaxSubschemas - 2)
	for _, tt := range []struct {
		name string
		raw  []byte
	}{{"deepest", deep}, {"widest", wide}} {
		if err := DefaultSchemaLimits.Check(tt.raw); err != nil {
			b.Fatalf("%s: %v", tt.name, err)
		}
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FromSchema(tt.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
