// Package contract is runtime-adapter-v1: the boundary between a context
// engine and the agent runtime that hosts it.
//
// It holds the wire types (canonical messages and their nine block types,
// history snapshots, capability declarations and negotiation, diagnostics,
// privacy and completion requests and results), the Adapter interface a
// runtime implements, and three pure functions every adapter relies on:
// NegotiateCapabilities, BuildToolAtomicGroups and ValidateHistorySnapshot.
// It imports no test framework.
package contract
