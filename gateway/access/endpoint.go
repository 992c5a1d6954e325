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
// /api/ps), OpenAI's ({"data":[{"id"}]}: /v1/models) or Ollama's aliases
// ({"aliases":[{"alias","target"}]}).
type List string

// The lists of models.
const (
	ListNone    List = ""
	ListOllama  List = "ollama"
	ListOpenAI  List = "openai"
	ListAliases List = "aliases"
)

// Class is what a request can make Ollama do, which decides what a key
// needs to send it.
type Class string

// The classes of requests. Every path Ollama serves is one of the first
// four (see [Routes]); anything else is ClassUnknown.
const (
	// ClassRead reads the server's state and reaches no model: the root,
	// the version, the cloud status, the listings (filtered to the
	// caller's models).
	ClassRead Class = "read"
	// ClassModel reaches the models the request names: generation,
	// chat, embeddings, images, a model's details. A restricted key must
	// name one of its own.
	ClassModel Class = "model"
	// ClassManage changes the server's models or what their names mean:
	// pull, push, create, delete, copy, blobs, aliases. It needs manage,
	// and every model it names must be the key's.
	ClassManage Class = "manage"
	// ClassAccount acts on the server's ollama.com account: who it is
	// signed in as, signing it out. It needs manage.
	ClassAccount Class = "account"
	// ClassUnknown is a method and path Ollama v0.17.4 does not serve:
	// what a later Ollama does there is not known, so it needs manage,
	// and every model it may name must be the key's.
	ClassUnknown Class = "unknown"
)

// Endpoint is what a request's method and path say it needs.
type Endpoint struct {
	// Class is what the request can make Ollama do.
	Class Class
	// Manage is set on every class but read and model use.
	Manage bool
	// List is the listing the answer holds, to filter.
	List List
	// PathModel is the model a path names (GET /v1/models/{model}).
	PathModel string
	// Members are the body's members that name models, the one Ollama
	// routes by first; nil means the body need not be read.
	Members []string
	// NeedsModel is set where a request reaches a model: a restricted
	// caller must name one of its own.
	NeedsModel bool
	// Prefix is set where a body's prefix_matching makes the name it
	// gives (an alias) stand for every model name that starts with it:
	// no glob can bound that, so only a key with every model may.
	Prefix bool
}

// Model members of the bodies Ollama v0.17.4 reads (api/types.go and
// server/routes_aliases.go): every member that makes Ollama touch a
// model, the one it acts on first.
var (
	modelMember  = []string{"model"}
	namedMembers = []string{"model", "name"}
	// /api/create makes model (or name) from the model "from" names.
	createMembers = []string{"model", "name", "from"}
	copyMembers   = []string{"source", "destination"}
	// An alias makes its name stand for its target.
	aliasMembers       = []string{"target", "alias"}
	aliasDeleteMembers = []string{"alias"}
	// unknownMembers are every member a body of Ollama names a model by.
	unknownMembers = []string{"model", "name", "from", "source", "destination", "target", "alias"}
)

// Route is one method and path Ollama v0.17.4 serves (its
// server/routes.go), as the access check classifies it. Path segments
// that start with ":" stand for any one segment.
type Route struct {
	Method, Path string
	Endpoint
}

func read(l List) Endpoint { return Endpoint{Class: ClassRead, List: l} }

func use(members []string) Endpoint {
	return Endpoint{Class: ClassModel, Members: members, NeedsModel: true}
}

func manage(members []string) Endpoint {
	return Endpoint{Class: ClassManage, Manage: true, Members: members, NeedsModel: members != nil}
}

var account = Endpoint{Class: ClassAccount, Manage: true}

