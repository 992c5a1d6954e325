package celdoc

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestSizesOf(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		doc       string
		list, str int
		class     int
		sized     bool
	}{
		{`{"a":[1,2],"b":"x"}`, 2, 1, 0, true},
		{`[` + strings.TrimSuffix(strings.Repeat("1,", 9), ",") + `]`, 9, 0, 5, true},
		{`{"a":{"b":["` + long + `"]}}`, 1, 300, 3, true},
		{`{"` + long + `":1}`, 1, 300, 3, true},
		{`[` + strings.TrimSuffix(strings.Repeat("1,", contracts.CheckAssumedListSize+1), ",") + `]`, contracts.CheckAssumedListSize + 1, 0, 0, false},
		{`["` + strings.Repeat("x", contracts.CheckAssumedStringSize+1) + `"]`, 1, contracts.CheckAssumedStringSize + 1, 0, false},
		{strings.Repeat("[", 300) + strings.Repeat("]", 300), math.MaxInt, math.MaxInt, 0, false},
	}
	for _, tt := range tests {
		doc, err := strictjson.ParseString(tt.doc)
		if err != nil {
			t.Fatal(err)
		}
		_, l, s := New(doc)
		class, sized := contracts.CheckSizeClass(l, s)
		if l != tt.list || s != tt.str || class != tt.class || sized != tt.sized {
			t.Errorf("New(%.40s…) = %d, %d (class %d, %v), want %d, %d (class %d, %v)", tt.doc, l, s, class, sized, tt.list, tt.str, tt.class, tt.sized)
		}
	}
}

// TestDocValsStrings checks that the values a document's views make on
// first read read as the document's, and again the same after a
// collection.
func TestDocValsStrings(t *testing.T) {
	root := rootOf(t, `{"a":"x","l":["y","zz",{"b":"w"}],"n":1.5}`)
	l, _ := root.Member("l")
	tests := []struct {
		get  func() ref.Val
		want ref.Val
	}{
		{func() ref.Val { v, _ := root.Member("a"); return v }, types.String("x")},
		{func() ref.Val { return l.(*List).At(0) }, types.String("y")},
		{func() ref.Val { return l.(*List).At(1) }, types.String("zz")},
		{func() ref.Val { v, _ := l.(*List).At(2).(*Object).Member("b"); return v }, types.String("w")},
		{func() ref.Val { v, _ := root.Member("n"); return v }, types.Double(1.5)},
	}
	first := make([]ref.Val, len(tests))
	for i, tt := range tests {
		first[i] = tt.get()
	}
	runtime.GC()
	for i, tt := range tests {
		got := tt.get()
		if got.Equal(tt.want) != types.True || got.Type() != tt.want.Type() || first[i].Equal(tt.want) != types.True {
			t.Errorf("value %d = %v (%v), want %v", i, got, got.Type(), tt.want)
		}
	}
}

func TestConvertToType(t *testing.T) {
	root := rootOf(t, `{"l":[1]}`)
	l, _ := root.Member("l")
	tests := []struct {
		name    string
		v       ref.Val
		to      ref.Type
		want    ref.Val // nil: an error naming wantErr
		wantErr string
	}{
		{"list as list", l, types.ListType, l, ""},
		{"list as type", l, types.TypeType, types.ListType, ""},
		{"list as string", l, types.StringType, nil, "type conversion error from list to 'string'"},
		{"list as map", l, types.MapType, nil, "type conversion error from list to 'map(dyn, dyn)'"},
		{"map as map", root, types.MapType, root, ""},
		{"map as type", root, types.TypeType, types.MapType, ""},
		{"map as list", root, types.ListType, nil, "type conversion error from map to 'list(dyn)'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.v.ConvertToType(tt.to)
			if tt.want != nil {
				if got != tt.want {
					t.Errorf("ConvertToType(%v) = %v, want %v", tt.to, got, tt.want)
				}
				return
			}
			if e, ok := got.(*types.Err); !ok || e.Error() != tt.wantErr {
				t.Errorf("ConvertToType(%v) = %v, want error %q", tt.to, got, tt.wantErr)
			}
		})
	}
}

// rootOf is the view of the object text, made by New.
func rootOf(t *testing.T, text string) *Object {
	t.Helper()
	doc, err := strictjson.ParseString(text)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := New(doc)
	return d.Root().(*Object)
}
