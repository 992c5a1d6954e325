package contracts

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/contractgateway/gateway/contracts/celenv"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// schemaTypes are the CEL types a contract's schema declares where it is
// simple, so that a rule is type-checked against the document it reads:
// a string is a string, a boolean a bool, an array a list of its items'
// type and an object with properties (and no schema for other members)
// an object type whose fields are its properties, so that reading a
// member the schema does not have, or multiplying a string, is a load
// error. Numbers stay dyn (a JSON number is read as a double, and rules
// compare it with whole numbers such as 1), as does every schema that is
// not simple: a union of types, anyOf/oneOf/allOf, a $ref that cannot be
// followed, property names that are not identifiers.
type schemaTypes struct {
	root    any
	structs map[string]map[string]*types.FieldType
	names   map[string][]string
	// made is the object type made for each schema object, by the
	// object's identity, so that a schema used twice (or recursively)
	// makes one type.
	made map[uintptr]*cel.Type
}

var celIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// celReserved are the words CEL keeps; a property named so is not a
// field a rule could name.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}

func newSchemaTypes(root any) *schemaTypes {
	return &schemaTypes{root: root, structs: map[string]map[string]*types.FieldType{},
		names: map[string][]string{}, made: map[uintptr]*cel.Type{}}
}

// typeOf is the CEL type of values of schema s.
func (st *schemaTypes) typeOf(s any, depth int) *cel.Type {
	m, ok := s.(map[string]any)
	if !ok || depth > 32 {
		return cel.DynType
	}
	if ref, ok := m["$ref"].(string); ok {
		t := resolveRef(st.root, ref)
		if t == nil {
			return cel.DynType
		}
		return st.typeOf(t, depth+1)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "enum", "const"} {
		if _, ok := m[k]; ok {
			return cel.DynType
		}
	}
	t, _ := m["type"].(string)
	switch t {
	case "string":
		return cel.StringType
	case "boolean":
		return cel.BoolType
	case "array":
		if items, ok := m["items"].(map[string]any); ok {
			return cel.ListType(st.typeOf(items, depth+1))
		}
		return cel.ListType(cel.DynType)
	case "object":
		props, ok := m["properties"].(map[string]any)
		if !ok || len(props) == 0 {
			return cel.MapType(cel.StringType, cel.DynType)
		}
		if ap, ok := m["additionalProperties"]; ok && ap != false {
			return cel.MapType(cel.StringType, cel.DynType)
		}
		for name := range props {
			if !celIdent.MatchString(name) || celReserved[name] {
				return cel.MapType(cel.StringType, cel.DynType)
			}
		}
		key := reflect.ValueOf(m).Pointer()
		if t, ok := st.made[key]; ok {
			return t
		}
		name := fmt.Sprintf("contract.Object%d", len(st.structs)+1)
		fields := map[string]*types.FieldType{}
		st.structs[name] = fields
		st.made[key] = types.NewObjectType(name)
		for p, ps := range props {
			fields[p] = jsonField(p, st.typeOf(ps, depth+1))
			st.names[name] = append(st.names[name], p)
		}
		return types.NewObjectType(name)
	}
	return cel.DynType
}

// jsonField is a field of an object type read from a JSON object: a
// missing member is the same "no such key" error a map gives, so that a
// rule reading it is not reported.
func jsonField(name string, t *cel.Type) *types.FieldType {
	get := func(obj any) (*strictjson.Value, bool) {
		v, ok := obj.(interface{ JSONValue() *strictjson.Value })
		if !ok {
			return nil, false
		}
		m := v.JSONValue().Get(name)
		return m, m != nil
	}
	return &types.FieldType{
		Type: t,
		IsSet: func(obj any) bool {
			_, ok := get(obj)
			return ok
		},
		GetFrom: func(obj any) (any, error) {
			if f, ok := obj.(interface{ Field(string) (ref.Val, bool) }); ok {
				if v, found := f.Field(name); found {
					return v, nil
				}
			}
			return nil, fmt.Errorf("no such key: %s", name)
		},
	}
}

// schemaProvider answers the checker and the planner about the object
// types of a schema, and hands every other question to the standard
// provider.
type schemaProvider struct {
	types.Provider
	st *schemaTypes
}

func (p *schemaProvider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.st.structs[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *schemaProvider) FindStructFieldNames(name string) ([]string, bool) {
	if f, ok := p.st.names[name]; ok {
		return f, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p *schemaProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if fs, ok := p.st.structs[name]; ok {
		f, ok := fs[field]
		return f, ok
	}
	return p.Provider.FindStructFieldType(name, field)
}

// typedEnv is celenv.Env with self and root declared as the schema's types:
// root as the document, self as the element of the for_each array (the
// document without one). Without a schema, or where the schema is not
// simple, they stay dyn.
func typedEnv(st *schemaTypes, forEach string) (*cel.Env, error) {
	if st == nil {
		return celenv.Env, nil
	}
	rootType := st.typeOf(st.root, 0)
	selfType := rootType
	if forEach != "" {
		selfType = cel.DynType
		if s := schemaAt(st.root, st.root, forEach, 0); s != nil {
			if m, ok := s.(map[string]any); ok {
				if items, ok := m["items"].(map[string]any); ok {
					selfType = st.typeOf(items, 0)
				}
			}
		}
	}
	if rootType == cel.DynType && selfType == cel.DynType {
		return celenv.Env, nil
	}
	return celenv.Base.Extend(
		cel.CustomTypeProvider(&schemaProvider{Provider: celenv.Base.CELTypeProvider(), st: st}),
		cel.Variable("self", selfType),
		cel.Variable("root", rootType),
	)
}

// schemaAt is the schema at JSON Pointer ptr (properties and items,
// following local $refs), or nil when the schema does not say simply.
func schemaAt(root, s any, ptr string, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 64 {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		return schemaAt(root, resolveRef(root, ref), ptr, depth+1)
	}
	if ptr == "" {
		return m
	}
	seg, rest, found := strings.Cut(ptr[1:], "/")
	if found {
		rest = "/" + rest
	}
	seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props[seg]; ok {
			return schemaAt(root, p, rest, depth+1)
		}
	}
	if items, ok := m["items"]; ok && isIndex(seg) {
		return schemaAt(root, items, rest, depth+1)
	}
	return nil
}
