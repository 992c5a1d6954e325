package contracts

import "encoding/json"

// Description is the public view of a contract: `gateway contracts show
// NAME` and the gateway's GET /contracts/{name} answer it, alike.
type Description struct {
	ID          string            `json:"id"`
	Description string            `json:"description,omitempty"`
	Rules       []string          `json:"rules"`
	Params      map[string]string `json:"params"`
	ItemArray   string            `json:"item_array,omitempty"`
	Shape       Shape             `json:"shape"`
	Policy      Policy            `json:"policy"`
	Fallback    Fallback          `json:"fallback"`
	Output      string            `json:"output"`
	// Schema is the JSON Schema as written, or null.
	Schema json.RawMessage `json:"schema"`
}

// Describe returns the contract's public view.
func (c *Contract) Describe() Description {
	rules := c.Rules
	if rules == nil {
		rules = []string{}
	}
	schema := json.RawMessage("null")
	if c.SchemaJSON != nil {
		schema = c.SchemaJSON
	}
	return Description{ID: c.ID(), Description: c.Description, Rules: rules, Params: c.Params,
		ItemArray: c.ItemArray, Shape: c.Shape, Policy: c.Policy, Fallback: c.Fallback, Output: c.Output, Schema: schema}
}
