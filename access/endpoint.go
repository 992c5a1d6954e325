package access

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// List names a listing of models that is filtered down to a caller's
// models: an Ollama list ({"models":[{"name","model"}]}: /api/tags,
// /api/ps) or OpenAI's ({"data":[{"id"}]}: /v1/models).
type List string

// The lists of models.
const (
	ListNone   List = ""
	ListOllama List = "ollama"
	ListOpenAI List = "openai"
)

// Endpoint is what a request's method and path say it needs.
type Endpoint struct {
	// Manage is set on model management: pull, push, create, delete,
	// copy, blobs.
	Manage bool
	// List is the listing the answer holds, to filter.
	List List
	// PathModel is the model a path names (GET /v1/models/{model}).
	PathModel string
	// Members are the body's members that name models; nil means the body
	// need not be read.
	Members []string
	// NeedsModel is set where a request reaches a model: a restricted
	// caller must name one of its own.
	NeedsModel bool
}

// Classify says what a request needs by its method and path (canonical,
// as the edge leaves it). Management endpoints need Manage, and the
// models they name; listings are filtered; every other request with a
// body reaches a model and is checked by the model its body names (a new
// Ollama endpoint included), and a GET without one (version, the root)
// needs nothing.
func Classify(method, p string) Endpoint {
	p = strings.TrimSuffix(p, "/")
	switch {
	case p == "/api/blobs" || strings.HasPrefix(p, "/api/blobs/"):
		return Endpoint{Manage: true}
	case p == "/api/pull", p == "/api/push", p == "/api/create", p == "/api/delete":
		return Endpoint{Manage: true, Members: []string{"model", "name"}, NeedsModel: true}
	case p == "/api/copy":
		return Endpoint{Manage: true, Members: []string{"source", "destination"}, NeedsModel: true}
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		switch {
		case p == "/api/tags", p == "/api/ps":
			return Endpoint{List: ListOllama}
		case p == "/v1/models":
			return Endpoint{List: ListOpenAI}
		case strings.HasPrefix(p, "/v1/models/"):
			return Endpoint{PathModel: strings.TrimPrefix(p, "/v1/models/"), NeedsModel: true}
		}
		return Endpoint{}
	}
	if p == "/api/show" {
		return Endpoint{Members: []string{"model", "name"}, NeedsModel: true}
	}
	return Endpoint{Members: []string{"model"}, NeedsModel: true}
}

// Need is what one request asks for, as Authorize checks it.
type Need struct {
	Manage     bool
	NeedsModel bool
	// Models are every model the request names.
	Models []string
}

// Need reads what a request asks for: the endpoint's needs and the models
// its path or body names. raw is the body, read only when e.Members is
// set.
func (e Endpoint) Need(raw []byte) (Need, error) {
	n := Need{Manage: e.Manage, NeedsModel: e.NeedsModel}
	if e.PathModel != "" {
		n.Models = append(n.Models, e.PathModel)
	}
	if e.Members != nil {
		names, err := BodyModels(raw, e.Members...)
		if err != nil {
			return n, err
		}
		n.Models = append(n.Models, names...)
	}
	return n, nil
}

// ErrBadBody marks a body whose models cannot be read: not a JSON object.
var ErrBadBody = errors.New("request body is not a JSON object")

// BodyModels returns the string values of raw's top-level members named
// one of members, as Ollama's decoder (encoding/json) could read them:
// names matched case-insensitively, and every duplicate, since the
// decoder takes the last and the guard refuses them. An empty body names
// nothing; one that is not a JSON object is ErrBadBody.
func BodyModels(raw []byte, members ...string) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ErrBadBody
	}
	var out []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
		}
		for _, m := range members {
			if !strings.EqualFold(key, m) {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) == nil {
				out = append(out, s)
			}
			break
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, ErrBadBody
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrBadBody
	}
	return out, nil
}
