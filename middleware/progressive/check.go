package progressive

import (
	"errors"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Checker judges the items of a stream as they close: item i may go to
// the client when the document made of items 0..i alone — the item array
// at its pointer and no other member — has no error inside those items.
// Everything else is judged at the end, on the whole document:
//
//   - violations outside the items: members missing (the other members
//     are absent by construction), counts, profiles and durations of the
//     members derived from the items, the length of the array itself
//     (a violation located at the array, such as the caller's question
//     count);
//   - codes whose fix scope is Derived (validators.FixScope) wherever they
//     are located: a pack declares them re-derivable from the whole item
//     array, so they can never hold an item back;
//   - the contract's checks that read root or run over anything but the
//     item array (validators.Validator.Items leaves them out): on a prefix
//     of the array they would judge a document that is not there yet.
//
// A rule that can only be judged on the whole array is thus one that
// locates its violation at the array or outside it, or declares its code
// Derived: mcq's count and difficulty rules do the first, and nothing
// else of the pack looks past the items before the one it checks (ids and
// numbering by position, duplicates of earlier ids).
type Checker struct {
	v       *validators.Validator
	params  validators.Params
	pointer string
	path    []string
}

// NewChecker returns the checker of v's item array; params must come
// from v.Params.
func NewChecker(v *validators.Validator, params validators.Params) (*Checker, error) {
	if v.Contract.ItemArray == "" {
		return nil, errors.New("contract " + v.Contract.ID() + " has no item_array")
	}
	segs, err := strictjson.ParsePointer(v.Contract.ItemArray)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, errors.New("contract " + v.Contract.ID() + ": the item array is the document itself")
	}
	return &Checker{v: v, params: params, pointer: v.Contract.ItemArray, path: segs}, nil
}

// Document is the document items alone make: the item array at its
// pointer, inside objects that hold nothing else.
func (c *Checker) Document(items []*strictjson.Value) *strictjson.Value {
	v := strictjson.Array(items...)
	for k := len(c.path) - 1; k >= 0; k-- {
		v = strictjson.Object(strictjson.Member{Key: c.path[k], KeyOffset: -1, Value: v})
	}
	return v
}

// Check validates the document of items with the validator of items in
// flight (validators.Validator.Items: the contract's checks that read
// root or other items wait for the whole document) and returns it (as
// validation normalised it), the report, and the violations that keep
// the items from the client: those Blocking keeps.
func (c *Checker) Check(items []*strictjson.Value) (*strictjson.Value, validators.Report, []validators.Violation) {
	doc, r := c.v.Items().CheckDoc(c.Document(items), c.params)
	return doc, r, c.Blocking(r, len(items))
}

// Blocking returns the error violations of r located inside items 0..n-1
// whose code is not Derived.
func (c *Checker) Blocking(r validators.Report, n int) []validators.Violation {
	var out []validators.Violation
	for _, v := range r.Violations {
		if v.Severity != validators.SeverityError || c.v.FixScope(v.Code).Derived {
			continue
		}
		if i, ok := c.ItemIndex(v); ok && i < n {
			out = append(out, v)
		}
	}
	return out
}

// ItemIndex returns the index of the item v is located in, and false for
// a violation outside every item (the array itself included).
func (c *Checker) ItemIndex(v validators.Violation) (int, bool) {
	rest, ok := strings.CutPrefix(v.Pointer, c.pointer+"/")
	if !ok {
		return 0, false
	}
	tok, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || strconv.Itoa(i) != tok {
		return 0, false
	}
	return i, true
}
