package contracts

import (
	"fmt"

	"github.com/contractgateway/gateway/validators/extract"
)

// SchemaLimits bound a JSON Schema that a client sends (Ollama `format`,
// OpenAI response_format, a tool's parameters) before it is compiled:
// compiling one costs time that grows faster than its size with nesting
// (measured here: depth 64 ≈ 8 ms, 100 ≈ 18 ms, 200 ≈ 97 ms, and more than
// a minute at 3,000) and keeps about 24 bytes of heap per byte of schema.
// Contracts from files are the operator's and are not bounded.
type SchemaLimits struct {
	// MaxBytes bounds the schema's size.
	MaxBytes int
	// MaxDepth bounds the nesting of objects and arrays.
	MaxDepth int
	// MaxSubschemas bounds the number of objects in the schema (each a
	// subschema, or a map of them).
	MaxSubschemas int
}

// DefaultSchemaLimits are far above any schema an application writes by
// hand or generates from its types (tens of levels, hundreds of
// properties), and keep the worst schema within them at a compile time of
// about a tenth of a second (4,096 flat properties: ≈ 150 ms here).
var DefaultSchemaLimits = SchemaLimits{MaxBytes: 256 << 10, MaxDepth: 32, MaxSubschemas: 4096}

// LimitExpanded is the SchemaLimitError.Limit of a schema whose expanded
// size (SchemaCost) is over DefaultMaxSchemaCost.
const LimitExpanded = "expanded"

// SchemaLimitError says which limit a schema is over.
type SchemaLimitError struct {
	// Limit is "bytes", "depth", "subschemas" or LimitExpanded.
	Limit string
	Max   int
	// Got is the schema's figure, or Max+1 when counting stopped there.
	Got int
}

func (e *SchemaLimitError) Error() string {
	if e.Limit == LimitExpanded {
		return fmt.Sprintf("schema too complex: expands to more than %d subschemas through $ref and allOf/anyOf/oneOf", e.Max)
	}
	return fmt.Sprintf("schema too large: %s over the limit of %d", e.Limit, e.Max)
}

// Check reports the first limit raw is over, reading it once without
// parsing (a schema that is not JSON fails compilation after). It stops
// as soon as a limit is passed, so a hostile schema costs at most one scan
// up to the byte limit.
func (l SchemaLimits) Check(raw []byte) error {
	if l.MaxBytes > 0 && len(raw) > l.MaxBytes {
		return &SchemaLimitError{Limit: "bytes", Max: l.MaxBytes, Got: len(raw)}
	}
	depth, objects := 0, 0
	inString, str := false, extract.StringScan{}
	for _, c := range raw {
		if inString {
			inString = !str.End(c)
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if l.MaxDepth > 0 && depth > l.MaxDepth {
				return &SchemaLimitError{Limit: "depth", Max: l.MaxDepth, Got: depth}
			}
			if c == '{' {
				objects++
				if l.MaxSubschemas > 0 && objects > l.MaxSubschemas {
					return &SchemaLimitError{Limit: "subschemas", Max: l.MaxSubschemas, Got: objects}
				}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// CostBytes estimates the heap a compiled client schema keeps: about 24
// bytes per byte of schema (measured on flat and nested schemas), for
// caches bounded by bytes.
func CostBytes(raw []byte) int64 { return 24*int64(len(raw)) + 4<<10 }
