package contract_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
	"pgregory.net/rapid"
)

// validationStep maps each code to the step of the validation order that
// reports it.
var validationStep = map[string]int{
	contract.CodeHistorySchemaIncompatible: 1,
	contract.CodeHistoryIdentityInvalid:    2,
	contract.CodeTrustedProjectRootMissing: 3,
	contract.CodeHistoryMessageIDDuplicate: 4,
	contract.CodeHistoryMessageIDMissing:   4,
	contract.CodeHistoryProvenanceInvalid:  4,
	contract.CodeToolCallIdentityInvalid:   5,
	contract.CodeToolResultOrphaned:        6,
	contract.CodeToolAtomicGroupInvalid:    7,
	contract.CodeToolAtomicMessageMissing:  7,
	contract.CodeToolAtomicMessageOverlap:  7,
	contract.CodeToolAtomicCallOverlap:     7,
	contract.CodeToolAtomicGroupMissing:    8,
	contract.CodeToolAtomicGroupMismatch:   8,
	contract.CodeToolAtomicCallUnknown:     9,
}

// codeOrder lists the codes in the order their constants are declared.
var codeOrder = []string{
	contract.CodeHistorySchemaIncompatible, contract.CodeHistoryIdentityInvalid, contract.CodeTrustedProjectRootMissing,
	contract.CodeHistoryMessageIDDuplicate, contract.CodeHistoryMessageIDMissing, contract.CodeHistoryProvenanceInvalid,
	contract.CodeToolCallIdentityInvalid, contract.CodeToolResultOrphaned, contract.CodeToolAtomicGroupInvalid,
	contract.CodeToolAtomicMessageMissing, contract.CodeToolAtomicMessageOverlap, contract.CodeToolAtomicCallOverlap,
	contract.CodeToolAtomicGroupMissing, contract.CodeToolAtomicGroupMismatch, contract.CodeToolAtomicCallUnknown,
}

func distinctCodes(issues []contract.ValidationIssue) []string {
	var out []string
	for _, c := range codeOrder {
		if slices.ContainsFunc(issues, func(is contract.ValidationIssue) bool { return is.Code == c }) {
			out = append(out, c)
		}
	}
	return out
}

func TestPropertyValidSnapshotsHaveNoIssues(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Snapshot().Draw(t, "snapshot")
		if issues := contract.ValidateHistorySnapshot(&s); len(issues) != 0 {
			t.Fatalf("valid snapshot has issues: %+v", issues)
		}
	})
}

func TestPropertyEveryMutationYieldsItsCodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := gen.MutatedSnapshot().Draw(t, "mutant")
		got := distinctCodes(contract.ValidateHistorySnapshot(&m.Snapshot))
		if !slices.Equal(got, m.Codes) {
			t.Fatalf("mutation %s: codes %v, want %v", m.Mutation, got, m.Codes)
		}
	})
}

// pooled draws from a small pool so that arbitrary snapshots still collide:
// ids shared between messages, groups and tool blocks, blank and empty
// strings and one large string.
var pool = []string{"", " ", "\u00a0", "a", "b", "s", "r", "s:a", "call-1", "runtime-history-v1", strings.Repeat("x", 1<<16)}

func pooled() *rapid.Generator[string] { return rapid.SampledFrom(pool) }

func arbitraryBlock() *rapid.Generator[contract.Block] {
	return rapid.Custom(func(t *rapid.T) contract.Block {
		switch rapid.IntRange(0, 4).Draw(t, "kind") {
		case 0:
			return &contract.ToolCallBlock{ID: pooled().Draw(t, "id")}
		case 1:
			return &contract.ToolResultBlock{ToolCallID: pooled().Draw(t, "id")}
		case 2:
			return nil
		default:
			return gen.Block().Draw(t, "block")
		}
	})
}

func arbitrarySnapshot() *rapid.Generator[contract.HistorySnapshot] {
	return rapid.Custom(func(t *rapid.T) contract.HistorySnapshot {
		s := contract.HistorySnapshot{
			SchemaVersion: pooled().Draw(t, "schema"),
			RuntimeID:     pooled().Draw(t, "runtime"),
			SessionID:     pooled().Draw(t, "session"),
			Revision:      pooled().Draw(t, "revision"),
			ProjectRoot:   pooled().Draw(t, "root"),
		}
		s.Messages = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) contract.Message {
			return contract.Message{
				ID:            pooled().Draw(t, "id"),
				SourceEntryID: pooled().Draw(t, "sourceEntry"),
				Role:          contract.Role(pooled().Draw(t, "role")),
				Blocks:        rapid.SliceOfN(arbitraryBlock(), 0, 4).Draw(t, "blocks"),
				Provenance: contract.Provenance{
					Source:    contract.Source(rapid.SampledFrom([]string{"", "runtime-session", "pi-session"}).Draw(t, "source")),
					SessionID: pooled().Draw(t, "provSession"),
					EntryID:   pooled().Draw(t, "entry"),
					RuntimeID: rapid.Ptr(pooled(), true).Draw(t, "provRuntime"),
				},
			}
		}), 0, 8).Draw(t, "messages")
		if rapid.Bool().Draw(t, "builtGroups") {
			s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
		}
		s.ToolAtomicGroups = append(s.ToolAtomicGroups, rapid.SliceOfN(rapid.Custom(func(t *rapid.T) contract.ToolAtomicGroup {
			return contract.ToolAtomicGroup{
				ID:          pooled().Draw(t, "groupId"),
				MessageIDs:  rapid.SliceOfN(pooled(), 0, 4).Draw(t, "messageIds"),
				ToolCallIDs: rapid.SliceOfN(pooled(), 0, 4).Draw(t, "toolCallIds"),
				Complete:    rapid.Bool().Draw(t, "complete"),
			}
		}), 0, 4).Draw(t, "groups")...)
		return s
	})
}

func TestPropertyValidationIsTotalAndOrdered(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := arbitrarySnapshot().Draw(t, "snapshot")
		issues := contract.ValidateHistorySnapshot(&s)
		if issues == nil {
			t.Fatal("issues are nil, want a (possibly empty) slice")
		}
		last := 0
		for _, is := range issues {
			step, ok := validationStep[is.Code]
			if !ok {
				t.Fatalf("unknown code %q", is.Code)
			}
			if step < last {
				t.Fatalf("issue %s of step %d after an issue of step %d", is.Code, step, last)
			}
			last = step
			if is.Message != contract.IssueMessage(is.Code) {
				t.Fatalf("issue %s has message %q", is.Code, is.Message)
			}
		}
		if again := contract.ValidateHistorySnapshot(&s); !slices.Equal(distinctCodes(again), distinctCodes(issues)) || len(again) != len(issues) {
			t.Fatal("validation is not deterministic")
		}
	})
}
