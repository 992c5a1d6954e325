package contracts

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// FileError is a problem of one contract file, located where the file
// says it: the JSON syntax error, the unknown field or the value of the
// wrong type. Line and Col are 1-based; zero when the problem has no place
// in the file (a missing schema file).
type FileError struct {
	File      string
	Line, Col int
	Err       error
}

// Error returns "FILE: line L, column C: problem", the form editors and
// people read alike.
func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s: line %d, column %d: %v", e.File, e.Line, e.Col, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// position returns the 1-based line and column of byte offset off in
// data; columns count runes, as strictjson's do.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

// syntaxError locates the JSON syntax error of raw, a file encoding/json
// refused: strictjson's parser reads RFC 8259 as encoding/json does and
// says where and what it expected. nil when strictjson finds none.
func syntaxError(file string, raw []byte) error {
	_, err := strictjson.Parse(raw)
	var se *strictjson.SyntaxError
	if !errors.As(err, &se) {
		return nil
	}
	return &FileError{File: file, Line: se.Line, Col: se.Col, Err: errors.New(se.Msg)}
}

// decodeLocated decodes raw, the JSON file named file, into v and returns
// every problem at once, each with its line and column: the syntax error,
// every unknown field (encoding/json stops at the first and gives no
// position) and every value of the wrong type. Fields it could decode are
// set even when it reports problems, so that later checks see them;
// decoded is false when the file is not JSON and v was left alone.
func decodeLocated(file string, raw []byte, v any) (errs []error, decoded bool) {
	var first any
	if err := json.Unmarshal(raw, &first); err != nil {
		if located := syntaxError(file, raw); located != nil {
			return []error{located}, false
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(raw, int(se.Offset))
			return []error{&FileError{File: file, Line: line, Col: col, Err: errors.New(strings.TrimPrefix(err.Error(), "json: "))}}, false
		}
		return []error{&FileError{File: file, Err: err}}, false
	}
	doc, _ := strictjson.Parse(raw)
	if doc != nil {
		errs = append(errs, unknownFields(file, raw, doc, reflect.TypeOf(v).Elem(), "")...)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// encoding/json's offset is the value's end; the value's
			// start is where a reader looks.
			off := int(te.Offset)
			if at := member(doc, te.Field); at != nil {
				off = at.Offset
			}
			line, col := position(raw, off)
			field := te.Field
			if field == "" {
				field = "the document"
			}
			errs = append(errs, &FileError{File: file, Line: line, Col: col,
				Err: fmt.Errorf("%s: want %s, got a JSON %s", field, jsonKind(te.Type), te.Value)})
		} else {
			errs = append(errs, &FileError{File: file, Err: err})
		}
	}
	return errs, true
}

// unknownFields lists the members of doc that t, a struct decoded with
// encoding/json, has no field for, at any depth, in file order.
func unknownFields(file string, raw []byte, doc *strictjson.Value, t reflect.Type, prefix string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []error
	switch {
	case doc.Kind == strictjson.KindObject && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for _, m := range doc.Members {
			name := prefix + m.Key
			ft, ok := fields[m.Key]
			if !ok {
				// encoding/json matches names case-insensitively.
				for k, f := range fields {
					if strings.EqualFold(k, m.Key) {
						ft, ok = f, true
						break
					}
				}
			}
			if !ok {
				line, col := position(raw, m.KeyOffset)
				errs = append(errs, &FileError{File: file, Line: line, Col: col,
					Err: fmt.Errorf("unknown field %q (known: %s)", name, strings.Join(sortedKeys(fields), ", "))})
				continue
			}
			errs = append(errs, unknownFields(file, raw, m.Value, ft, name+".")...)
		}
	case doc.Kind == strictjson.KindArray && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, it := range doc.Items {
			errs = append(errs, unknownFields(file, raw, it, t.Elem(), fmt.Sprintf("%s[%d].", strings.TrimSuffix(prefix, "."), i))...)
		}
	}
	return errs
}

// jsonFields maps the JSON names of t's exported fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonKind names the JSON a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// member finds the value at a dotted path of object members ("policy.
// max_repairs"), matched as encoding/json matches names; nil when doc has
// none there.
func member(doc *strictjson.Value, dotted string) *strictjson.Value {
	if doc == nil || dotted == "" {
		return nil
	}
	v := doc
	for _, key := range strings.Split(dotted, ".") {
		if v.Kind != strictjson.KindObject {
			return nil
		}
		var next *strictjson.Value
		for _, m := range v.Members {
			if m.Key == key || (next == nil && strings.EqualFold(m.Key, key)) {
				next = m.Value
			}
		}
		if next == nil {
			return nil
		}
		v = next
	}
	return v
}
