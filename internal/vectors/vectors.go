// Package vectors reads the cross-language test vectors of testdata/vectors:
// one JSON object per line, {"name", "input", "output"}, computed by the
// TypeScript kit. Tests in any package of the module use it to reproduce
// every output exactly.
package vectors

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Case is one vector: an input and the output the TypeScript kit computed.
type Case struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// Read returns every case of testdata/vectors/<file>, found by walking up
// from the working directory to the module root. It fails the test when the
// file is missing, malformed or empty: a vector test that reads nothing
// must not pass.
func Read(t testing.TB, file string) []Case {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("vectors: no go.mod above the working directory")
		}
		dir = parent
	}
	data, err := os.ReadFile(filepath.Join(dir, "testdata", "vectors", file))
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("vectors: %s line %d: %v", file, line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("vectors: %s holds no cases", file)
	}
	return cases
}

// Decode unmarshals the case's input into in and its output into out (either
// may be nil), failing the test on error.
func (c Case) Decode(t testing.TB, in, out any) {
	t.Helper()
	if in != nil {
		if err := json.Unmarshal(c.Input, in); err != nil {
			t.Fatalf("vectors: %s input: %v", c.Name, err)
		}
	}
	if out != nil {
		if err := json.Unmarshal(c.Output, out); err != nil {
			t.Fatalf("vectors: %s output: %v", c.Name, err)
		}
	}
}

// SameJSON reports whether a and b are the same JSON value (member order and
// formatting aside). It fails the test when either is not JSON.
func SameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("vectors: invalid JSON %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("vectors: invalid JSON %q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}
