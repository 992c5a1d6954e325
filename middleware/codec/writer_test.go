package codec

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// lineAPI is a StreamAPI of plain lines: its head's "id", each text,
// then "end".
type lineAPI struct{ head *strictjson.Value }

func (l lineAPI) Open(buf []byte) []byte {
	return append(append(buf, Str(l.head.Get("id"))...), '\n')
}
func (lineAPI) Text(buf []byte, delta string) []byte { return append(append(buf, delta...), '\n') }
func (lineAPI) End(buf []byte, _ *strictjson.Value, _ string) []byte {
	return append(buf, "end\n"...)
}
func (lineAPI) Fail(buf []byte, e *apierr.Error) []byte { return append(buf, "fail\n"...) }

func TestEncode(t *testing.T) {
	newStream := func(w http.ResponseWriter, _ *Request, head *strictjson.Value) *Stream {
		return NewStream(w, frame.NDJSONType, lineAPI{head})
	}
	tests := []struct {
		name               string
		stream             bool
		wantType, wantBody string
	}{
		{"whole answer is the object", false, frame.NativeType, `{"id":"a1"}`},
		{"stream has the object as head", true, frame.NDJSONType, "a1\nhi\nend\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			obj := strictjson.Object(Member("id", strictjson.String("a1")))
			if err := Encode(rec, &Request{Stream: tt.stream}, obj, "hi", frame.NativeType, newStream); err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Encode(stream=%v) Content-Type = %q, want %q", tt.stream, got, tt.wantType)
			}
			if got := rec.Body.String(); got != tt.wantBody && got != tt.wantBody+"\n" {
				t.Errorf("Encode(stream=%v) body = %q, want %q", tt.stream, got, tt.wantBody)
			}
		})
	}
}
