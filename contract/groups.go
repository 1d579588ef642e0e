package contract

// ToolGroupIDPrefix starts every tool atomic group id.
const ToolGroupIDPrefix = "runtime-tool-group:"

// BuildToolAtomicGroups derives the tool atomic groups of a canonical history.
//
// Every message holding a toolCall or toolResult block belongs to exactly one
// group: the messages connected by a tool call id (its call and all its
// results) are joined, so the calls of one assistant message — a parallel
// batch — always share a group. A group lists its message ids in history
// order and its tool call ids (including ids of results without a call) in
// UTF-16 order; it is complete when each of its ids has exactly one call, at
// least one result, and all of them inside the group. Its id is
// "runtime-tool-group:" plus the first 16 hex digits of the SHA-256 of its
// message ids joined by U+0000.
//
// Groups are ordered by their first message id, compared bytewise (ties keep
// history order). The TypeScript kit compares with localeCompare, whose order
// depends on the host's locale; byte order is the same on every machine.
//
// It runs in O(n log n) time for n messages (n log n only for sorting the
// groups; the grouping itself is near-linear union-find).
func BuildToolAtomicGroups(messages []Message) []ToolAtomicGroup {
	return newToolGraph(messages).groups()
}
