package apis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestCodecRequestEdits: what each codec reads from a request, and the
// body the upstream gets after the guard's edits (model, format,
// temperature, one answer instead of a stream).
func TestCodecRequestEdits(t *testing.T) {
	schema := `{"type":"object"}`
	tests := []struct {
		name, path, body string
		// read: stream, has format, schema, include usage, temperature.
		stream, hasFormat, usage, temp bool
		schema                         string
		prompt                         string
		want                           string
	}{
		{
			name: "completions", path: "/v1/completions",
			body:   `{"model":"v","prompt":"Once","stream":true,"stream_options":{"include_usage":true}}`,
			stream: true, usage: true, prompt: "Once",
			want: `{"model":"up","prompt":"Once","stream":false,"stream_options":{"include_usage":true},"temperature":0.2}`,
		},
		{
			name: "completions response_format is not Ollama's there", path: "/v1/completions",
			body: `{"model":"v","prompt":"p","temperature":1,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`,
			temp: true, prompt: "p",
			want: `{"model":"up","prompt":"p","temperature":0.2,"response_format":{"type":"json_schema","json_schema":{"schema":{}}},"stream":false}`,
		},
		{
			name: "responses text.format", path: "/v1/responses",
			body:   `{"model":"v","instructions":"Be brief.","input":"Tell","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"string"}}},"stream":true}`,
			stream: true, hasFormat: true, schema: `{"type":"string"}`, prompt: "Be brief.\n\nTell",
			want: `{"model":"up","instructions":"Be brief.","input":"Tell","text":{"format":{"type":"json_schema","name":"contract","schema":{"type":"object"},"strict":true}},"stream":false,"temperature":0.2}`,
		},
		{
			name: "responses input items", path: "/v1/responses",
			body:   `{"model":"v","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"}]},{"type":"message","role":"assistant","content":"b"}],"text":{"verbosity":"low"}}`,
			prompt: "user: a\n\nassistant: b",
			want:   `{"model":"up","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"}]},{"type":"message","role":"assistant","content":"b"}],"text":{"verbosity":"low","format":{"type":"json_schema","name":"contract","schema":{"type":"object"},"strict":true}},"stream":false,"temperature":0.2}`,
		},
		{
			name: "messages", path: "/v1/messages",
			body:   `{"model":"v","max_tokens":9,"system":[{"type":"text","text":"S"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true,"temperature":0.5}`,
			stream: true, temp: true, prompt: "S\n\nuser: hi",
			want: `{"model":"up","max_tokens":9,"system":[{"type":"text","text":"S"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":false,"temperature":0.2}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cd := codecFor(t, tt.path)
			r, err := cd.Decode([]byte(tt.body))
			if err != nil {
				t.Fatalf("Decode(%s) = %v", tt.body, err)
			}
			type read struct {
				Stream, HasFormat, Usage, Temp bool
				Schema, Prompt                 string
			}
			got := read{r.Stream, r.HasFormat, r.IncludeUsage, cd.Temperature(r), string(r.Schema), cd.Prompt(r)}
			want := read{tt.stream, tt.hasFormat, tt.usage, tt.temp, tt.schema, tt.prompt}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decode(%s) (-want +got):\n%s", tt.body, diff)
			}
			if string(r.Bytes()) != tt.body {
				t.Errorf("unedited Bytes() = %s, want the client's bytes", r.Bytes())
			}
			up := r.Clone()
			up.SetModel("up")
			if up.Model != "up" || r.Model == "up" {
				t.Errorf("SetModel(%q): Model = %q, the client's %q; want the clone alone pointed at it", "up", up.Model, r.Model)
			}
			sv, _ := strictjson.Parse([]byte(schema))
			cd.SetFormat(up, sv)
			up.SetStream(false)
			cd.SetTemperature(up, 0.2)
			if got := string(up.Bytes()); got != tt.want {
				t.Errorf("edited body:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestErrorShapes: every codec encodes its errors in its API's shape:
// Ollama's on the native paths, OpenAI's and Anthropic's on theirs.
func TestErrorShapes(t *testing.T) {
	tests := []struct {
		path, want string
	}{
		{"/api/chat", `{"error":"bad"}`},
		{"/v1/chat/completions", `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`},
		{"/v1/completions", `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`},
		{"/v1/responses", `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`},
		{"/v1/messages", `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`},
	}
	for _, tt := range tests {
		cd := codecFor(t, tt.path)
		got := string(cd.EncodeError(&apierr.Error{Code: 400, Msg: "bad"}))
		if got != tt.want {
			t.Errorf("%s: error body = %s, want %s", tt.path, got, tt.want)
		}
	}
	if got, want := string(frame.SSEErrorEvent([]byte(`{"type":"error","error":{}}`))), "event: error\ndata: {\"type\":\"error\",\"error\":{}}\n\n"; got != want {
		t.Errorf("SSEErrorEvent = %q, want %q", got, want)
	}
}

func codecFor(t *testing.T, path string) codec.Codec {
	t.Helper()
	for _, cd := range All() {
		if cd.Path() == path {
			return cd
		}
	}
	t.Fatalf("no codec for %s", path)
	return nil
}
