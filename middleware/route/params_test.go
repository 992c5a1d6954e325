package route

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/validators"
)

// TestResolveParams: a route's parameters are merged over its contract's
// defaults, and the X-Contract-Params header over both when the header's
// contract is the route's own; a header contract on a route of another
// contract takes none of the route's, and a malformed header is an error
// whatever guards the request.
func TestResolveParams(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := NewRoutes(reg, []Spec{
		{Model: "quiz", Upstream: "llama3.2", Contract: "mcq", Params: map[string]string{"options": "A", "question_count": "5"}},
		{Model: "other", Upstream: "llama3.2", Contract: "mcq", Params: map[string]string{"question_count": "7"}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		l       Lookup
		want    validators.Params
		wantErr string
	}{
		{"virtual model", Lookup{Model: "quiz"},
			validators.Params{"options": "A", "question_count": "5"}, ""},
		{"header params over the route's", Lookup{Model: "quiz", Params: "question_count=10"},
			validators.Params{"options": "A", "question_count": "10"}, ""},
		{"header contract on its own route", Lookup{Model: "quiz", Contract: "mcq", Params: "options=B"},
			validators.Params{"options": "B", "question_count": "5"}, ""},
		{"header contract, no route", Lookup{Model: "llama3.2", Contract: "mcq", Params: "question_count=3"},
			validators.Params{"options": "C", "question_count": "3"}, ""},
		{"bad header params on a route", Lookup{Model: "quiz", Params: "options"}, nil, "not key=value"},
		{"bad header params, nothing guarded", Lookup{Model: "llama3.2", Params: "options"}, nil, "not key=value"},
		{"unknown contract", Lookup{Model: "quiz", Contract: "nope"}, nil, `unknown contract "nope"`},
		{"bad param value", Lookup{Model: "quiz", Params: "options=Z"}, nil, "options"},
	}
	for _, tt := range tests {
		r, err := routes.Resolve(tt.l)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: Resolve(%+v) error = %v, want one containing %q", tt.name, tt.l, err, tt.wantErr)
			}
			continue
		}
		if err != nil || r == nil {
			t.Fatalf("%s: Resolve(%+v) = %v, %v", tt.name, tt.l, r, err)
		}
		if diff := cmp.Diff(tt.want, r.Params); diff != "" {
			t.Errorf("%s: Resolve(%+v).Params (-want +got):\n%s", tt.name, tt.l, diff)
		}
	}
}

// TestParamsLayers: Validator.Params merges each layer over the ones
// before it, over the contract's defaults, and checks the result.
func TestParamsLayers(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := NewRoutes(reg, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := routes.Validator("mcq")
	if !ok {
		t.Fatal("no built-in mcq")
	}
	tests := []struct {
		name    string
		layers  []validators.Params
		want    validators.Params
		wantErr bool
	}{
		{"defaults", nil, validators.Params{"options": "C"}, false},
		{"one layer", []validators.Params{{"options": "A"}}, validators.Params{"options": "A"}, false},
		{"the last layer wins", []validators.Params{{"options": "A", "question_count": "4"}, {"options": "B"}},
			validators.Params{"options": "B", "question_count": "4"}, false},
		{"a nil layer", []validators.Params{nil, {"question_count": "2"}},
			validators.Params{"options": "C", "question_count": "2"}, false},
		{"a bad value in any layer", []validators.Params{{"options": "Z"}, {"question_count": "2"}}, nil, true},
	}
	for _, tt := range tests {
		got, err := v.Params(tt.layers...)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: Params(%v) = %v, want an error", tt.name, tt.layers, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Params(%v) error = %v", tt.name, tt.layers, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Params(%v) (-want +got):\n%s", tt.name, tt.layers, diff)
		}
	}
}
