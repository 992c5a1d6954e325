// Package schemagen builds the hostile JSON Schemas the tests of schema
// limits share.
package schemagen

import (
	"fmt"
	"strings"
)

// FanOut names the next level `branches` times from each of `levels`
// levels through allOf and $ref: a few hundred bytes to a couple of KB
// whose validation walks branches^levels subschemas (2×26, 1.7 KB, walk
// 2^27 for one value).
func FanOut(branches, levels int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/l0","$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"l%d":{"allOf":[`, i)
		for j := range branches {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"$ref":"#/$defs/l%d"}`, i+1)
		}
		b.WriteString(`]},`)
	}
	fmt.Fprintf(&b, `"l%d":{"type":"object"}}}`, levels)
	return b.String()
}
