// Package contracts loads contracts: a name@version, a JSON Schema, the
// semantic rule packs with their parameters, the repair policy, the fallback
// and the output mode. Built-in contracts are embedded; users add their own
// as directories. Everything is decoded strictly and compiled at load time,
// never per request.
//
// The policy says which rungs of the repair ladder a contract allows. Its
// "scoped_repair" lets LLM repair send only the broken items of the item
// array; it is refused at load time without an "item_array". Of the
// built-ins only mcq sets it (contracts/builtin/README.md says why the
// others do not).
package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Shape says which top-level JSON shape the contract expects and which
// harmless deviations are normalised locally, before the schema applies.
type Shape struct {
	// Expect is "object", "array" or "any" (the zero value means "any").
	Expect string `json:"expect,omitempty"`
	// Unwrap lists wrapper keys ("data", "link_plan"): an object with one of
	// them, whose value has the expected shape, is replaced by that value
	// whatever else the object holds, as a caller reading parsed["data"]
	// would.
	Unwrap []string `json:"unwrap,omitempty"`
	// WrapSingle wraps a lone object in an array when Expect is "array".
	WrapSingle bool `json:"wrap_single,omitempty"`
}

// Policy is the repair ladder's configuration for one contract.
type Policy struct {
	// MaxRepairs is the number of LLM repair calls (rung 2). Zero means none.
	MaxRepairs int `json:"max_repairs"`
	// RepairPrompt names the system prompt of LLM repair: "repair-engine"
	// (the default: fix the listed violations, change nothing else) or
	// "only-valid-json" (a short retry asking for valid JSON only).
	RepairPrompt string `json:"repair_prompt,omitempty"`
	// PartialRegeneration enables rung 3 for contracts with an ItemArray.
	PartialRegeneration bool `json:"partial_regeneration,omitempty"`
	// ScopedRepair makes the first LLM repair call item-scoped when every
	// remaining error sits inside items of the ItemArray (or is one that
	// local repair re-derives from them, such as a count): only those items
	// and their violations are sent, with the repair-engine prompt, and only
	// they are taken back. A scoped call costs tokens in proportion to the
	// broken items rather than to the document, and the items not sent
	// cannot change. It needs an ItemArray; false (the default) sends the
	// whole document every time. A scoped call counts against MaxRepairs.
	// A scoped reply that fixed nothing is followed by the same scoped call
	// at the first temperature of Temperatures (never by the same call
	// again at temperature 0), then by the whole document.
	ScopedRepair bool `json:"scoped_repair,omitempty"`
	// Temperatures is the re-run schedule (rung 4); empty means no re-run.
	Temperatures []float64 `json:"temperatures,omitempty"`
	// ScheduleFirst makes the first attempt part of the schedule (0.3/0.2/0.1
	// is then three attempts in all, not four): when the client set no
	// temperature, the first request goes out at Temperatures[0] and the
	// re-runs use the rest. False (the default): the first attempt keeps
	// the client's options and every temperature is a re-run.
	ScheduleFirst bool `json:"schedule_first,omitempty"`
	// UseFormat passes the schema as Ollama `format` on repair calls and,
	// when the client set none, on the first attempt.
	UseFormat bool `json:"use_format,omitempty"`
	// RepairModel is the model of LLM repair and partial regeneration
	// calls, on whichever upstream has it: a small fast model answers, a
	// stronger one mends. The first answer and re-runs stay on the
	// request's model. A route's repair_model overrides it. Empty means
	// the request's model.
	RepairModel string `json:"repair_model,omitempty"`
}

// Fallback is what a request gets when the ladder ends without a valid
// document.
type Fallback struct {
	// Mode is "error" (the default: 422 with the report), "best_effort"
	// (the best attempt with its report), "static" (Static) or "model"
	// (the request again on Model).
	Mode   string          `json:"mode,omitempty"`
	Static json.RawMessage `json:"static,omitempty"`
	Model  string          `json:"model,omitempty"`
}

// Fallback modes.
const (
	FallbackError      = "error"
	FallbackBestEffort = "best_effort"
	FallbackStatic     = "static"
	FallbackModel      = "model"
)

