package access

import (
	"errors"
	"net/http"
	"testing"
)

func TestRequestModel(t *testing.T) {
	errBody := errors.New("body broke")
	tests := []struct {
		name, method, path, body string
		bodyErr                  error
		want                     string
		wantErr                  error
		read                     bool
	}{
		{"generate", http.MethodPost, "/api/generate", `{"model":"m","prompt":"p"}`, nil, "m", nil, true},
		{"show by name", http.MethodPost, "/api/show", `{"name":"m"}`, nil, "m", nil, true},
		{"path", http.MethodGet, "/v1/models/m:7b", "", nil, "m:7b", nil, false},
		{"version reads nothing", http.MethodGet, "/api/version", "", nil, "", nil, false},
		{"blob upload is never read", http.MethodPost, "/api/blobs/sha256:ab", "x", nil, "", nil, false},
		{"not JSON names none", http.MethodPost, "/api/chat", `[1]`, nil, "", nil, true},
		{"alias by its target", http.MethodPost, "/api/experimental/aliases", `{"alias":"a","target":"t"}`, nil, "t", nil, true},
		{"create by its model, not its from", http.MethodPost, "/api/create", `{"from":"b","model":"a"}`, nil, "a", nil, true},
		{"body error", http.MethodPost, "/api/chat", "", errBody, "", errBody, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := false
			got, err := RequestModel(tt.method, tt.path, func() ([]byte, error) { read = true; return []byte(tt.body), tt.bodyErr })
			if got != tt.want || !errors.Is(err, tt.wantErr) || read != tt.read {
				t.Errorf("RequestModel(%s %s) = %q, %v (read %v); want %q, %v (read %v)", tt.method, tt.path, got, err, read, tt.want, tt.wantErr, tt.read)
			}
		})
	}
}
