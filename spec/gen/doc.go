// Package gen provides generators of canonical histories, history snapshots
// and capability declarations for property-based tests with
// pgregory.net/rapid, and deterministic synthetic histories for benchmarks
// and long fixtures. Adapter repositories use it to fuzz their own adapters.
package gen
