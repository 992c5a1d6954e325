// Package models answers the model endpoints for the gateway's virtual
// models and keeps each virtual model's state against the upstream's
// model list.
//
// Virtual models are models to their clients: `ollama list` and an OpenAI
// client's models.list show them, `ollama show` and models.retrieve
// describe them (as their upstream model, under their own name), `ollama
// pull` of one succeeds when its upstream model is there — and never
// reaches the upstream, which would try to download a model of that name —
// and delete, copy and create refuse them. Requests that name no virtual
// model pass through untouched.
package models

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/apis"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Upstream is what the model endpoints ask of the upstream: the gateway's
// pool of Ollama servers.
type Upstream interface {
	Get(ctx context.Context, path string, header http.Header) (upstream.Reply, error)
	Post(ctx context.Context, path string, body []byte, header http.Header) (upstream.Reply, error)
}

// Models answers the model endpoints for the virtual models of list, and
// keeps the state of each from what the upstream's model list last said,
// saying aloud when a virtual model's upstream model is missing: an
// operator whose config names a model the upstream lacks would otherwise
// see the virtual model vanish from /api/tags without a word. Every read
// of the list updates the states: the one at start, each /api/tags and
// /v1/models a client asks through the gateway, each /admin/stats;
// /api/show and /api/pull of a virtual model update its own alone. A nil
// *Models is the gateway without virtual models: it registers nothing and
// has no states.
type Models struct {
	up   Upstream
	list func() []route.VirtualModel
	log  *slog.Logger

	mu      sync.Mutex
	gateway string            // the gateway's address, for the fix
	state   map[string]string // route.ModelKey(route name) → state
}

// New returns the model endpoints of the virtual models list gives, asking
// up; listen is the gateway's configured address, for the command that
// fixes a missing model. It returns nil when there are no virtual models.
func New(up Upstream, list func() []route.VirtualModel, log *slog.Logger, listen string) *Models {
	if list == nil || len(list()) == 0 {
		return nil
	}
	return &Models{up: up, list: list, log: log, gateway: listen, state: map[string]string{}}
}

// Routes registers the model endpoints on e; pass is the pass-through.
// The listings are those of the guarded APIs' codecs, each once. Without
// virtual models it registers nothing.
func (m *Models) Routes(e *echo.Echo, pass echo.HandlerFunc) {
	if m == nil {
		return
	}
	h := &handlers{m: m, pass: pass}
	listed := map[string]bool{}
	for _, cd := range apis.All() {
		lc, ok := cd.(codec.ListingCodec)
		if !ok || listed[lc.Models().Path] {
			continue
		}
		l := lc.Models()
		listed[l.Path] = true
		e.GET(l.Path, h.listing(l))
		if l.Retrieve != "" {
			e.GET(l.Retrieve+"*", h.retrieve(l))
		}
	}
	e.POST("/api/show", h.ofVirtual(h.show))
	e.POST("/api/pull", h.ofVirtual(h.pull))
	e.DELETE("/api/delete", h.refuse("model", "name"))
	e.POST("/api/copy", h.refuse("source", "destination"))
	e.POST("/api/create", h.refuse("model", "name"))
}

// handlers are the model endpoints' handlers; pass is the pass-through,
// for a request that names no virtual model.
type handlers struct {
	m    *Models
	pass echo.HandlerFunc
}

// virtual returns the virtual model called name, matched by Ollama's name
// rules (route.ModelKey): "quiz", "quiz:latest", "library/quiz" and
// "registry.ollama.ai/library/quiz:latest" alike.
func (m *Models) virtual(name string) (route.VirtualModel, bool) {
	if name == "" {
		return route.VirtualModel{}, false
	}
	for _, vm := range m.list() {
		if route.ModelKey(vm.Name) == route.ModelKey(name) {
			return vm, true
		}
	}
	return route.VirtualModel{}, false
}

// withTag is a model name with its tag: as in Ollama, none means
// "latest".
func withTag(name string) string {
	if name == "" || strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		return name
	}
	return name + ":latest"
}

