package canon_test

import (
	"errors"
	"fmt"

	"github.com/mcpseal/mcpseal/canon"
)

func ExampleTransform() {
	out, err := canon.Transform([]byte(`{ "b" : [1.0, 1E3, "\u00e9\/"], "a": -0 }`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"a":0,"b":[1,1000,"é/"]}
}

func ExampleTransform_duplicateKey() {
	_, err := canon.Transform([]byte(`{"name":"x","inputSchema":{"type":"object","type":"string"}}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, canon.ErrDuplicateKey))
	// Output:
	// canon: duplicate key at offset 43
	// true
}

func ExampleDigest() {
	// The SHA-256 of {"description":"Get the weather.","name":"get_weather"}.
	d, err := canon.Digest([]byte(`{"name": "get_weather", "description": "Get the weather."}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(d)
	// Output: 040c2d3c405f0ebbec2bf3461acd443c5cb1a1186a20af8ed8b4af96bee1ab79
}
