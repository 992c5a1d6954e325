package progressive

import (
	"errors"
	"slices"
	"strings"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// Assembler makes the text a stream releases: first the opening of the
// item array with the objects on its path ({"questions":[), then each
// item in its canonical form after a comma, and at the end the array's
// close, every other member and the closing braces. Object member order
// carries no meaning (RFC 8259 §4), so the members the model wrote
// before the array follow it. The text released is the canonical
// encoding of the final document (Document), byte for byte: the text the
// contract summary and the cache keep, whatever the model's own
// whitespace and order.
type Assembler struct {
	path  []string
	items []*strictjson.Value
	text  strings.Builder
}

// NewAssembler returns the assembler of the item array at pointer.
func NewAssembler(pointer string) (*Assembler, error) {
	segs, err := strictjson.ParsePointer(pointer)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, errors.New("the item array is the document itself")
	}
	return &Assembler{path: segs}, nil
}

// Item returns the deltas that release item: the array's opening before
// the first item, a comma before every other. An object or array item
// goes out in two: up to its first byte, then the rest. A client that
// reads the stream as partial JSON (the AI SDK's elementStream) takes an
// element as complete once a later one opens, and the last once the
// document has changed and parses whole; sent in one piece, the last
// item would parse the same before the array's close as after it, and
// such a client would never show it.
func (a *Assembler) Item(item *strictjson.Value) []string {
	var b strings.Builder
	if len(a.items) == 0 {
		a.open(&b)
	} else {
		b.WriteByte(',')
	}
	head := b.Len()
	b.Write(strictjson.Marshal(item))
	a.items = append(a.items, item)
	a.text.WriteString(b.String())
	d := b.String()
	if item.Kind != strictjson.KindObject && item.Kind != strictjson.KindArray {
		return []string{d}
	}
	return []string{d[:head+1], d[head+1:]}
}

// Items are the items released so far, in order.
func (a *Assembler) Items() []*strictjson.Value { return a.items }

// Document is the final document made of model's: its item array
// replaced by the released items and moved first in each object on its
// path, every other member kept in the model's order. An error when model
// has no object where the path needs one.
func (a *Assembler) Document(model *strictjson.Value) (*strictjson.Value, error) {
	return reorder(model, a.path, a.items)
}

func reorder(v *strictjson.Value, path []string, items []*strictjson.Value) (*strictjson.Value, error) {
	if v == nil || v.Kind != strictjson.KindObject {
		return nil, errors.New("no object holds the item array")
	}
	var first *strictjson.Value
	if len(path) == 1 {
		first = strictjson.Array(items...)
	} else {
		var err error
		if first, err = reorder(v.Get(path[0]), path[1:], items); err != nil {
			return nil, err
		}
	}
	out := *v
	out.Members = make([]strictjson.Member, 0, len(v.Members)+1)
	out.Members = append(out.Members, strictjson.Member{Key: path[0], KeyOffset: -1, Value: first})
	for _, m := range v.Members {
		if m.Key != path[0] {
			out.Members = append(out.Members, m)
		}
	}
	return &out, nil
}

// InModelOrder is doc, a document Document made, with the item array
// back where model had it in each object on its path: the order of an
// answer that goes out whole, which has no reason to differ from the
// model's.
func (a *Assembler) InModelOrder(doc, model *strictjson.Value) *strictjson.Value {
	return unmove(doc, model, a.path)
}

func unmove(doc, model *strictjson.Value, path []string) *strictjson.Value {
	if doc == nil || model == nil || doc.Kind != strictjson.KindObject || model.Kind != strictjson.KindObject {
		return doc
	}
	byKey := func(m strictjson.Member) bool { return m.Key == path[0] }
	at, i := slices.IndexFunc(model.Members, byKey), slices.IndexFunc(doc.Members, byKey)
	if at < 0 || i < 0 {
		return doc
	}
	members := slices.Clone(doc.Members)
	m := members[i]
	if len(path) > 1 {
		m.Value = unmove(m.Value, model.Members[at].Value, path[1:])
	}
	members = slices.Delete(members, i, i+1)
	out := *doc
	out.Members = slices.Insert(members, min(at, len(members)), m)
	return &out
}

// Close returns the last delta: the array's close (its opening too, when
// no item was released), the other members of doc, a document Document
// made (or repaired since, keeping the item array first), and the closing
// braces. Text is then the whole document.
func (a *Assembler) Close(doc *strictjson.Value) (string, error) {
	var b strings.Builder
	if len(a.items) == 0 {
		a.open(&b)
	}
	b.WriteByte(']')
	levels := make([]*strictjson.Value, len(a.path))
	v := doc
	for k, seg := range a.path {
		if v == nil || v.Kind != strictjson.KindObject || len(v.Members) == 0 || v.Members[0].Key != seg {
			return "", errors.New("the document does not hold the item array first")
		}
		levels[k] = v
		v = v.Members[0].Value
	}
	for k := len(levels) - 1; k >= 0; k-- {
		for _, m := range levels[k].Members[1:] {
			b.WriteByte(',')
			b.Write(strictjson.Marshal(strictjson.String(m.Key)))
			b.WriteByte(':')
			b.Write(strictjson.Marshal(m.Value))
		}
		b.WriteByte('}')
	}
	a.text.WriteString(b.String())
	return b.String(), nil
}

// Text is everything released so far: after Close, the final document.
func (a *Assembler) Text() string { return a.text.String() }

// open writes what comes before the first item: the objects down to the
// item array, each with the array's path as its first member, and the
// array's opening bracket.
func (a *Assembler) open(b *strings.Builder) {
	for _, seg := range a.path {
		b.WriteByte('{')
		b.Write(strictjson.Marshal(strictjson.String(seg)))
		b.WriteByte(':')
	}
	b.WriteByte('[')
}

// Replay returns the deltas that release text, a whole document already
// in contract (a cache hit, or an answer the ladder made whole), item by
// item as a live stream would: the item array's opening with its first
// item, each further item, then the close. They concatenate to text byte
// for byte, so the answer a client assembles is the one the cache and
// the contract summary keep. An error when text is not in the canonical
// form the Assembler writes, with the item array first on its path:
// such a text goes out as one piece.
func Replay(pointer, text string) ([]string, error) {
	a, err := NewAssembler(pointer)
	if err != nil {
		return nil, err
	}
	doc, err := strictjson.Parse([]byte(text))
	if err != nil {
		return nil, err
	}
	arr := doc
	for _, seg := range a.path {
		if arr == nil || arr.Kind != strictjson.KindObject || len(arr.Members) == 0 || arr.Members[0].Key != seg {
			return nil, errors.New("the document does not hold the item array first")
		}
		arr = arr.Members[0].Value
	}
	if arr == nil || arr.Kind != strictjson.KindArray {
		return nil, errors.New("the item array is not an array")
	}
	deltas := make([]string, 0, len(arr.Items)+1)
	for _, item := range arr.Items {
		deltas = append(deltas, a.Item(item)...)
	}
	last, err := a.Close(doc)
	if err != nil {
		return nil, err
	}
	if a.Text() != text {
		return nil, errors.New("the document is not in canonical form")
	}
	return append(deltas, last), nil
}
