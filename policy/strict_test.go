package policy

import (
	"errors"
	"reflect"
	"testing"
)

// twoPass is the reading decodeStrict must agree with: checkIJSON, then
// decodeValue.
func twoPass(raw []byte) (any, error) {
	if err := checkIJSON(raw); err != nil {
		return nil, err
	}
	return decodeValue(raw)
}

var strictSeeds = []string{
	`{}`, `[]`, `{"a":1}`, `{"city":"Oslo","n":9007199254740993}`, `{"a":{"b":[1,2,{"c":null}]}}`,
	`{"path":"/ok","PATH":"/etc/passwd"}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"k":1,"\u212a":2}`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\udc00\ud83d"`, `{"x":1e400}`, `{"x":1e-400}`, `{"x":-0}`, `{"x":0.1e1}`,
	`{"x":01}`, `{"x":1.}`, `{"x":.5}`, `{"x":"\u0000"}`, "{\"x\":\"\x01\"}", "{\"x\":\"\xff\"}", `{"x":tru}`,
	` {"a" : [ true , false , null ] } `, `{"a":1}x`, `{"a":"\/\b\f\n\r\t\\\""}`, `{"a":"\x"}`,
	`[[[[[[[[[[1]]]]]]]]]]`, `{"s":"é","É":1,"é":2}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"A":10}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"K":12}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"l":11,"m":12}`,
}

func TestDecodeStrictAgreesWithTwoPasses(t *testing.T) {
	for _, s := range strictSeeds {
		checkStrict(t, []byte(s))
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, s := range strictSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkStrict(t, raw) })
}

func checkStrict(t *testing.T, raw []byte) {
	t.Helper()
	got, gerr := decodeStrict(raw)
	want, werr := twoPass(raw)
	if !errors.Is(gerr, werr) && !(gerr == nil && werr == nil) {
		t.Fatalf("decodeStrict(%q) error %v, two passes %v", raw, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeStrict(%q) = %#v, two passes %#v", raw, got, want)
	}
}

// composed is the reading decodeArguments must agree with: decodeStrict of
// the whole params, then its "arguments" member.
func composed(params []byte) (any, error) {
	v, err := decodeStrict(params)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	a, ok := m["arguments"]
	if !ok {
		return map[string]any{}, nil
	}
	return a, nil
}

var argumentSeeds = []string{
	`{"name":"echo","arguments":{"text":"hello"}}`,
	`{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":7},"name":"echo","arguments":{"text":"hi"}}`,
	`{"name":"echo"}`, `[]`, `"x"`, `{"arguments":1}`, `{"arguments":{},"Arguments":{}}`,
	`{"arguments":{},"arguments":{}}`, `{"\u0061rguments":{"a":1},"arguments":{}}`,
	`{"_meta":{"a":1,"a":2},"arguments":{}}`, `{"_meta":{"k":1,"\u212a":2},"arguments":{}}`,
	`{"_meta":{"x":"\ud83d"},"arguments":{}}`, `{"_meta":[1,2,{"z":1e400}],"arguments":{}}`,
	`{"_meta":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"A":10},"arguments":{}}`,
	`{"_meta":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"j":11},"arguments":{}}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"ARGUMENTS":10,"arguments":{}}`,
	`{"arguments":{"x":"\u00e9"}} x`, ` {"arguments" : { "q" : [ 1 , "\n" ] } } `, `{"_meta":tru,"arguments":{}}`,
	`{"_meta":"\x","arguments":{}}`, "{\"_meta\":\"\xff\",\"arguments\":{}}", `{"_meta":{"\u0000":"\u0000"},"arguments":{}}`,
}

func TestDecodeArgumentsAgreesWithDecodeStrict(t *testing.T) {
	for _, s := range append(argumentSeeds, strictSeeds...) {
		checkArguments(t, []byte(s))
	}
}

func FuzzDecodeArguments(f *testing.F) {
	for _, s := range append(argumentSeeds, strictSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkArguments(t, raw) })
}

func checkArguments(t *testing.T, raw []byte) {
	t.Helper()
	got, gerr := decodeArguments(raw)
	want, werr := composed(raw)
	if !errors.Is(gerr, werr) && !(gerr == nil && werr == nil) {
		t.Fatalf("decodeArguments(%q) error %v, decodeStrict %v", raw, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArguments(%q) = %#v, decodeStrict %#v", raw, got, want)
	}
}
