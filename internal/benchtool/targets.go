package main

import (
	"fmt"
	"math"
	"strconv"
)

// A target is one of issue 12's goals: a measured value and the bound it
// must stay within.
type target struct {
	Key      string `json:"key"`      // stable name, e.g. "run.cpu.vs-relay"
	Protocol string `json:"protocol"` // the protocol generation it was measured on
	What     string `json:"what"`
	Value    num    `json:"value"` // NaN (null in JSON) when it could not be measured
	Limit    num    `json:"limit"`
	Strict   bool   `json:"strict"` // Value < Limit; otherwise Value <= Limit
	Unit     string `json:"unit"`   // "x", "MiB" or "ms"
	Met      bool   `json:"met"`
}

// judge sets Met. A value that could not be measured does not meet its
// target: a claim needs a figure.
func (t *target) judge() {
	switch {
	case !t.Value.ok():
		t.Met = false
	case t.Strict:
		t.Met = t.Value < t.Limit
	default:
		t.Met = t.Value <= t.Limit
	}
}

// bound is the target as text: "<= 2.00x", "< 20.0 MiB".
func (t target) bound() string {
	op := "<="
	if t.Strict {
		op = "<"
	}
	return op + " " + formatValue(float64(t.Limit), t.Unit)
}

func formatValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	switch unit {
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

// allMet reports whether every target was met; false for none.
func allMet(ts []target) bool {
	for _, t := range ts {
		if !t.Met {
			return false
		}
	}
	return len(ts) > 0
}

// num is a figure in the JSON report: a number, or null when it could not
// be measured (encoding/json cannot write NaN).
type num float64

func (n num) ok() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

func (n num) MarshalJSON() ([]byte, error) {
	if !n.ok() {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(n), 'g', 6, 64)), nil
}
