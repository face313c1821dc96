// Command funcstat prints the longest functions of Go packages: lines and
// cyclomatic complexity (1 + branches: if, for, range, case, comm clause,
// && and ||) per function, longest first. Test files are skipped.
//
//	go run ./internal/cmd/funcstat -n 15 ./sia ./ilp
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stat is one function's figures.
type stat struct {
	name         string
	lines, cyclo int
}

func main() {
	n := flag.Int("n", 15, "functions to print per directory")
	flag.Parse()
	for _, dir := range flag.Args() {
		stats, err := dirStats(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "funcstat:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d functions\n%-48s %6s %6s\n", dir, len(stats), "function", "lines", "cyclo")
		for i, s := range stats {
			if i == *n {
				break
			}
			fmt.Printf("%-48s %6d %6d\n", s.name, s.lines, s.cyclo)
		}
	}
}

// dirStats returns the figures of the non-test functions in dir, longest
// first (ties by name).
func dirStats(dir string) ([]stat, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []stat
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out = append(out, stat{
				name:  funcName(fd),
				lines: fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1,
				cyclo: cyclomatic(fd),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lines != out[j].lines {
			return out[i].lines > out[j].lines
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// cyclomatic counts 1 + the decision points of fd, including those of its
// function literals.
func cyclomatic(fd *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
