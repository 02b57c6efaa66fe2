package mcpconfig

import "fmt"

// stripJSONC removes // and /* */ comments and trailing commas (before }
// or ]) outside strings, which VS Code's config files allow, and leaves
// every other byte in place. The result is then parsed as strict JSON.
func stripJSONC(data []byte) ([]byte, error) {
	out := make([]byte, 0, len(data))
	pendingComma := -1 // index in out of a comma that may be trailing
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			if j >= len(data) {
				return nil, fmt.Errorf("%w: unterminated string at offset %d", ErrInvalid, i)
			}
			pendingComma = -1
			out = append(out, data[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := -1
			for j := i + 2; j+1 < len(data); j++ {
				if data[j] == '*' && data[j+1] == '/' {
					end = j + 1
					break
				}
			}
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated comment at offset %d", ErrInvalid, i)
			}
			out = append(out, ' ')
			i = end
		case c == ',':
			// A comma right after "{", "[" or another comma is an error
			// that stays one.
			pendingComma = -1
			if p := lastNonSpace(out); p != '{' && p != '[' && p != ',' && p != 0 {
				pendingComma = len(out)
			}
			out = append(out, c)
		case c == '}' || c == ']':
			if pendingComma >= 0 {
				out[pendingComma] = ' '
			}
			pendingComma = -1
			out = append(out, c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out = append(out, c)
		default:
			pendingComma = -1
			out = append(out, c)
		}
	}
	return out, nil
}

// lastNonSpace is the last byte of b that is not JSON whitespace, or 0.
func lastNonSpace(b []byte) byte {
	for i := len(b) - 1; i >= 0; i-- {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b[i]
	}
	return 0
}