// ask calls the upstream and returns its answer's body; an error status is
// the upstream's error, as the client would have seen it. The answer's
// Content-Type is the client's. A nil body is a GET, any other a POST.
func (h *handlers) ask(c echo.Context, path string, body []byte) ([]byte, error) {
	var header http.Header
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		header = http.Header{echo.HeaderXRequestID: {id}}
	}
	ctx := c.Request().Context()
	var (
		reply upstream.Reply
		err   error
	)
	if body == nil {
		reply, err = h.m.up.Get(ctx, path, header)
	} else {
		reply, err = h.m.up.Post(ctx, path, body, header)
	}
	if err != nil {
		return nil, err
	}
	if ct := reply.Header.Get(echo.HeaderContentType); ct != "" {
		c.Response().Header().Set(echo.HeaderContentType, ct)
	}
	return reply.Body, nil
}

func (h *handlers) askObject(c echo.Context, path string, body []byte) (*strictjson.Value, error) {
	b, err := h.ask(c, path, body)
	if err != nil {
		return nil, err
	}
	v, err := strictjson.Parse(b)
	if err != nil || v.Kind != strictjson.KindObject {
		return nil, &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream answer unreadable", Err: err}
	}
	return v, nil
}

// readName reads the request's body and the first of keys that holds a
// string, and gives the body back for the pass-through.
func readName(c echo.Context, keys ...string) (name string, body *strictjson.Value, err error) {
	req := c.Request()
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		// A body cut short is the client's (400), a slow one 408, one
		// over the limit 413: never the gateway's 500.
		return "", nil, apierr.BodyRead(err)
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
	v, perr := strictjson.Parse(raw)
	if perr != nil || v.Kind != strictjson.KindObject {
		return "", nil, nil
	}
	for _, k := range keys {
		if s, ok := v.Get(k).AsString(); ok && s != "" {
			return s, v, nil
		}
	}
	return "", v, nil
}

// readName is readName, and refuses with 400 a body the strict parser
// refuses but Ollama's encoding/json reads as naming a virtual model
// (duplicate members, invalid UTF-8, "Model"): passed through, such a
// pull would start a download, such a delete remove the upstream model of
// the virtual model's name.
func (h *handlers) readName(c echo.Context, keys ...string) (string, *strictjson.Value, error) {
	name, body, err := readName(c, keys...)
	if err != nil || body != nil {
		return name, body, err
	}
	raw, _ := io.ReadAll(c.Request().Body)
	c.Request().Body = io.NopCloser(bytes.NewReader(raw))
	var lenient struct {
		Model       string `json:"model"`
		Name        string `json:"name"`
		Source      string `json:"source"`
		Destination string `json:"destination"`
	}
	if json.Unmarshal(raw, &lenient) != nil {
		return "", nil, nil
	}
	for _, n := range []string{lenient.Model, lenient.Name, lenient.Source, lenient.Destination} {
		if _, ok := h.m.virtual(n); ok {
			return "", nil, &apierr.Error{Code: http.StatusBadRequest,
				Msg: fmt.Sprintf("invalid JSON body naming the virtual model %s: send it as strict JSON (no duplicate members, valid UTF-8)", n)}
		}
	}
	return "", nil, nil
}

// writeJSON answers v with the upstream's Content-Type (set by ask).
func writeJSON(c echo.Context, v *strictjson.Value) error {
	ct := c.Response().Header().Get(echo.HeaderContentType)
	if ct == "" {
		ct = "application/json; charset=utf-8"
	}
	return c.Blob(http.StatusOK, ct, strictjson.Marshal(v))
}

// listing answers an API's listing of models, l, in the shape its codec
// writes: the upstream's models, less any a virtual model's name shadows,
// and each virtual model whose upstream model is among them, listed as
// that model under the virtual name (with its tag).
func (h *handlers) listing(l *codec.Listing) echo.HandlerFunc {
	return func(c echo.Context) error {
		list, err := h.askObject(c, l.Path, nil)
		if err != nil {
			return err
		}
		models := l.Models(list)
		names := make([]string, 0, len(models))
		for _, md := range models {
			if md.Name != "" {
				names = append(names, md.Name)
			}
		}
		h.m.observe(names)
		byName := map[string]codec.Model{}
		kept := models[:0:0]
		for _, md := range models {
			if _, virtual := h.m.virtual(md.Name); virtual {
				// The virtual model shadows the upstream's model of its name.
				continue
			}
			byName[route.ModelKey(md.Name)] = md
			kept = append(kept, md)
		}
		for _, vm := range h.m.list() {
			if up, ok := byName[route.ModelKey(vm.Upstream)]; ok {
				kept = append(kept, codec.Model{Name: withTag(vm.Name), Entry: up.Entry})
			}
		}
		return writeJSON(c, l.Write(list, kept))
	}
}

