package validators

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// emitAt is a rule pack that reports one violation per entry, at the
// offset of the member the entry names, in the entry order.
type emitAt []struct {
	member string
	sev    Severity
}

func (emitAt) CheckParams(Params) error { return nil }

func (p emitAt) Check(doc *strictjson.Value, _ Params, e *Emitter) {
	for _, x := range p {
		e.Semantic("X_"+x.member, x.sev, doc.Get(x.member), []Seg{x.member}, nil, nil, "hint", nil)
	}
}

// TestCheckPack checks that a pack run on its own reports what a contract
// would: violations in document order whatever the order of emission,
// Valid and RepairType from the severities, while the Emitter keeps the
// order of emission.
func TestCheckPack(t *testing.T) {
	doc, err := strictjson.Parse([]byte(`{"a": 1, "b": 2, "c": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	semantic := ClassSemantic
	tests := []struct {
		name       string
		pack       emitAt
		emitted    []string
		reported   []string
		valid      bool
		repairType *Class
	}{
		{"nothing", nil, nil, []string{}, true, nil},
		{"document order", emitAt{{"c", SeverityError}, {"a", SeverityError}, {"b", SeverityWarning}},
			[]string{"X_c", "X_a", "X_b"}, []string{"X_a", "X_b", "X_c"}, false, &semantic},
		{"warnings only", emitAt{{"b", SeverityWarning}, {"a", SeverityWarning}},
			[]string{"X_b", "X_a"}, []string{"X_a", "X_b"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Emitter
			tt.pack.Check(doc, nil, &e)
			var emitted []string
			for _, v := range e.Violations() {
				emitted = append(emitted, v.Code)
			}
			if diff := cmp.Diff(tt.emitted, emitted); diff != "" {
				t.Errorf("Emitter.Violations() codes (-want +got):\n%s", diff)
			}
			r := CheckPack(tt.pack, doc, nil)
			if diff := cmp.Diff(tt.reported, r.Codes()); diff != "" {
				t.Errorf("CheckPack() codes (-want +got):\n%s", diff)
			}
			if r.Valid != tt.valid || !cmp.Equal(r.RepairType, tt.repairType) {
				t.Errorf("CheckPack() valid=%v repair_type=%v, want %v %v", r.Valid, r.RepairType, tt.valid, tt.repairType)
			}
		})
	}
}
