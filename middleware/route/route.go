// Package route decides which contract guards a request and how: the
// virtual models of the configuration, the X-Contract header with its
// parameters, and schema-only contracts made from a request's own format
// schema (compiled once per distinct schema). It is the guard's first
// stage, kept apart from the pipeline because it reads only the request's
// headers, model and schema, and the compiled contracts.
package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Lookup is what the guard knows about a request when it asks which
// contract guards it.
type Lookup struct {
	// Contract and Params are the X-Contract and X-Contract-Params headers.
	Contract string
	Params   string
	// Model is the model the client named (perhaps a virtual one).
	Model string
	// Schema is the JSON Schema the client sent as format, or nil.
	Schema json.RawMessage
}

// Route is a resolved guard: the contract's validator, the merged
// parameters, and what to change in the request.
type Route struct {
	// Name labels logs and metrics: the virtual model, "header:NAME" or
	// "schema".
	Name      string
	Validator *validators.Validator
	Params    validators.Params
	// UpstreamModel replaces the client's model ("" keeps it).
	UpstreamModel string
	// AddFormat passes the contract schema as format when the client set
	// none: true for every virtual model and header contract unless the
	// route turned it off or the upstream model cannot take a schema
	// format.
	AddFormat bool
	// Output overrides the contract's output mode ("bare", "fenced"); "" keeps it.
	Output string
	// Corrections adds the corrections to every answer's contract summary.
	Corrections bool
	// Stream is how a stream of a contract with an item array answers:
	// release.Progressive (or "", the default) or release.Buffered.
	Stream      string
	RepairModel string // the model of repair and regeneration calls (Spec.RepairModel)
	// Schema is the contract's schema, parsed once, for AddFormat.
	Schema *strictjson.Value
	// ToolsOnly marks a request no contract guards whose tool calls are
	// checked (GuardConfig.ToolCalls).
	ToolsOnly bool
}

// ReportCorrections is the value of X-Contract-Report, and of a route's
// Report, that asks for the corrections in the contract summary.
const ReportCorrections = "corrections"

// AdHoc is the Route name of ad-hoc schema-only contracts.
const AdHoc = "schema"

// Spec is one virtual model of the configuration.
type Spec struct {
	Model    string
	Upstream string
	Contract string
	Params   map[string]string
	// AddFormat is the default and kept for configurations that say so;
	// NoFormat turns the contract's schema as format off for the route.
	AddFormat bool
	NoFormat  bool
	Output    string
	// Report "corrections" adds the corrections to every answer's summary.
	Report string
	// Stream is "progressive", "buffered" or "" (progressive).
	Stream      string
	RepairModel string // the model of repair and regeneration calls; "" the contract's, else the route's
}

// Option configures NewRoutes.
type Option func(*Routes)

// WithNoSchemaFormat lists upstream models that cannot take a JSON Schema
// as format: requests for them never get the contract's schema added.
func WithNoSchemaFormat(models ...string) Option {
	return func(rs *Routes) {
		for _, m := range models {
			rs.noSchemaFormat[ModelKey(m)] = true
		}
	}
}

// schemaFormat reports whether a request for upstream model m may get a
// schema as format.
func (rs *Routes) schemaFormat(m string) bool { return !rs.noSchemaFormat[ModelKey(m)] }

// Routes is the standard Resolver: virtual models, the X-Contract header,
// and — when AdHoc is set — schema-only contracts built from a request's
// own format schema, compiled once per distinct schema.
type Routes struct {
	reg  *contracts.Registry
	byID map[string]*validators.Validator
	// schemas holds each contract's schema, parsed once at load for the
	// upstream's format member (read-only: every request shares it).
	schemas map[string]*strictjson.Value
	models  map[string]*Route
	adHoc   *SchemaCache
	// specs are the routes in configuration order, for listing.
	specs          []Spec
	noSchemaFormat map[string]bool
}

