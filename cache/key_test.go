package cache

import (
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func mustParse(t testing.TB, s string) *strictjson.Value {
	t.Helper()
	v, err := strictjson.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q) = %v", s, err)
	}
	return v
}

const baseBody = `{"model":"llama3.2","system":"be brief","prompt":"quiz","format":{"type":"object"},"options":{"temperature":0.3,"seed":42,"top_p":0.9,"num_predict":100,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`

func baseRequest(t testing.TB, body string) Request {
	return Request{Endpoint: "/api/generate", Contract: "mcq@1", Params: map[string]string{"options": "A", "question_count": "10"},
		Output: "bare", Body: mustParse(t, body)}
}

// TestNewKeySame: what does not change the answer does not change the key.
func TestNewKeySame(t *testing.T) {
	tests := []struct {
		name, body string
	}{
		{"key order", `{"prompt":"quiz","system":"be brief","model":"llama3.2","think":false,"format":{"type":"object"},"options":{"stop":["\n\n"],"num_predict":100,"top_p":0.9,"seed":42,"temperature":0.3},"tools":[{"function":{"name":"f"},"type":"function"}],"images":["aGk="]}`},
		{"whitespace", "{ \"model\" : \"llama3.2\",\n \"system\":\"be brief\", \"prompt\":\"quiz\",\"format\":{ \"type\":\"object\" },\"options\":{\"temperature\":0.3,\"seed\":42,\"top_p\":0.9,\"num_predict\":100,\"stop\":[\"\\n\\n\"]},\"think\":false,\"images\":[\"aGk=\"],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}] }"},
		{"number spelling", `{"model":"llama3.2","system":"be brief","prompt":"quiz","format":{"type":"object"},"options":{"temperature":3e-1,"seed":42.0,"top_p":0.90,"num_predict":1e2,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{"stream and keep_alive", `{"stream":true,"keep_alive":"5m","model":"llama3.2","system":"be brief","prompt":"quiz","format":{"type":"object"},"options":{"temperature":0.3,"seed":42,"top_p":0.9,"num_predict":100,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{"runtime options", `{"model":"llama3.2","system":"be brief","prompt":"quiz","format":{"type":"object"},"options":{"num_thread":8,"num_gpu":1,"use_mmap":true,"temperature":0.3,"seed":42,"top_p":0.9,"num_predict":100,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{"escaped string", `{"model":"llama\u0033.2","system":"be brief","prompt":"quiz","format":{"type":"object"},"options":{"temperature":0.3,"seed":42,"top_p":0.9,"num_predict":100,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`},
	}
	want := NewKey(baseRequest(t, baseBody))
	for _, tt := range tests {
		if got := NewKey(baseRequest(t, tt.body)); got != want {
			t.Errorf("NewKey(%s) = %v, want the base key %v", tt.name, got, want)
		}
	}
	r := baseRequest(t, baseBody)
	r.Params = map[string]string{"question_count": "10", "options": "A"}
	if NewKey(r) != want {
		t.Errorf("NewKey with params in another order differs")
	}
}

// TestNewKeyDiffers: any semantic difference changes the key.
func TestNewKeyDiffers(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *Request)
	}{
		{"prompt", func(r *Request) {
			r.Body = mustParse(t, `{"model":"llama3.2","system":"be brief","prompt":"quiz!","format":{"type":"object"},"options":{"temperature":0.3,"seed":42,"top_p":0.9,"num_predict":100,"stop":["\n\n"]},"think":false,"images":["aGk="],"tools":[{"type":"function","function":{"name":"f"}}]}`)
		}},
		{"system", func(r *Request) { r.Body.Members[1].Value = strictjson.String("be long") }},
		{"model", func(r *Request) { r.Body.Members[0].Value = strictjson.String("qwen2.5") }},
		{"temperature", func(r *Request) { r.Body.Get("options").Members[0].Value = strictjson.Number("0.2") }},
		{"seed", func(r *Request) { r.Body.Get("options").Members[1].Value = strictjson.Number("43") }},
		{"num_predict", func(r *Request) { r.Body.Get("options").Members[3].Value = strictjson.Number("101") }},
		{"stop", func(r *Request) { r.Body.Get("options").Members[4].Value = strictjson.Array() }},
		{"num_ctx counts", func(r *Request) {
			o := r.Body.Get("options")
			o.Members = append(o.Members, strictjson.Member{Key: "num_ctx", Value: strictjson.Number("4096")})
		}},
		{"think", func(r *Request) { r.Body.Get("think").Bool = true }},
		{"format", func(r *Request) { r.Body.Get("format").Members[0].Value = strictjson.String("array") }},
		{"images", func(r *Request) { r.Body.Get("images").Items[0] = strictjson.String("aGl=") }},
		{"tools", func(r *Request) { r.Body.Get("tools").Items = nil }},
		{"unknown member", func(r *Request) {
			r.Body.Members = append(r.Body.Members, strictjson.Member{Key: "suffix", Value: strictjson.String("x")})
		}},
		{"param value", func(r *Request) { r.Params = map[string]string{"options": "B", "question_count": "10"} }},
		{"param missing", func(r *Request) { r.Params = map[string]string{"options": "A"} }},
		{"contract version", func(r *Request) { r.Contract = "mcq@2" }},
		{"endpoint", func(r *Request) { r.Endpoint = "/api/chat" }},
		{"output mode", func(r *Request) { r.Output = "fenced" }},
		{"report", func(r *Request) { r.Report = "corrections" }},
		{"output mode and report", func(r *Request) { r.Output, r.Report = "fenced", "corrections" }},
		{"output moved to report", func(r *Request) { r.Output, r.Report = "", "bare" }},
		{"string vs number", func(r *Request) { r.Body.Get("options").Members[1].Value = strictjson.String("42") }},
		{"split strings", func(r *Request) {
			r.Body.Members[1].Value = strictjson.String("be")
			r.Body.Members[2].Value = strictjson.String("brief" + "quiz")
		}},
	}
	base := NewKey(baseRequest(t, baseBody))
	seen := map[Key]string{base: "base"}
	for _, tt := range tests {
		r := baseRequest(t, baseBody)
		tt.edit(&r)
		got := NewKey(r)
		if prev, dup := seen[got]; dup {
			t.Errorf("NewKey(%s) = NewKey(%s) = %v, want different keys", tt.name, prev, got)
		}
		seen[got] = tt.name
	}
}

func TestCanonicalNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1", "1"}, {"1.0", "1"}, {"1e0", "1"}, {"100", "100"}, {"1e2", "100"}, {"-0", "0"}, {"-0.0", "0"},
		{"0.3", "0.3"}, {"0.30", "0.3"}, {"3e-1", "0.3"}, {"3E-1", "0.3"},
		{"12345678901234567890123", "12345678901234567890123"}, {"1.5e30", "1500000000000000000000000000000"},
		{"1e999999999", "1e999999999"},
	}
	for _, tt := range tests {
		if got := CanonicalNumber(tt.in); got != tt.want {
			t.Errorf("CanonicalNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzNewKey: the key of a JSON object does not depend on how it is
// written: re-marshalled and with its members reversed, it is the same.
func FuzzNewKey(f *testing.F) {
	f.Add(baseBody)
	f.Add(`{"a":[1,2.0,3e0],"b":{"c":null,"d":true}}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := strictjson.Parse([]byte(s))
		if err != nil || v.Kind != strictjson.KindObject {
			return
		}
		k := NewKey(Request{Endpoint: "/e", Body: v})
		again, err := strictjson.Parse(strictjson.Marshal(v))
		if err != nil {
			t.Fatalf("re-marshal does not parse: %v", err)
		}
		if NewKey(Request{Endpoint: "/e", Body: again}) != k {
			t.Fatalf("key changed by re-marshalling %q", s)
		}
		rev := v.Clone()
		for i, j := 0, len(rev.Members)-1; i < j; i, j = i+1, j-1 {
			rev.Members[i], rev.Members[j] = rev.Members[j], rev.Members[i]
		}
		if NewKey(Request{Endpoint: "/e", Body: rev}) != k {
			t.Fatalf("key changed by member order of %q", s)
		}
	})
}

func BenchmarkNewKey2KB(b *testing.B) {
	body := `{"model":"llama3.2","messages":[`
	for i := range 20 {
		if i > 0 {
			body += ","
		}
		body += `{"role":"user","content":"Write ten multiple-choice questions about Python basics, please."}`
	}
	body += `],"options":{"temperature":0.3}}`
	r := Request{Endpoint: "/api/chat", Contract: "mcq@1", Params: map[string]string{"options": "A"}, Body: mustParse(b, body)}
	b.ReportAllocs()
	for b.Loop() {
		NewKey(r)
	}
}