// file is the on-disk form of contract.json.
type file struct {
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Schema      string            `json:"schema,omitempty"`
	Rules       []string          `json:"rules,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	ItemArray   string            `json:"item_array,omitempty"`
	Shape       Shape             `json:"shape"`
	Policy      Policy            `json:"policy"`
	Fallback    Fallback          `json:"fallback"`
	Output      string            `json:"output,omitempty"`
	Checks      []Check           `json:"checks,omitempty"`
}

// Contract is one loaded and compiled contract. It is immutable after load
// and shared by all requests.
type Contract struct {
	Name        string
	Version     string
	Description string
	// SchemaJSON is the schema document as written (nil when the contract
	// has no schema); Schema is its compiled form.
	SchemaJSON json.RawMessage
	Schema     *jsonschema.Schema
	Rules      []string
	Params     map[string]string
	// ItemArray is the RFC 6901 pointer of the array whose items partial
	// regeneration may replace one by one ("/questions"), or "".
	ItemArray string
	Shape     Shape
	Policy    Policy
	Fallback  Fallback
	// Output is "bare" (the default) or "fenced" (```json … ```).
	Output string
	// Fixtures are the files of the contract's testdata/ directory, by
	// file name, for `gateway contracts lint`.
	Fixtures map[string][]byte
	// Builtin is true for contracts embedded in the binary.
	Builtin bool
	// Checks are the rules the contract's author wrote as CEL, compiled
	// at load; the validator evaluates them after the rule packs.
	Checks []Check
}

// ID is the contract's name@version, as reports and headers name it.
func (c *Contract) ID() string { return c.Name + "@" + c.Version }

// Load reads one contract directory from fsys: contract.json, the schema
// file it names and testdata/. Every problem found is returned at once,
// each naming its file, and its line and column when it has them.
func Load(fsys fs.FS, dir string) (*Contract, error) {
	return load(fsys, dir, "")
}

// load is Load; base, when not empty, is the directory fsys stands for on
// disk, so that messages name files as the user finds them.
func load(fsys fs.FS, dir, base string) (*Contract, error) {
	name := func(file string) string { return displayPath(base, path.Join(dir, file)) }
	raw, err := fs.ReadFile(fsys, path.Join(dir, "contract.json"))
	if err != nil {
		return nil, err
	}
	var f file
	errs, decoded := decodeLocated(name("contract.json"), raw, &f)
	if !decoded {
		// Not JSON: checking the fields would only repeat that they are
		// empty.
		return nil, errors.Join(errs...)
	}
	c := &Contract{
		Name: f.Name, Version: f.Version, Description: f.Description,
		Rules: f.Rules, Params: f.Params, ItemArray: f.ItemArray,
		Shape: f.Shape, Policy: f.Policy, Fallback: f.Fallback, Output: f.Output,
		Fixtures: map[string][]byte{}, Checks: f.Checks,
	}
	for _, err := range c.check() {
		errs = append(errs, &FileError{File: name("contract.json"), Err: err})
	}
	if f.Schema != "" {
		sraw, err := fs.ReadFile(fsys, path.Join(dir, f.Schema))
		if err != nil {
			errs = append(errs, &FileError{File: name("contract.json"), Err: fmt.Errorf("schema %q: %w", f.Schema, errors.Unwrap(err))})
		} else if located := syntaxError(name(f.Schema), sraw); located != nil && !json.Valid(sraw) {
			errs = append(errs, located)
		} else {
			c.SchemaJSON = compact(sraw)
			if c.Schema, err = CompileSchema(c.ID(), sraw); err != nil {
				errs = append(errs, &FileError{File: name(f.Schema), Err: err})
			}
		}
	}
	if len(c.Checks) > 0 {
		cdoc, _ := strictjson.Parse(raw)
		errs = append(errs, compileChecks(name("contract.json"), raw, cdoc, c.Checks, c.SchemaJSON)...)
	}
	entries, err := fs.ReadDir(fsys, path.Join(dir, "testdata"))
	if err == nil {
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := fs.ReadFile(fsys, path.Join(dir, "testdata", e.Name()))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c.Fixtures[e.Name()] = b
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// displayPath is the path of a contract file as messages name it: below
// base when the contracts came from a directory on disk, else as fsys
// names it.
func displayPath(base, p string) string {
	if base == "" {
		return p
	}
	return filepath.Join(base, filepath.FromSlash(p))
}

// FromSchema builds the ad-hoc, schema-only contract that guards a request
// which carries a JSON Schema as Ollama `format`. Its fallback is
// best_effort: an app that worked before never gets an error it did not get
// before. The schema is a client's: one over DefaultSchemaLimits is refused
// with a *SchemaLimitError before anything is compiled.
func FromSchema(raw []byte) (*Contract, error) {
	if err := DefaultSchemaLimits.Check(raw); err != nil {
		return nil, err
	}
	h := SchemaHash(raw)
	c := &Contract{
		Name:       "schema",
		Version:    h[:12],
		SchemaJSON: compact(raw),
		Shape:      Shape{Expect: "any"},
		Policy:     Policy{MaxRepairs: 1, RepairPrompt: "repair-engine", UseFormat: true},
		Fallback:   Fallback{Mode: FallbackBestEffort},
		Output:     "bare",
		Fixtures:   map[string][]byte{},
	}
	s, err := CompileSchema("schema@"+c.Version, raw)
	if err != nil {
		return nil, err
	}
	c.Schema = s
	return c, nil
}

// check validates the decoded fields and applies documented defaults.
func (c *Contract) check() []error {
	var errs []error
	if c.Name == "" || strings.ContainsAny(c.Name, "@/ ") {
		errs = append(errs, fmt.Errorf("name %q: must be non-empty without '@', '/' or spaces", c.Name))
	}
	if c.Version == "" || strings.ContainsAny(c.Version, "@/ ") {
		errs = append(errs, fmt.Errorf("version %q: must be non-empty without '@', '/' or spaces", c.Version))
	}
	switch c.Shape.Expect {
	case "":
		c.Shape.Expect = "any"
	case "object", "array", "any":
	default:
		errs = append(errs, fmt.Errorf("shape.expect %q: want object, array or any", c.Shape.Expect))
	}
	switch c.Policy.RepairPrompt {
	case "":
		c.Policy.RepairPrompt = "repair-engine"
	case "repair-engine", "only-valid-json":
	default:
		errs = append(errs, fmt.Errorf("policy.repair_prompt %q: want repair-engine or only-valid-json", c.Policy.RepairPrompt))
	}
	if c.Policy.ScopedRepair && c.ItemArray == "" {
		errs = append(errs, errors.New("policy.scoped_repair needs an item_array"))
	}
	if c.Policy.MaxRepairs < 0 {
		errs = append(errs, fmt.Errorf("policy.max_repairs %d: must be >= 0", c.Policy.MaxRepairs))
	}
	for _, t := range c.Policy.Temperatures {
		if t < 0 || t > 2 {
			errs = append(errs, fmt.Errorf("policy.temperatures: %v out of range 0..2", t))
		}
	}
	switch c.Fallback.Mode {
	case "":
		c.Fallback.Mode = FallbackError
	case FallbackError, FallbackBestEffort:
	case FallbackStatic:
		if len(c.Fallback.Static) == 0 || !json.Valid(c.Fallback.Static) {
			errs = append(errs, errors.New("fallback.static: must be a JSON value when mode is static"))
		}
	case FallbackModel:
		if c.Fallback.Model == "" {
			errs = append(errs, errors.New("fallback.model: must name a model when mode is model"))
		}
	default:
		errs = append(errs, fmt.Errorf("fallback.mode %q: want error, best_effort, static or model", c.Fallback.Mode))
	}
	switch c.Output {
	case "":
		c.Output = "bare"
	case "bare", "fenced":
	default:
		errs = append(errs, fmt.Errorf("output %q: want bare or fenced", c.Output))
	}
	if c.ItemArray != "" && !strings.HasPrefix(c.ItemArray, "/") {
		errs = append(errs, fmt.Errorf("item_array %q: must be a JSON Pointer such as /questions", c.ItemArray))
	}
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	return errs
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// Registry holds loaded contracts by name@version and answers lookups by
// either the full ID or the bare name (the highest version).
type Registry struct {
	byID map[string]*Contract
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byID: map[string]*Contract{}} }

// Add registers c; a second contract with the same ID is an error unless
// replace is set (a user directory may override a built-in).
func (r *Registry) Add(c *Contract, replace bool) error {
	if old, ok := r.byID[c.ID()]; ok && !replace {
		return fmt.Errorf("contract %s defined twice", old.ID())
	}
	r.byID[c.ID()] = c
	return nil
}

// Lookup finds "name@version" exactly, or "name" as its highest version
// (versions compare numerically when both are numbers).
func (r *Registry) Lookup(ref string) (*Contract, bool) {
	if c, ok := r.byID[ref]; ok {
		return c, true
	}
	if strings.Contains(ref, "@") {
		return nil, false
	}
	var best *Contract
	for _, c := range r.byID {
		if c.Name == ref && (best == nil || versionLess(best.Version, c.Version)) {
			best = c
		}
	}
	return best, best != nil
}

// List returns every contract sorted by name, then version.
func (r *Registry) List() []*Contract {
	out := make([]*Contract, 0, len(r.byID))
	for _, c := range r.byID {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return versionLess(out[i].Version, out[j].Version)
	})
	return out
}

// Names returns the sorted contract IDs, for error messages that list what
// is known.
func (r *Registry) Names() []string {
	var out []string
	for _, c := range r.List() {
		out = append(out, c.ID())
	}
	return out
}

// versionLess orders versions by their dot-separated parts, numerically
// where both parts are numbers ("1.9" < "1.10" < "2" < "10") and as text
// otherwise.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := as[i], bs[i]
		if x == y {
			continue
		}
		if isDigits(x) && isDigits(y) {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			if x != y {
				return x < y
			}
			continue
		}
		return x < y
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return a < b
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ExpectsContainer reports whether the contract wants an object or an
// array at the top level (from its shape, else from its schema's "type").
// Local repair then unwraps a document delivered as a JSON string.
func (c *Contract) ExpectsContainer() bool {
	if c.Shape.Expect == "object" || c.Shape.Expect == "array" {
		return true
	}
	var top struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(c.SchemaJSON, &top) != nil {
		return false
	}
	switch t := top.Type.(type) {
	case string:
		return t == "object" || t == "array"
	case []any:
		for _, x := range t {
			if x != "object" && x != "array" {
				return false
			}
		}
		return len(t) > 0
	}
	return false
}
