package codec

import "github.com/contractgateway/gateway/validators/strictjson"

// ListingCodec is implemented by a Codec whose API lists the server's
// models: the gateway gathers the models once (the upstream's listing, the
// virtual models over them) and the codec reads and writes them in its
// API's shape, so that a new API's listing is written in its own file.
type ListingCodec interface {
	// Models returns the API's listing.
	Models() *Listing
}

// Listing is the shape of an API's listing of models: where the upstream
// serves it and one model's entry, the array that holds the entries and
// the members of an entry that name its model.
type Listing struct {
	// Path is the route of the listing, such as "/api/tags".
	Path string
	// Retrieve is the route prefix of one model's entry, the model's name
	// following it ("/v1/models/"); "" when the API has none.
	Retrieve string
	// array is the listing's member that holds the entries; names are
	// the members of an entry that name its model, the first read.
	array string
	names []string
}

// NewListing returns the listing served at path whose entries are the
// items of member array, each naming its model in names (the first read);
// retrieve is the route prefix of one model's entry, "" for none.
func NewListing(path, retrieve, array string, names ...string) *Listing {
	return &Listing{Path: path, Retrieve: retrieve, array: array, names: names}
}

// Model is one model of a listing: the name it is listed under and its
// entry as the upstream wrote it (a virtual model's is its upstream
// model's).
type Model struct {
	Name  string
	Entry *strictjson.Value
}

// Models reads the entries of list, the upstream's answer to Path, in
// order; an entry without a name has Name "".
func (l *Listing) Models(list *strictjson.Value) []Model {
	var out []Model
	for _, it := range Items(list.Get(l.array)) {
		out = append(out, Model{Name: Str(it.Get(l.names[0])), Entry: it})
	}
	return out
}

// Write returns list with its entries replaced by models, every other
// member kept. An entry listed under another name than its own (a virtual
// model's) is a copy named so.
func (l *Listing) Write(list *strictjson.Value, models []Model) *strictjson.Value {
	entries := make([]*strictjson.Value, 0, len(models))
	for _, m := range models {
		e := m.Entry
		if Str(e.Get(l.names[0])) != m.Name {
			e = l.Named(e.Clone(), m.Name)
		}
		entries = append(entries, e)
	}
	list.Set(l.array, strictjson.Array(entries...))
	return list
}

// Named sets the names of entry, one model's (an entry of the listing, or
// the answer to Retrieve), to name, and returns it; anything but an object
// is returned as it is.
func (l *Listing) Named(entry *strictjson.Value, name string) *strictjson.Value {
	if entry.Kind != strictjson.KindObject {
		return entry
	}
	for _, k := range l.names {
		entry.Set(k, strictjson.String(name))
	}
	return entry
}
