package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// DecodeError reports wire JSON that does not have the contract's shape. Path
// names the offending member ("message.blocks[2].type").
type DecodeError struct {
	Path string
	Err  error
}

// Error describes the problem and where it is.
func (e *DecodeError) Error() string { return "contract: decode " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// ErrMissingField is wrapped by a DecodeError for a required member that is absent.
var ErrMissingField = errors.New("required member is missing")

// ErrUnknownBlockType is wrapped by a DecodeError for a block whose type is not one of the nine.
var ErrUnknownBlockType = errors.New("unknown block type")

// ErrInvalidEnum is wrapped by a DecodeError for a role or source outside its set.
var ErrInvalidEnum = errors.New("value is not one of the allowed values")

// decoder walks one document, tracking the path for error messages lazily: a
// path is only rendered when something fails.
type decoder struct {
	s    *jsonw.Scanner
	path []pathElem
}

type pathElem struct {
	name  string
	index int // used when name == ""
}

func (d *decoder) push(name string) { d.path = append(d.path, pathElem{name: name}) }
func (d *decoder) pushIndex(i int)  { d.path = append(d.path, pathElem{index: i}) }
func (d *decoder) pop()             { d.path = d.path[:len(d.path)-1] }

func (d *decoder) fail(err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return err
	}
	p := make([]byte, 0, 32)
	for i, e := range d.path {
		if e.name == "" {
			p = append(p, '[')
			p = strconv.AppendInt(p, int64(e.index), 10)
			p = append(p, ']')
			continue
		}
		if i > 0 {
			p = append(p, '.')
		}
		p = append(p, e.name...)
	}
	return &DecodeError{Path: string(p), Err: err}
}

// required tracks which required members of one object were seen.
type required struct {
	names []string
	seen  uint64 // bit i: names[i] was seen
}

// see records a member name.
func (r *required) see(name string) {
	for i, n := range r.names {
		if n == name {
			r.seen |= 1 << i
			return
		}
	}
}

// check returns the missing-member error of the first required member not
// seen, in the order of names, or nil.
func (r *required) check(d *decoder) error {
	for i, n := range r.names {
		if r.seen&(1<<i) == 0 {
			return d.missing(n)
		}
	}
	return nil
}

func (d *decoder) missing(name string) error {
	d.push(name)
	defer d.pop()
	return d.fail(ErrMissingField)
}

func (d *decoder) str(name string) (string, error) {
	v, err := d.s.String()
	if err != nil {
		d.push(name)
		defer d.pop()
		return "", d.fail(err)
	}
	return v, nil
}

