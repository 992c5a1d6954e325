package route

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/contracts"
)

// TestFormatByDefault: virtual models and header contracts get the
// contract's schema as format unless the route turns it off or the
// upstream model cannot take one; ad-hoc schemas carry their own.
func TestFormatByDefault(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := NewRoutes(reg, []Spec{
		{Model: "quiz", Upstream: "llama3.2", Contract: "mcq"},
		{Model: "said", Upstream: "llama3.2", Contract: "mcq", AddFormat: true},
		{Model: "plain", Upstream: "llama3.2", Contract: "mcq", NoFormat: true},
		{Model: "weak", Upstream: "deepseek-r1:8b", Contract: "mcq"},
	}, true, WithNoSchemaFormat("deepseek-r1:8b", "phi3"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		l    Lookup
		want bool
	}{
		{"virtual model", Lookup{Model: "quiz"}, true},
		{"add_format said so", Lookup{Model: "said"}, true},
		{"format off", Lookup{Model: "plain"}, false},
		{"upstream model without schema format", Lookup{Model: "weak"}, false},
		{"header", Lookup{Contract: "mcq", Model: "llama3.2"}, true},
		{"header on a route", Lookup{Contract: "mcq", Model: "plain"}, false},
		{"header, model without schema format", Lookup{Contract: "mcq", Model: "phi3:latest"}, false},
		{"ad hoc", Lookup{Model: "x", Schema: []byte(`{"type":"object"}`)}, false},
	}
	for _, tt := range tests {
		r, err := routes.Resolve(tt.l)
		if err != nil || r == nil {
			t.Fatalf("%s: Resolve = %v, %v", tt.name, r, err)
		}
		if r.AddFormat != tt.want {
			t.Errorf("%s: AddFormat = %v, want %v", tt.name, r.AddFormat, tt.want)
		}
	}
	want := []VirtualModel{
		{"quiz", "llama3.2", "mcq@1"}, {"said", "llama3.2", "mcq@1"},
		{"plain", "llama3.2", "mcq@1"}, {"weak", "deepseek-r1:8b", "mcq@1"},
	}
	if diff := cmp.Diff(want, routes.VirtualModels()); diff != "" {
		t.Errorf("VirtualModels (-want +got):\n%s", diff)
	}
}
