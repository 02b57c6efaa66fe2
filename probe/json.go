package probe

import (
	"fmt"
	"strconv"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// member returns the raw value of obj's top-level member name, nil when
// absent or when obj is not an object.
func member(obj []byte, name string) []byte {
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return nil
	}
	for _, m := range ms {
		if m.Key == name {
			return m.Value
		}
	}
	return nil
}

func stringMember(obj []byte, name string) string {
	v := member(obj, name)
	if v == nil {
		return ""
	}
	s, err := jsonrpc.DecodeString(v)
	if err != nil {
		return ""
	}
	return s
}

// instructionsOf returns result.instructions: nil when absent or null, an
// error when present but not a string.
func instructionsOf(result []byte) (*string, error) {
	raw := member(result, "instructions")
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	v, err := jsonrpc.DecodeString(raw)
	if err != nil {
		return nil, &Error{Reason: ReasonInvalid, Detail: "the instructions are not a string"}
	}
	return &v, nil
}

// offers reports whether server capabilities offer listings of kind k.
func offers(caps []byte, k contract.Kind) bool {
	switch k {
	case contract.Tools:
		return member(caps, "tools") != nil
	case contract.Prompts:
		return member(caps, "prompts") != nil
	default:
		return member(caps, "resources") != nil
	}
}

// listPage splits a list result into its definitions and next cursor.
func listPage(result []byte, k contract.Kind) (items [][]byte, next string, err error) {
	ms, err := jsonrpc.Members(result)
	if err != nil {
		return nil, "", err
	}
	var arr []byte
	for _, m := range ms {
		switch m.Key {
		case k.ResultMember():
			arr = m.Value
		case "nextCursor":
			if string(m.Value) != "null" {
				if next, err = jsonrpc.DecodeString(m.Value); err != nil {
					return nil, "", err
				}
			}
		}
	}
	if arr == nil {
		return nil, "", fmt.Errorf("no %s member", k)
	}
	items, err = jsonrpc.Elements(arr)
	return items, next, err
}

func errorCode(raw []byte) int {
	n, err := strconv.Atoi(string(member(raw, "code")))
	if err != nil {
		return 0
	}
	return n
}