// Routes are every route of Ollama v0.17.4's server, classified. A test
// reads the route table of Ollama's source and fails on a route missing
// here: a new one is classified before any key reaches it.
var Routes = []Route{
	{"HEAD", "/", read(ListNone)},
	{"GET", "/", read(ListNone)},
	{"HEAD", "/api/version", read(ListNone)},
	{"GET", "/api/version", read(ListNone)},
	{"GET", "/api/status", read(ListNone)},

	{"POST", "/api/pull", manage(namedMembers)},
	{"POST", "/api/push", manage(namedMembers)},
	{"HEAD", "/api/tags", read(ListOllama)},
	{"GET", "/api/tags", read(ListOllama)},
	{"POST", "/api/show", use(namedMembers)},
	{"DELETE", "/api/delete", manage(namedMembers)},

	{"POST", "/api/me", account},
	{"POST", "/api/signout", account},
	{"DELETE", "/api/user/keys/:encodedKey", account},

	{"POST", "/api/create", manage(createMembers)},
	{"POST", "/api/blobs/:digest", manage(nil)},
	{"HEAD", "/api/blobs/:digest", manage(nil)},
	{"POST", "/api/copy", manage(copyMembers)},
	// The list of aliases is filtered: a key sees the aliases whose name
	// and target are its own.
	{"GET", "/api/experimental/aliases", Endpoint{Class: ClassManage, Manage: true, List: ListAliases}},
	{"POST", "/api/experimental/aliases", func() Endpoint { e := manage(aliasMembers); e.Prefix = true; return e }()},
	{"DELETE", "/api/experimental/aliases", manage(aliasDeleteMembers)},

	{"GET", "/api/ps", read(ListOllama)},
	{"POST", "/api/generate", use(modelMember)},
	{"POST", "/api/chat", use(modelMember)},
	{"POST", "/api/embed", use(modelMember)},
	{"POST", "/api/embeddings", use(modelMember)},

	{"POST", "/v1/chat/completions", use(modelMember)},
	{"POST", "/v1/completions", use(modelMember)},
	{"POST", "/v1/embeddings", use(modelMember)},
	{"GET", "/v1/models", read(ListOpenAI)},
	{"GET", "/v1/models/:model", Endpoint{Class: ClassModel, NeedsModel: true}},
	{"POST", "/v1/responses", use(modelMember)},
	{"POST", "/v1/images/generations", use(modelMember)},
	{"POST", "/v1/images/edits", use(modelMember)},

	{"POST", "/v1/messages", use(modelMember)},
}

// Classify says what a request needs by its method and path (canonical,
// as the edge leaves it): the Endpoint of its route in [Routes], with the
// model a path names (GET /v1/models/{model}, also with a "/" in it).
// An OPTIONS request is read: Ollama serves none, so it is a CORS
// preflight or a 405 and reaches no handler. Every other method and path
// is ClassUnknown: it needs manage, and its body's models are checked.
func Classify(method, p string) Endpoint {
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	if method == http.MethodOptions {
		return read(ListNone)
	}
	for _, r := range Routes {
		vars, ok := matchRoute(r.Path, p)
		if !ok || r.Method != method {
			continue
		}
		ep := r.Endpoint
		if m, ok := vars[":model"]; ok {
			ep.PathModel = m
		}
		return ep
	}
	if rest, ok := strings.CutPrefix(p, "/v1/models/"); ok && method == http.MethodGet && rest != "" {
		// A virtual model's name may hold a "/": the gateway answers it
		// (Ollama's route takes one segment and answers 404).
		return Endpoint{Class: ClassModel, PathModel: rest, NeedsModel: true}
	}
	return Endpoint{Class: ClassUnknown, Manage: true, Members: unknownMembers}
}

// matchRoute matches path p against a route's pattern, whose ":name"
// segments stand for one non-empty segment each, and returns those
// segments.
func matchRoute(pattern, p string) (map[string]string, bool) {
	ps, xs := strings.Split(pattern, "/"), strings.Split(p, "/")
	if len(ps) != len(xs) {
		return nil, false
	}
	var vars map[string]string
	for i, s := range ps {
		if strings.HasPrefix(s, ":") {
			if xs[i] == "" {
				return nil, false
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[s] = xs[i]
			continue
		}
		if s != xs[i] {
			return nil, false
		}
	}
	return vars, true
}

// Need is what one request asks for, as Authorize checks it.
type Need struct {
	// Class is the request's class, named in a refusal.
	Class      Class
	Manage     bool
	NeedsModel bool
	// AllModels is set where the request reaches models no glob can
	// bound (an alias by prefix).
	AllModels bool
	// Models are every model the request names.
	Models []string
}

// Need reads what a request asks for: the endpoint's needs and the models
// its path or body names. raw is the body, read only when e.Members is
// set.
func (e Endpoint) Need(raw []byte) (Need, error) {
	n := Need{Class: e.Class, Manage: e.Manage, NeedsModel: e.NeedsModel}
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
	if e.Prefix {
		prefix, err := bodyMembers(raw, "prefix_matching")
		if err != nil {
			return n, err
		}
		for _, v := range prefix {
			// Any value but false may be read as true by a later
			// decoder, or refused: refused here alike.
			if string(v) != "false" && string(v) != "null" {
				n.AllModels = true
			}
		}
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
	vals, err := bodyMembers(raw, members...)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vals {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// bodyMembers returns the values of raw's top-level members named one of
// members (case-insensitively, every duplicate), in the body's order.
func bodyMembers(raw []byte, members ...string) ([]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ErrBadBody
	}
	var out []json.RawMessage
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
			if strings.EqualFold(key, m) {
				out = append(out, v)
				break
			}
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