func (d *decoder) optStr(name string) (*string, error) {
	v, err := d.str(name)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (d *decoder) num(name string) (*float64, error) {
	v, err := d.s.Number()
	if err != nil {
		d.push(name)
		defer d.pop()
		return nil, d.fail(err)
	}
	return &v, nil
}

func (d *decoder) boolean(name string) (bool, error) {
	v, err := d.s.Bool()
	if err != nil {
		d.push(name)
		defer d.pop()
		return false, d.fail(err)
	}
	return v, nil
}

func (d *decoder) optBool(name string) (*bool, error) {
	v, err := d.boolean(name)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (d *decoder) raw(name string) (json.RawMessage, error) {
	v, err := d.s.Raw()
	if err != nil {
		d.push(name)
		defer d.pop()
		return nil, d.fail(err)
	}
	return append(json.RawMessage(nil), v...), nil
}

// extra appends an unknown member, replacing an earlier one of the same name
// (a repeated name keeps its last value, as JSON.parse does).
func (d *decoder) extra(fields []Field, name string) ([]Field, error) {
	v, err := d.raw(name)
	if err != nil {
		return fields, err
	}
	for i := range fields {
		if fields[i].Name == name {
			fields[i].Value = v
			return fields, nil
		}
	}
	return append(fields, Field{Name: name, Value: v}), nil
}

func (d *decoder) object(name string, fn func(name string) error) error {
	if name != "" {
		d.push(name)
		defer d.pop()
	}
	if err := d.s.Object(fn); err != nil {
		return d.fail(err)
	}
	return nil
}

func (d *decoder) array(name string, fn func(i int) error) error {
	d.push(name)
	defer d.pop()
	err := d.s.Array(func(i int) error {
		d.pushIndex(i)
		err := fn(i)
		d.pop()
		if err != nil {
			return d.fail(err)
		}
		return nil
	})
	if err != nil {
		return d.fail(err)
	}
	return nil
}

func (d *decoder) strings(name string) ([]string, error) {
	out := []string{}
	err := d.array(name, func(int) error {
		v, err := d.s.String()
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, d.fail(err)
	}
	return out, nil
}

// decoders keeps decoders between documents, so that decoding a long
// history allocates neither a scanner, nor its table of member names, nor a
// path for every message. A decoder holds no part of a document once
// decodeWith returns: the scanner's names are owned strings, and what is
// decoded is copied out of the document.
var decoders = sync.Pool{New: func() any { return &decoder{s: jsonw.NewScanner(nil)} }}

func decodeWith(path string, data []byte, fn func(d *decoder) error) error {
	return decodeBy(path, func(s *jsonw.Scanner) { s.Reset(data) }, fn)
}

// decodeWithString is decodeWith over a document held in a string: the
// decoded strings may be parts of it (jsonw.Scanner.ResetString).
func decodeWithString(path string, data string, fn func(d *decoder) error) error {
	return decodeBy(path, func(s *jsonw.Scanner) { s.ResetString(data) }, fn)
}

func decodeBy(path string, reset func(*jsonw.Scanner), fn func(d *decoder) error) error {
	d := decoders.Get().(*decoder)
	defer func() {
		d.s.Release()
		d.path = d.path[:0]
		decoders.Put(d)
	}()
	reset(d.s)
	d.path = d.path[:0]
	d.push(path)
	if err := fn(d); err != nil {
		return d.fail(err)
	}
	if err := d.s.End(); err != nil {
		return d.fail(err)
	}
	return nil
}

// writer builds one JSON object, JSON.stringify style.
type writer struct {
	b   []byte
	n   int
	err error
}

func (w *writer) key(name string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = jsonw.AppendString(w.b, name)
	w.b = append(w.b, ':')
}

func (w *writer) str(name, v string) {
	w.key(name)
	w.b = jsonw.AppendString(w.b, v)
}

func (w *writer) optStr(name string, v *string) {
	if v != nil {
		w.str(name, *v)
	}
}

func (w *writer) boolean(name string, v bool) {
	w.key(name)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *writer) optBool(name string, v *bool) {
	if v != nil {
		w.boolean(name, *v)
	}
}

func (w *writer) num(name string, v *float64) {
	if v == nil || w.err != nil {
		return
	}
	w.key(name)
	w.b, w.err = jsonw.AppendNumber(w.b, *v)
	if w.err != nil {
		w.err = fmt.Errorf("contract: encode %s: %w", name, w.err)
	}
}

// raw writes a raw JSON value normalised as JSON.stringify(JSON.parse(v))
// would write it; nil is written as null.
func (w *writer) raw(name string, v json.RawMessage) {
	if w.err != nil {
		return
	}
	w.key(name)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	var err error
	w.b, err = jsonw.Normalize(w.b, v)
	if err != nil {
		w.err = fmt.Errorf("contract: encode %s: %w", name, err)
	}
}

func (w *writer) extras(fields []Field, reserved func(string) bool) {
	for _, f := range fields {
		if reserved(f.Name) {
			w.err = fmt.Errorf("contract: encode: extra field %q shadows a contract field", f.Name)
			return
		}
		w.raw(f.Name, f.Value)
	}
}

func (w *writer) strings(name string, vs []string) {
	w.key(name)
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = jsonw.AppendString(w.b, v)
	}
	w.b = append(w.b, ']')
}
