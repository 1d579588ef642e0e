// Package jsonw is the kit's JSON wire layer: a strict, allocation-light scanner
// that reads object members in document order with case-sensitive names, and a
// writer whose output matches JavaScript's JSON.stringify byte for byte (no HTML
// or U+2028/U+2029 escaping, numbers written as JavaScript writes doubles).
//
// The contract types use it so that documents written by the Go kit are
// byte-identical to the TypeScript kit's, and so that decoding a large history
// is a single pass over its bytes. Flatten reads a document into a flat list of
// tokens in one scan, for callers (the privacy engine) that walk a document
// more than once.
package jsonw
