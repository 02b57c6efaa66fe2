package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// writeDefs writes a definitions file (sdkserver's and upstream's format)
// with an echo tool and ntools-1 realistic others, each description the
// sentence below repeated descRepeat times. It returns the file's size.
func writeDefs(path string, ntools, descRepeat int) (int, error) {
	type prop map[string]any
	tools := []map[string]any{{
		"name":        "echo",
		"description": "Repeats the text it is given.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": prop{"type": "string", "description": "Text to repeat"}}, "required": []string{"text"}},
	}}
	for i := 1; i < ntools; i++ {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("tool_%05d", i),
			"title":       fmt.Sprintf("Tool %d", i),
			"description": strings.Repeat("Searches the project's documents and returns matching passages with their paths. ", descRepeat),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"query": prop{"type": "string", "description": "What to look for", "maxLength": 500},
				"limit": prop{"type": "integer", "minimum": 1, "maximum": 100},
				"paths": prop{"type": "array", "items": prop{"type": "string"}},
			}, "required": []string{"query"}},
			"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false},
		})
	}
	b, err := json.Marshal(map[string]any{"instructions": "Use these tools to search documents.", "tools": tools})
	if err != nil {
		return 0, err
	}
	return len(b), os.WriteFile(path, b, 0o600)
}
