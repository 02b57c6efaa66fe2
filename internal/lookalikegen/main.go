// Command lookalikegen writes gate/lookalike_table.go, the table the gate's
// look-alike check (gate/serverasks.go) folds server text with: every code
// point above ASCII that a person reads as ASCII letters. A code point is
// in it when its compatibility decomposition, marks dropped, then its
// UTS #39 skeleton (Unicode's confusables.txt, through
// github.com/mtibben/confusables), decomposed again with marks dropped,
// is one to three ASCII letters (I, |, 1 read as l; 0 as o; 3 as e; 4 as
// a; 5 as s); and when it is one of the letters confusables.txt leaves to
// their own script that still read as a Latin letter (small capitals, the
// Cyrillic letters drawn as small capitals, enclosed and squared letters).
//
//	go run ./internal/lookalikegen gate/lookalike_table.go
package main

import (
	"fmt"
	"log"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: lookalikegen OUTPUT.go")
	}
	if err := os.WriteFile(os.Args[1], Source(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "lookalikegen: wrote", os.Args[1])
}
