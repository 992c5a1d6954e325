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
// the schema's internal base URL.
func CompileSchema(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A contract that names a format ("date", "email") means it: formats
	// are assertions here, not the annotations draft 2020-12 defaults to.
	c.AssertFormat()
	c.UseLoader(refusingLoader{})
	url := "mem:///" + name + "/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return s, nil
}

// SchemaHash is the key under which ad-hoc schemas are cached: the SHA-256
// of the schema's bytes.
func SchemaHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
