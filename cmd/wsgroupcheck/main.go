// Command wsgroupcheck reports what to look at when migrating code from
// golang.org/x/sync/errgroup to github.com/go-steal/steal/wsgroup.
//
// It reports each import of golang.org/x/sync/errgroup, with a suggested fix
// that imports github.com/go-steal/steal/wsgroup under the file's name for
// errgroup, so that the code compiles unchanged, and the code that relies on
// what wsgroup does differently, each with a link to the section of
// migrate.md that explains it. The checks are listed by wsgroupcheck -help
// (the Analyzer's documentation); README.md says what they miss and what
// they may report wrongly.
//
// Usage:
//
//	wsgroupcheck [-fix] [packages]
//	go vet -vettool=$(which wsgroupcheck) [packages]
package main

import "golang.org/x/tools/go/analysis/singlechecker"

func main() { singlechecker.Main(Analyzer) }
