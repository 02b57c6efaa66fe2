package testmcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// Record is one line of a Scenario's RecordFile: a message the server
// received, in the session it received it.
type Record struct {
	Session int    `json:"session"`
	Message string `json:"message"`
}

// Method is the record's JSON-RPC method, or "" for responses, garbage
// and lines without one.
func (r Record) Method() string { return methodOf([]byte(r.Message)) }

// ReadRecords reads a RecordFile. A missing file holds no records.
func ReadRecords(path string) ([]Record, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine*2)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("testmcp: record file %s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// CountMethod counts the records of one method, in one session (session
// > 0) or in all of them (session 0).
func CountMethod(recs []Record, session int, method string) int {
	n := 0
	for _, r := range recs {
		if (session == 0 || r.Session == session) && r.Method() == method {
			n++
		}
	}
	return n
}