// retrieve answers l's entry of one model (/v1/models/{model}) for a
// virtual model with its upstream model's entry under the name asked.
func (h *handlers) retrieve(l *codec.Listing) echo.HandlerFunc {
	return func(c echo.Context) error {
		name := c.Param("*")
		vm, ok := h.m.virtual(name)
		if !ok {
			return h.pass(c)
		}
		obj, err := h.askObject(c, l.Retrieve+vm.Upstream, nil)
		if err != nil {
			return err
		}
		return writeJSON(c, l.Named(obj, name))
	}
}

// ofVirtual is the handler of an endpoint whose body names one model
// ("model", else "name"): serve answers a request for a virtual model,
// called name in the request, the pass-through any other.
func (h *handlers) ofVirtual(serve func(c echo.Context, name string, body *strictjson.Value, vm route.VirtualModel) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		name, body, err := h.readName(c, "model", "name")
		if err != nil {
			return err
		}
		vm, ok := h.m.virtual(name)
		if !ok {
			return h.pass(c)
		}
		return serve(c, name, body, vm)
	}
}

// show answers /api/show of a virtual model: the upstream's answer for its
// upstream model, the name in the Modelfile replaced.
func (h *handlers) show(c echo.Context, name string, body *strictjson.Value, vm route.VirtualModel) error {
	req := body.Clone()
	req.Set("model", strictjson.String(vm.Upstream))
	req.Delete("name")
	obj, err := h.askObject(c, "/api/show", strictjson.Marshal(req))
	if err != nil {
		return h.missing(name, vm, err)
	}
	h.m.set(vm, true)
	if mf, ok := obj.Get("modelfile").AsString(); ok {
		mf = strings.ReplaceAll(mf, "FROM "+withTag(vm.Upstream), "FROM "+withTag(vm.Name))
		obj.Set("modelfile", strictjson.String(mf))
	}
	return writeJSON(c, obj)
}

// pull answers /api/pull of a virtual model from the gateway: success when
// the upstream has its upstream model, else an error saying so. It never
// passes such a pull upstream, where it would start a download.
func (h *handlers) pull(c echo.Context, name string, body *strictjson.Value, vm route.VirtualModel) error {
	show := strictjson.Marshal(&strictjson.Value{Kind: strictjson.KindObject, Members: []strictjson.Member{
		{Key: "model", KeyOffset: -1, Value: strictjson.String(vm.Upstream)}}})
	if _, err := h.ask(c, "/api/show", show); err != nil {
		return h.missing(name, vm, err)
	}
	h.m.set(vm, true)
	stream := true
	if s := body.Get("stream"); s != nil && s.Kind == strictjson.KindBool {
		stream = s.Bool
	}
	if !stream {
		return c.Blob(http.StatusOK, "application/json; charset=utf-8", []byte(`{"status":"success"}`))
	}
	return c.Blob(http.StatusOK, "application/x-ndjson", []byte("{\"status\":\"success\"}\n"))
}

// missing turns the upstream's error about vm's upstream model into the
// client's: a 404 (the upstream lacks the model) names the virtual model,
// the missing model and the command that pulls it, in Ollama's shape; any
// other error is the upstream's.
func (h *handlers) missing(name string, vm route.VirtualModel, err error) error {
	if apierr.From(err).Status() != http.StatusNotFound {
		return err
	}
	h.m.set(vm, false)
	return &apierr.Error{Code: http.StatusNotFound, Err: err,
		Msg: fmt.Sprintf("%s is a virtual model of the gateway over %s, which the upstream does not have: pull it through the gateway with %s", name, vm.Upstream, h.m.fix(vm.Upstream))}
}

// refuse answers a request that would change a virtual model (delete,
// copy, create) with 400; keys are the members that name models.
func (h *handlers) refuse(keys ...string) echo.HandlerFunc {
	return func(c echo.Context) error {
		_, body, err := h.readName(c, "model", "name", "source", "destination")
		if err != nil {
			return err
		}
		if body != nil {
			for _, k := range keys {
				name, _ := body.Get(k).AsString()
				if vm, ok := h.m.virtual(name); ok {
					return &apierr.Error{Code: http.StatusBadRequest,
						Msg: fmt.Sprintf("%s is a virtual model of the gateway (contract %s over %s): it cannot be deleted, copied or created; change the gateway's routes instead", name, vm.Contract, vm.Upstream)}
				}
			}
		}
		return h.pass(c)
	}
}
