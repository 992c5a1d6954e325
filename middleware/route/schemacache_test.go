package route

import (
	"fmt"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
)

// TestSchemaCacheBoundedByBytes: compiled client schemas are kept by their
// estimated heap, not their count; a hit compiles nothing.
func TestSchemaCacheBoundedByBytes(t *testing.T) {
	schema := func(i int) []byte { return []byte(fmt.Sprintf(`{"type":"object","title":"%04d"}`, i)) }
	per := contracts.CostBytes(schema(0))
	c := NewSchemaCache(3 * per)
	compiles := 0
	build := func(raw []byte) (*validators.Validator, error) {
		compiles++
		ct, err := contracts.FromSchema(raw)
		if err != nil {
			return nil, err
		}
		return validators.New(ct, nil)
	}
	for i := range 10 {
		if _, err := c.Get(schema(i), build); err != nil {
			t.Fatal(err)
		}
	}
	n, bytes := c.Size()
	if n != 3 || bytes > 3*per {
		t.Errorf("Size() = %d entries, %d bytes; want 3 within %d", n, bytes, 3*per)
	}
	before := compiles
	c.Get(schema(9), build)
	if compiles != before {
		t.Error("a cached schema was compiled again")
	}
	c.Get(schema(0), build)
	if compiles != before+1 {
		t.Error("an evicted schema was not compiled again")
	}
}
