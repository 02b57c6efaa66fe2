package testmcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

func kindItems(c Contract, kind string) []RawJSON {
	switch kind {
	case "tools":
		return c.Tools
	case "prompts":
		return c.Prompts
	case "resources":
		return c.Resources
	case "resourceTemplates":
		return c.ResourceTemplates
	}
	return nil
}

// Cursors are opaque to clients: "tm1." and base64 of "kind:listing:offset".
func encodeCursor(kind string, listing, offset int) string {
	return "tm1." + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d:%d", kind, listing, offset))
}

func decodeCursor(kind, c string) (listing, offset int, ok bool) {
	rest, found := strings.CutPrefix(c, "tm1.")
	if !found {
		return 0, 0, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return 0, 0, false
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 3 || parts[0] != kind {
		return 0, 0, false
	}
	l, err1 := strconv.Atoi(parts[1])
	o, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || l < 1 || o < 0 {
		return 0, 0, false
	}
	return l, o, true
}

func (s *Server) list(kind string, cursor *string, caps map[string]json.RawMessage, modern bool) reply {
	var listing, offset int
	if cursor == nil || *cursor == "" {
		s.mu.Lock()
		s.listings[kind]++
		listing = s.listings[kind]
		s.mu.Unlock()
	} else {
		var ok bool
		listing, offset, ok = decodeCursor(kind, *cursor)
		if !ok || (kind == "tools" && s.sc.PagingTrick == TrickInvalidCursor) {
			return errReply(codeInvalidParams, "invalid cursor")
		}
	}
	var after [][]byte
	if sp := s.sc.SpoofElicitations; sp != nil && kind == "tools" && offset == 0 && listing == sp.AfterListing {
		after = s.spoofs()
	}
	if kind == "tools" && s.sc.RawToolsList != "" {
		return reply{result: []byte(s.sc.RawToolsList), after: after}
	}
	items := kindItems(s.sc.contractAt(when{session: s.session, listing: listing, caps: caps}), kind)
	size := s.sc.PageSize
	trick := ""
	if kind == "tools" {
		trick = s.sc.PagingTrick
	}
	if size <= 0 {
		size = len(items)
		if trick == TrickEndless {
			size = 1
		}
	}

	var page []RawJSON
	next := ""
	switch {
	case trick == TrickEndless:
		for i := offset; i < offset+size; i++ {
			if i < len(items) {
				page = append(page, items[i])
			} else {
				page = append(page, Tool(fmt.Sprintf("endless_%d", i), "One more page."))
			}
		}
		next = encodeCursor(kind, listing, offset+size)
	default:
		if offset > len(items) {
			return errReply(codeInvalidParams, "invalid cursor")
		}
		end := min(offset+size, len(items))
		page = items[offset:end]
		if end < len(items) {
			next = encodeCursor(kind, listing, end)
		}
		switch {
		case trick == TrickCursorLoop && offset > 0:
			next = *cursor // the page points back at itself
		case trick == TrickRepeatName && offset > 0 && offset == size && len(items) > 0:
			page = append([]RawJSON{items[0]}, page...)
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `{%s:[`, jsonString(kind))
	for i, it := range page {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(it))
	}
	b.WriteString("]")
	if next != "" {
		fmt.Fprintf(&b, `,"nextCursor":%s`, jsonString(next))
	}
	if modern {
		b.WriteString(`,"ttlMs":0,"cacheScope":"public"`)
	}
	b.WriteString("}")
	return reply{result: b.Bytes(), after: after}
}
