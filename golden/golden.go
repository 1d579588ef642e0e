package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/sebdah/goldie/v2"
)

// UpdateEnv is the environment variable that makes Assert rewrite golden
// files instead of only comparing them: set it to "1" (or "true").
const UpdateEnv = "ADAPTERKIT_UPDATE_GOLDEN"

// DefaultDir is the folder, relative to the test's working directory (its
// package folder), that holds golden files.
const DefaultDir = "testdata"

// Suffix is the file name suffix of every golden file.
const Suffix = ".golden"

// ErrInvalidName is returned by Check for a golden name that is not a plain
// file name of lowercase letters, digits, '.', '_' and '-', starting with a
// letter or digit.
var ErrInvalidName = errors.New("golden: invalid golden name")

// ErrMissing is returned by Check when the golden file does not exist.
var ErrMissing = errors.New("golden: golden file is missing")

// ErrMismatch is returned by Check when the value differs from the golden file.
var ErrMismatch = errors.New("golden: value does not match the golden file")

// Option configures Assert and Check.
type Option func(*config)

type config struct {
	dir    string
	hint   string
	update bool
}

// Dir stores and reads golden files in dir instead of DefaultDir.
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// Hint adds a sentence to the failure message of a mismatch, saying what a
// difference means (for frozen values: that it is a new version, not an
// edit).
func Hint(hint string) Option { return func(c *config) { c.hint = hint } }

// Updating reports whether UpdateEnv asks for golden files to be rewritten.
func Updating() bool {
	switch os.Getenv(UpdateEnv) {
	case "1", "true", "TRUE", "True":
		return true
	}
	return false
}

// Marshal returns the golden form of value: its JSON indented by two
// spaces, with '<', '>' and '&' unescaped and a final newline. Values with
// their own MarshalJSON (the contract's wire types) are re-indented.
func Marshal(value any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(value); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Assert compares value's golden form (see Marshal) with the golden file
// name, and reports a difference, a missing file or an encoding failure
// with t.Errorf; it never stops the test. With UpdateEnv set it first
// rewrites the file. It works with *testing.T, *testing.B and Ginkgo's
// GinkgoTB().
func Assert(t testing.TB, name string, value any, opts ...Option) {
	t.Helper()
	if err := Check(t, name, value, opts...); err != nil {
		t.Errorf("%v", err)
	}
}

// Check is Assert returning the failure as an error instead of reporting
// it: nil when value matches the golden file. The error wraps ErrMismatch,
// ErrMissing or ErrInvalidName (or an encoding or file error), and its text
// holds the hint, a diff and how to update.
func Check(t testing.TB, name string, value any, opts ...Option) error {
	t.Helper()
	c := config{dir: DefaultDir, update: Updating()}
	for _, o := range opts {
		o(&c)
	}
	if !validName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	data, err := Marshal(value)
	if err != nil {
		return fmt.Errorf("golden %s: cannot encode the value: %w", name, err)
	}
	g := goldie.New(t, goldie.WithFixtureDir(c.dir), goldie.WithNameSuffix(Suffix))
	file := g.GoldenFileName(t, name)
	if c.update {
		if err := g.Update(t, name, data); err != nil {
			return fmt.Errorf("golden %s: cannot write %s: %w", name, file, err)
		}
	}
	want, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s; create it with %s=1 go test and review it", ErrMissing, file, UpdateEnv)
	}
	if err != nil {
		return fmt.Errorf("golden %s: %w", name, err)
	}
	// A checkout that converted line endings still matches.
	want = bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n"))
	if bytes.Equal(want, data) {
		return nil
	}
	msg := fmt.Sprintf("%s: %s differs from the golden file", ErrMismatch.Error(), file)
	if c.hint != "" {
		msg += "\n" + c.hint
	} else {
		msg += fmt.Sprintf("\nif the change is intended, rerun with %s=1 and review the diff", UpdateEnv)
	}
	msg += "\n" + goldie.Diff(goldie.ClassicDiff, string(data), string(want))
	return &mismatchError{msg: msg}
}

type mismatchError struct{ msg string }

func (e *mismatchError) Error() string { return e.msg }
func (e *mismatchError) Unwrap() error { return ErrMismatch }

// validName accepts lowercase file names: [a-z0-9][a-z0-9._-]*.
func validName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}
