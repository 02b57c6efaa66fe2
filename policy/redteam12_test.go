package policy

import (
	"strings"
	"testing"
)

func TestDecodeArgumentsEdgeVectorsRedteam12(t *testing.T) {
	var cases []string
	for _, n := range []int{62, 63, 64, 65, 66, 127, 128, 129, 255, 256, 257, 511, 512, 513} {
		deep := strings.Repeat("[", n) + strings.Repeat("]", n)
		deepo := strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
		cases = append(cases,
			`{"_meta":`+deep+`,"arguments":{}}`,
			`{"arguments":{"x":`+deep+`}}`,
			`{"_meta":`+deepo+`,"arguments":{}}`,
			`{"arguments":`+deepo+`}`,
		)
	}
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, k2 := range []string{"\u017f", "S", "s", "\u212a", "k", "K", "ARGUMENTS", "\\u0061rguments", "arguments", "\\u0041rguments"} {
		for i := 0; i <= 9; i++ {
			var b strings.Builder
			b.WriteString("{")
			for j := 0; j < i && j < len(keys); j++ {
				b.WriteString(`"` + keys[j] + `":1,`)
			}
			if i == 9 {
				b.WriteString(`"s":1,"k":2,`)
			}
			b.WriteString(`"` + k2 + `":{"q":1},"arguments":{"z":[1,2]}}`)
			cases = append(cases, b.String())
		}
	}
	cases = append(cases, `{"arguments":{}}`+"\x00", `{"arguments":{}} `, `{"arguments":{}}}`, `{"arguments":{},}`, `{,"arguments":{}}`,
		`{"arguments":-0}`, `{"arguments":{"n":1e309}}`, `{"_meta":1e309,"arguments":{}}`, `{"_meta":-01,"arguments":{}}`, `{"_meta":"\ud800\udc00","arguments":{}}`,
		`{"_meta":"\udc00\ud800","arguments":{}}`, "{\"_meta\":\"a\tb\",\"arguments\":{}}", `{"arguments":{"a":"\u0000"},"_meta":{"A":1,"a":1}}`)
	for _, c := range cases {
		checkArguments(t, []byte(c))
	}
}
