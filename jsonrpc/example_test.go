package jsonrpc_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

func ExamplePeek() {
	frame := []byte(`{"jsonrpc":"2.0", "id":9007199254740993, "method":"tools/call", "params":{"name":"x"}, "trace":"t-1"}`)
	msg, err := jsonrpc.Peek(frame)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.Kind, msg.Method)
	fmt.Printf("id %s, key %s\n", msg.ID, jsonrpc.IDKey(msg.ID))
	fmt.Printf("params %s\n", msg.Params)
	// Output:
	// request tools/call
	// id 9007199254740993, key n:9007199254740993
	// params {"name":"x"}
}

func ExamplePeek_invalid() {
	// A second "id" would be read differently by different parsers.
	_, err := jsonrpc.Peek([]byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`))
	fmt.Println(errors.Is(err, jsonrpc.ErrInvalid), err)
	_, err = jsonrpc.Peek([]byte(`{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`))
	fmt.Println(errors.Is(err, jsonrpc.ErrSyntax), err)
	// Output:
	// true jsonrpc: invalid message: duplicate member name at offset 24
	// true jsonrpc: invalid JSON: data after value at offset 30
}

func ExampleReader() {
	stream := "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\r\n\n" + strings.Repeat("x", 100) + "\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}"
	r := jsonrpc.NewReader(strings.NewReader(stream), 64)
	for {
		frame, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
			fmt.Println("skipped:", err)
			continue
		}
		fmt.Printf("%s\n", frame)
	}
	// Output:
	// {"jsonrpc":"2.0","method":"a"}
	// skipped: jsonrpc: frame exceeds limit: longer than 64 bytes
	// {"jsonrpc":"2.0","method":"b"}
}

func ExampleNewError() {
	msg, _ := jsonrpc.Peek([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{}}`))
	w := jsonrpc.NewWriter(os.Stdout)
	w.Write(jsonrpc.NewError(msg.ID, -32001, "blocked by policy", nil))
	// Output:
	// {"jsonrpc":"2.0","id":1.5,"error":{"code":-32001,"message":"blocked by policy"}}
}

func ExampleMembers() {
	members, _ := jsonrpc.Members([]byte(`{"name":"echo", "arguments": { "text" : "hi" }}`))
	for _, m := range members {
		fmt.Printf("%s = %s\n", m.Key, m.Value)
	}
	// Output:
	// name = "echo"
	// arguments = { "text" : "hi" }
}
