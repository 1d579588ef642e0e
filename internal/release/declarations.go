package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/scanner"
	"go/token"
	"os"
	"sort"
	"strings"
)

// declarations returns the package-level declarations of f, parsed from
// src, the file file (relative to the module root) of package pkg (so
// too), each with the digest of its tokens.
func declarations(fset *token.FileSet, f *ast.File, src []byte, pkg, file string) []Declaration {
	toks := tokens(src)
	tf := fset.File(f.Pos())
	digest := func(n ast.Node) string {
		from, to := tf.Offset(n.Pos()), tf.Offset(n.End())
		h := sha256.New()
		i := sort.Search(len(toks), func(i int) bool { return toks[i].off >= from })
		for ; i < len(toks) && toks[i].off < to; i++ {
			h.Write([]byte(toks[i].text))
			h.Write([]byte{0})
		}
		return hex.EncodeToString(h.Sum(nil)[:12])
	}
	var out []Declaration
	add := func(name string, n ast.Node) {
		out = append(out, Declaration{Package: pkg, Name: name, File: file, Digest: digest(n)})
	}
	inits, blanks := 0, 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			switch {
			case d.Recv != nil && len(d.Recv.List) > 0:
				name = receiverName(d.Recv.List[0].Type) + "." + name
			case name == "init":
				inits++
				name = fmt.Sprintf("init#%d (%s)", inits, file)
			}
			add(name, d)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			// Every name of a group has the group's digest: a constant's
			// value may depend on its place in it (iota).
			for _, spec := range d.Specs {
				var names []*ast.Ident
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					names = []*ast.Ident{spec.Name}
				case *ast.ValueSpec:
					names = spec.Names
				}
				for _, id := range names {
					name := id.Name
					if name == "_" {
						blanks++
						name = fmt.Sprintf("_#%d (%s)", blanks, file)
					}
					add(name, d)
				}
			}
		}
	}
	return out
}

// receiverName is the name of a method's receiver type, without pointer
// or type parameters.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

// tok is one token of a file, by offset: its literal text, or its
// operator or keyword.
type tok struct {
	off  int
	text string
}

// tokens scans src into its tokens, comments and layout left out: a
// semicolon, written or inserted at a line end, is ";", and a semicolon or
// comma right before a closing bracket, which only layout puts there
// ("{ return x }" over one line or three, a list with one element a line),
// is dropped.
func tokens(src []byte) []tok {
	var s scanner.Scanner
	file := token.NewFileSet().AddFile("", -1, len(src))
	s.Init(file, src, nil, 0)
	var out []tok
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			return out
		}
		if t == token.RBRACE || t == token.RPAREN || t == token.RBRACK {
			if n := len(out); n > 0 && (out[n-1].text == ";" || out[n-1].text == ",") {
				out = out[:n-1]
			}
		}
		text := t.String()
		if lit != "" && t != token.SEMICOLON {
			text = lit
		}
		out = append(out, tok{off: file.Offset(pos), text: text})
	}
}

// buildConstraint returns the //go:build expression of the Go file path,
// or "" when it has none.
func buildConstraint(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case constraint.IsGoBuild(line):
			expr, err := constraint.Parse(line)
			if err != nil {
				return "", fmt.Errorf("%s: %w", path, err)
			}
			return expr.String(), nil
		case strings.HasPrefix(line, "package "):
			return "", nil
		}
	}
	return "", nil
}
