package jsonw

import (
	"encoding"
	"encoding/json"
	"reflect"
)

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// Document returns the bytes of a payload that is one JSON document given
// as bytes: a json.RawMessage, a []byte, a named byte-slice type, or a
// pointer to one, unless the type marshals itself (json.Marshaler,
// encoding.TextMarshaler). It reports false for anything else, which is
// encoded as a Go value. This is the contract's rule for payloads: the
// privacy engine and the bridge both read a payload through it, so that a
// []byte payload is never sent as base64 of a document nobody inspected.
func Document(payload any) ([]byte, bool) {
	if raw, ok := payload.(json.RawMessage); ok {
		return raw, true
	}
	v := reflect.ValueOf(payload)
	for v.IsValid() && v.Kind() == reflect.Pointer && !v.IsNil() &&
		!v.Type().Implements(marshalerType) && !v.Type().Implements(textMarshalerType) {
		v = v.Elem()
	}
	if v.IsValid() && v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 &&
		!v.Type().Implements(marshalerType) && !v.Type().Implements(textMarshalerType) {
		p := reflect.PointerTo(v.Type().Elem())
		if !p.Implements(marshalerType) && !p.Implements(textMarshalerType) {
			return v.Bytes(), true
		}
	}
	return nil, false
}
