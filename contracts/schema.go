package contracts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrExternalRef is returned when a schema refers to anything outside
// itself. Schemas come from contract files and from clients (a request's
// `format`); neither may make the gateway read the disk or the network.
var ErrExternalRef = errors.New("external $ref not allowed")

// refusingLoader is the only URL loader the compiler gets: the JSON Schema
// meta-schemas are built into the library and resolve without it, and every
// other URL (file://, http://, …) is refused.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", ErrExternalRef, url)
}

// CompileSchema compiles one JSON Schema document (draft 2020-12 unless the
// document's $schema says otherwise). name only labels error messages and
// the schema's internal base URL. A schema whose expanded size (SchemaCost)
// is over DefaultMaxSchemaCost is refused with a *SchemaLimitError: what
// it would cost to validate with is known before any value is validated.
func CompileSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	s, extra, err := compileSchema(name, raw)
	if err != nil {
		return nil, err
	}
	if got := schemaCost(s, extra, DefaultMaxSchemaCost); got > DefaultMaxSchemaCost {
		return nil, fmt.Errorf("schema %s: %w", name, &SchemaLimitError{Limit: LimitExpanded, Max: DefaultMaxSchemaCost, Got: int(got)})
	}
	return s, nil
}

// compileSchema compiles raw and returns, besides the schema, the compiled
// schemas that declare a dynamic anchor, which a $dynamicRef may land on
// although no static reference reaches them (SchemaCost counts them).
func compileSchema(name string, raw []byte) (*jsonschema.Schema, []*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A contract that names a format ("date", "email") means it: formats
	// are assertions here, not the annotations draft 2020-12 defaults to.
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	url := "mem:///" + name + "/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %w", name, err)
	}
	// The compiler queued every dynamic anchor of each resource it
	// compiled, so looking them up compiles nothing new.
	var extra []*jsonschema.Schema
	for _, ptr := range anchorLocations(doc) {
		if a, err := c.Compile(url + "#" + ptr); err == nil {
			extra = append(extra, a)
		}
	}
	return s, extra, nil
}

// SchemaHash is the key under which ad-hoc schemas are cached: the SHA-256
// of the schema's bytes.
func SchemaHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