// Error is a problem of one of the route specs NewRoutes was given:
// Index is its place among them and Field the spec's field at fault
// ("contract", "params", "model"), so that a caller can point at the line
// of its configuration that declared it.
type Error struct {
	Index int
	Model string
	Field string
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("route %q: %v", e.Model, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// NewRoutes compiles every contract of reg and every route; all problems
// are reported at once. adHoc enables schema-only guarding.
func NewRoutes(reg *contracts.Registry, specs []Spec, adHoc bool, opts ...Option) (*Routes, error) {
	byID, err := validators.CompileAll(reg, packs.Builtins())
	if err != nil {
		return nil, err
	}
	rs := &Routes{reg: reg, byID: byID, schemas: map[string]*strictjson.Value{}, models: map[string]*Route{}, noSchemaFormat: map[string]bool{}}
	for id, v := range byID {
		rs.schemas[id] = schemaOf(v)
	}
	for _, o := range opts {
		o(rs)
	}
	var problems []error
	for i, s := range specs {
		c, ok := reg.Lookup(s.Contract)
		if !ok {
			problems = append(problems, &Error{Index: i, Model: s.Model, Field: "contract",
				Err: fmt.Errorf("unknown contract %q (known: %s)", s.Contract, strings.Join(reg.Names(), ", "))})
			continue
		}
		v := byID[c.ID()]
		params, err := v.Params(validators.Params(s.Params))
		if err != nil {
			problems = append(problems, &Error{Index: i, Model: s.Model, Field: "params", Err: err})
			continue
		}
		key := ModelKey(s.Model)
		if prev, dup := rs.models[key]; dup {
			problems = append(problems, &Error{Index: i, Model: s.Model, Field: "model",
				Err: fmt.Errorf("the same model as route %q", prev.Name)})
			continue
		}
		upstream := s.Upstream
		if upstream == "" {
			upstream = s.Model
		}
		rs.models[key] = &Route{Name: s.Model, Validator: v, Params: params, UpstreamModel: s.Upstream,
			AddFormat: !s.NoFormat && rs.schemaFormat(upstream), Output: s.Output, Corrections: s.Report == ReportCorrections, Stream: s.Stream,
			Schema: rs.schemas[c.ID()], RepairModel: s.RepairModel}
		rs.specs = append(rs.specs, s)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	if adHoc {
		rs.adHoc = NewSchemaCache(DefaultSchemaCacheBytes)
	}
	return rs, nil
}

// Resolve implements Resolver. The header wins over a virtual model (its
// params are merged over the route's), a virtual model over an ad-hoc
// schema. The X-Contract-Params header is read whatever guards the
// request, so that a malformed one is the client's error even where no
// contract takes it.
func (rs *Routes) Resolve(l Lookup) (*Route, error) {
	base := rs.models[ModelKey(l.Model)]
	var named *contracts.Contract
	if l.Contract != "" {
		c, ok := rs.reg.Lookup(l.Contract)
		if !ok {
			return nil, fmt.Errorf("unknown contract %q (known: %s)", l.Contract, strings.Join(rs.reg.Names(), ", "))
		}
		named = c
	}
	hdrParams, err := validators.ParseParams(l.Params)
	if err != nil {
		return nil, err
	}
	switch {
	case named != nil:
		v := rs.byID[named.ID()]
		var over validators.Params
		if base != nil && base.Validator == v {
			over = base.Params
		}
		params, err := v.Params(over, hdrParams)
		if err != nil {
			return nil, err
		}
		r := &Route{Name: "header:" + named.Name, Validator: v, Params: params, Schema: rs.schemas[named.ID()],
			AddFormat: rs.schemaFormat(l.Model)}
		if base != nil {
			r.UpstreamModel, r.AddFormat, r.Output, r.Stream = base.UpstreamModel, base.AddFormat, base.Output, base.Stream
		}
		return r, nil
	case base != nil && len(hdrParams) == 0:
		return base, nil
	case base != nil:
		params, err := base.Validator.Params(base.Params, hdrParams)
		if err != nil {
			return nil, err
		}
		r := *base
		r.Params = params
		return &r, nil
	case rs.adHoc != nil && l.Schema != nil:
		return rs.adHocRoute(l.Schema)
	}
	return nil, nil
}

// adHocRoute is the route of a request no contract guards whose format is
// a JSON Schema: a schema-only contract, compiled once per distinct
// schema.
func (rs *Routes) adHocRoute(schema json.RawMessage) (*Route, error) {
	v, err := rs.adHoc.Get(schema, func(raw []byte) (*validators.Validator, error) {
		c, err := contracts.FromSchema(raw)
		if err != nil {
			return nil, err
		}
		return validators.New(c, nil)
	})
	var le *contracts.SchemaLimitError
	switch {
	case errors.As(err, &le) && le.Limit == contracts.LimitExpanded:
		return nil, fmt.Errorf("format %v", le)
	case errors.As(err, &le):
		return nil, fmt.Errorf("format: %v (a client's schema may have at most %d bytes, nesting %d deep, %d subschemas)",
			le, contracts.DefaultSchemaLimits.MaxBytes, contracts.DefaultSchemaLimits.MaxDepth, contracts.DefaultSchemaLimits.MaxSubschemas)
	case err != nil:
		return nil, fmt.Errorf("format: invalid JSON Schema: %v", err)
	}
	return &Route{Name: AdHoc, Validator: v, Params: validators.Params{}}, nil
}

// Validator returns the compiled validator of a contract reference, for
// the admin validate endpoint.
func (rs *Routes) Validator(ref string) (*validators.Validator, bool) {
	c, ok := rs.reg.Lookup(ref)
	if !ok {
		return nil, false
	}
	v, ok := rs.byID[c.ID()]
	return v, ok
}

// Registry returns the contracts the routes were built from.
func (rs *Routes) Registry() *contracts.Registry { return rs.reg }

// schemaOf parses a contract's schema for AddFormat; nil when it has none.
func schemaOf(v *validators.Validator) *strictjson.Value {
	if v.Contract.SchemaJSON == nil {
		return nil
	}
	s, err := strictjson.Parse(v.Contract.SchemaJSON)
	if err != nil {
		return nil
	}
	return s
}

// ModelKey is the key a model name is matched by, as Ollama matches
// names (see upstream.ModelKey): a virtual model matched on any other rule
// would let a client reach the upstream model of the same name unguarded.
func ModelKey(m string) string { return upstream.ModelKey(m) }

// ModelName is the name a model is counted under in logs, metrics, stats
// and the outcome store: one name per model whatever the client's
// spelling ("AlPhA", "library/alpha", "alpha:latest" and
// "registry.ollama.ai/library/alpha:latest" are all "alpha"), so that
// spellings make neither new series nor new rows. It is Ollama's shortest
// display of the name, lower case, without the default tag "latest"; a
// name Ollama does not take as valid keeps its text.
func ModelName(m string) string {
	n := ollamamodel.ParseName(m)
	if !n.IsValid() {
		return m
	}
	return strings.TrimSuffix(strings.ToLower(n.DisplayShortest()), ":latest")
}

// VirtualModel is one route of the configuration as clients see it: a
// model of its own, answered by an upstream model.
type VirtualModel struct {
	// Name is the virtual model's name; Upstream the model asked upstream
	// (Name itself when the route names none).
	Name     string
	Upstream string
	// Contract is the id (name@version) of the contract that guards it.
	Contract string
}

// VirtualModels lists the routes, in configuration order.
func (rs *Routes) VirtualModels() []VirtualModel {
	out := make([]VirtualModel, 0, len(rs.specs))
	for _, s := range rs.specs {
		r := rs.models[ModelKey(s.Model)]
		up := s.Upstream
		if up == "" {
			up = s.Model
		}
		out = append(out, VirtualModel{Name: s.Model, Upstream: up, Contract: r.Validator.Contract.ID()})
	}
	return out
}

// VirtualModel returns the route of a virtual model name ("quiz" and
// "quiz:latest" alike).
func (rs *Routes) VirtualModel(name string) (VirtualModel, bool) {
	for _, vm := range rs.VirtualModels() {
		if ModelKey(vm.Name) == ModelKey(name) {
			return vm, true
		}
	}
	return VirtualModel{}, false
}

// ContractHeader reads the X-Contract header of h. Every value counts, and
// each may be a comma-separated list (RFC 9110 §5.3: several header lines
// are one list): reading only the first would leave a request with an
// empty first line and a contract in the second unguarded, while Ollama
// never sees the header at all. Empty values are ignored; the same
// contract named twice is that contract; two different names are the
// client's error.
func ContractHeader(h http.Header) (string, error) {
	var name string
	for _, v := range h.Values("X-Contract") {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			switch {
			case part == "" || part == name:
			case name == "":
				name = part
			default:
				return "", fmt.Errorf("X-Contract names two contracts, %q and %q: send one", name, part)
			}
		}
	}
	return name, nil
}

// OutputMode is the route's output mode: its own, else its contract's. It
// changes the answer's text, so the cache keys on it.
func (r *Route) OutputMode() string {
	if r.Output != "" {
		return r.Output
	}
	return r.Validator.Contract.Output
}

// AdHocSchemas returns how many ad-hoc schemas are kept compiled and
// their estimated bytes.
func (rs *Routes) AdHocSchemas() (n int, bytes int64) {
	if rs.adHoc == nil {
		return 0, 0
	}
	return rs.adHoc.Size()
}
