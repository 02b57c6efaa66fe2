package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// maxDigestInput bounds what mcpseal digest reads from stdin. A listing of
// 10,000 large tool definitions is about 10 MB, so 64 MiB holds any real
// input while keeping a runaway pipe from exhausting memory.
const maxDigestInput = 64 << 20

func init() { register(newDigestCmd) }

func newDigestCmd(e *env) *cobra.Command {
	var (
		kind         string
		instructions bool
	)
	cmd := &cobra.Command{
		Use:   "digest [--kind KIND | --instructions] < INPUT",
		Short: "Print the digest of a definition, a listing or instructions read on stdin",
		Long: `Print the mcpseal contract digest v1 (docs/contract-digest.md) of what is on
standard input, as 64 lowercase hex digits and a newline:

  a JSON object    the definition digest: the SHA-256 of its RFC 8785
                   canonical form, every member included. It is read as a
                   tool unless --kind says otherwise; the kind decides which
                   member names it ("name"; "uri" for resources;
                   "uriTemplate" for resource templates), and that member
                   must be a non-empty string.
  a JSON array     the set digest of a listing: every element is a
                   definition of the kind; their order does not matter.
  --instructions   the instructions digest: the SHA-256 of the bytes on
                   stdin, read as UTF-8 text (not JSON). A trailing newline
                   is part of the text.

Input with a repeated member name, invalid UTF-8, an unpaired surrogate
escape or a definition without a name has no digest: the command fails,
just as such a definition never matches a pin. At most 64 MiB is read.

Examples:

  mcpseal digest < tool.json
  jq .result.tools tools-list-response.json | mcpseal digest
  jq .result.resources resources-list-response.json | mcpseal digest --kind resources
  jq -j .result.instructions initialize-response.json | mcpseal digest --instructions`,
		Args: exactArgs(0, "no arguments (it reads stdin)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if instructions && cmd.Flags().Changed("kind") {
				return &usageError{withHint(errors.New("--instructions and --kind cannot be used together"), "see 'mcpseal digest --help'")}
			}
			k := contract.Kind(kind)
			if k.ListMethod() == "" {
				return &usageError{withHint(errors.New("--kind must be tools, prompts, resources or resourceTemplates"), "see 'mcpseal digest --help'")}
			}
			return runDigest(e, k, instructions)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", string(contract.Tools), "kind of the definitions: tools, prompts, resources or resourceTemplates")
	cmd.Flags().BoolVar(&instructions, "instructions", false, "digest stdin as a server's instructions (raw UTF-8 text, not JSON)")
	return cmd
}

func runDigest(e *env, k contract.Kind, instructions bool) error {
	in, err := io.ReadAll(io.LimitReader(e.stdin, maxDigestInput+1))
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if len(in) > maxDigestInput {
		return fmt.Errorf("stdin holds more than %d MiB", maxDigestInput>>20)
	}
	var d string
	if instructions {
		if !utf8.Valid(in) {
			return errors.New("stdin is not valid UTF-8, so it cannot be a server's instructions")
		}
		s := string(in)
		d = *contract.InstructionsDigest(&s)
	} else if d, err = digestJSON(k, in); err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, d)
	return err
}

// digestJSON returns the definition digest of an object, or the set digest
// of an array of definitions. No error quotes the input.
func digestJSON(k contract.Kind, in []byte) (string, error) {
	// canon checks the whole input first, so that malformed JSON is
	// reported by offset and never by quoting it. A repeated member name
	// is left to the definitions, which say where it is.
	_, cerr := canon.Transform(in)
	if cerr != nil && !errors.Is(cerr, canon.ErrDuplicateKey) {
		return "", fmt.Errorf("stdin is not one JSON value: %w", cerr)
	}
	var first byte // canon has seen a value, so there is one
	if t := bytes.TrimLeft(in, " \t\r\n"); len(t) > 0 {
		first = t[0]
	}
	switch first {
	case '{':
		d, err := contract.NewDefinition(k, in)
		if err != nil {
			return "", definitionHint(k, err)
		}
		return d.Digest, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(in, &items); err != nil {
			// Only possible past a repeated name, where canon stopped.
			return "", fmt.Errorf("stdin is not one JSON value: %w", cerr)
		}
		defs := make([]contract.Definition, 0, len(items))
		for i, raw := range items {
			d, err := contract.NewDefinition(k, raw)
			if err != nil {
				return "", definitionHint(k, fmt.Errorf("element %d of %d: %w", i+1, len(items), err))
			}
			defs = append(defs, d)
		}
		return contract.SetDigest(defs), nil
	}
	return "", withHint(errors.New("stdin holds neither a definition (a JSON object) nor a listing (an array of definitions)"),
		"see 'mcpseal digest --help'")
}

// definitionHint adds what the user most likely needs to a definition
// error.
func definitionHint(k contract.Kind, err error) error {
	var de *contract.DefinitionError
	if !errors.As(err, &de) {
		return err
	}
	switch de.Reason {
	case contract.ReasonNoName:
		kinds := make([]string, len(contract.Kinds))
		for i, k := range contract.Kinds {
			kinds[i] = string(k)
		}
		return withHint(err, "a %s is named by its %q member, a non-empty string; pipe a listing's array of definitions, not the whole result, and set --kind (%s)",
			k.Singular(), k.NameMember(), strings.Join(kinds, ", "))
	case contract.ReasonDuplicateKey:
		return withHint(err, "a definition that repeats a member name has no digest: readers disagree about which copy counts")
	}
	return err
}
