// Package contract defines a server's contract — every definition the model
// can read — and its digests, diffs and change labels.
//
// The contract of an MCP server is every tool, prompt, resource and resource
// template definition exactly as the server sent it (all members, including
// ones a later spec adds), plus the server's instructions. See
// docs/contract-digest.md for the digest specification.
package contract

// Kind names one of the four listings that make up a contract.
type Kind string

const (
	Tools             Kind = "tools"
	Prompts           Kind = "prompts"
	Resources         Kind = "resources"
	ResourceTemplates Kind = "resourceTemplates"
)

// Kinds lists every kind in the fixed order used by digests and output.
var Kinds = []Kind{Tools, Prompts, Resources, ResourceTemplates}

// ListMethod is the JSON-RPC method that lists definitions of kind k.
func (k Kind) ListMethod() string {
	switch k {
	case Tools:
		return "tools/list"
	case Prompts:
		return "prompts/list"
	case Resources:
		return "resources/list"
	case ResourceTemplates:
		return "resources/templates/list"
	}
	return ""
}

// ResultMember is the member of a list result that holds the definitions.
func (k Kind) ResultMember() string { return string(k) }

// NameMember is the member that identifies a definition of kind k:
// "name" for tools and prompts, "uri" for resources and "uriTemplate" for
// resource templates.
func (k Kind) NameMember() string {
	switch k {
	case Resources:
		return "uri"
	case ResourceTemplates:
		return "uriTemplate"
	}
	return "name"
}

// Singular is the kind's human noun ("tool", "prompt", "resource",
// "resource template").
func (k Kind) Singular() string {
	switch k {
	case Tools:
		return "tool"
	case Prompts:
		return "prompt"
	case Resources:
		return "resource"
	case ResourceTemplates:
		return "resource template"
	}
	return string(k)
}

// KindForListMethod returns the kind listed by method, if any.
func KindForListMethod(method string) (Kind, bool) {
	for _, k := range Kinds {
		if k.ListMethod() == method {
			return k, true
		}
	}
	return "", false
}

// A Definition is one tool, prompt, resource or resource template, as sent.
type Definition struct {
	Kind Kind
	// Name is the identifying member's value (see Kind.NameMember).
	Name string
	// Digest is the hex SHA-256 of Canonical.
	Digest string
	// Canonical is the RFC 8785 form of the whole definition object.
	Canonical []byte
}

// A Contract is everything a server shows the model.
type Contract struct {
	// Defs holds the definitions of each kind, sorted by name (UTF-16 code
	// unit order), ties by digest.
	Defs map[Kind][]Definition
	// Instructions is the server's instructions string, nil when absent.
	Instructions *string
}

// Digests summarises a contract.
type Digests struct {
	// Sets holds the set digest of every kind (all four are always present).
	Sets map[Kind]string `json:"sets"`
	// Instructions is the digest of the instructions, nil when absent.
	Instructions *string `json:"instructions"`
	// Contract is the digest of the whole contract (see docs/contract-digest.md).
	Contract string `json:"contract"`
}
