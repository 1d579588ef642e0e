package gen_test

import (
	"fmt"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/gen"
)

// The catalogue names every mutation and the validation codes it yields.
func ExampleMutations() {
	for _, m := range gen.Mutations {
		fmt.Printf("%-34s %s\n", m.Name, strings.Join(m.Codes, " "))
	}
	// Output:
	// schema-version-other               history-schema-incompatible
	// schema-version-empty               history-schema-incompatible
	// runtime-id-blank                   history-identity-invalid
	// session-id-blank                   history-identity-invalid
	// revision-blank                     history-identity-invalid
	// project-root-empty                 trusted-project-root-missing
	// project-root-blank                 trusted-project-root-missing
	// message-id-duplicate               history-message-id-duplicate
	// message-id-empty                   history-message-id-missing
	// message-id-blank                   history-message-id-missing
	// provenance-session-mismatch        history-provenance-invalid
	// provenance-entry-blank             history-provenance-invalid
	// provenance-source-entry-mismatch   history-provenance-invalid
	// provenance-runtime-id-mismatch     history-provenance-invalid
	// provenance-runtime-id-absent       history-provenance-invalid
	// tool-call-id-duplicate             tool-call-identity-invalid
	// tool-call-id-empty                 tool-call-identity-invalid
	// tool-call-id-blank                 tool-call-identity-invalid
	// tool-result-orphaned               tool-result-orphaned
	// tool-result-id-empty               tool-result-orphaned
	// group-id-blank                     tool-atomic-group-invalid
	// group-message-ids-empty            tool-atomic-group-invalid tool-atomic-group-mismatch
	// group-tool-call-ids-empty          tool-atomic-group-invalid tool-atomic-group-missing
	// group-message-unknown              tool-atomic-message-missing tool-atomic-group-mismatch
	// group-message-repeated             tool-atomic-message-overlap tool-atomic-group-mismatch
	// group-message-in-two-groups        tool-atomic-message-overlap tool-atomic-group-mismatch
	// group-call-repeated                tool-atomic-call-overlap
	// group-call-in-two-groups           tool-atomic-call-overlap tool-atomic-group-mismatch
	// group-dropped                      tool-atomic-group-missing
	// groups-absent                      tool-atomic-group-missing
	// group-complete-flipped             tool-atomic-group-mismatch
	// group-message-dropped              tool-atomic-group-mismatch
	// groups-stale-after-result-removed  tool-atomic-group-mismatch
	// group-call-unknown                 tool-atomic-call-unknown
}

// A fixture generator applies a mutation to a known snapshot, without rapid.
func ExampleMutation_Apply() {
	valid := contract.HistorySnapshot{
		SchemaVersion: contract.HistorySchemaVersion,
		RuntimeID:     "rt",
		SessionID:     "s1",
		Revision:      "1",
		ProjectRoot:   "/work/project",
		Messages:      gen.SyntheticHistory{RuntimeID: "rt", SessionID: "s1"}.Messages(5),
	}
	valid.ToolAtomicGroups = contract.BuildToolAtomicGroups(valid.Messages)

	m, _ := gen.MutationByName("group-complete-flipped")
	broken := contract.CloneSnapshot(&valid)
	if m.Apply(&broken) {
		for _, issue := range contract.ValidateHistorySnapshot(&broken) {
			fmt.Println(issue.Code, *issue.ToolCallID)
		}
	}
	fmt.Println(len(contract.ValidateHistorySnapshot(&valid)), "issues in the original")
	// Output:
	// tool-atomic-group-mismatch call-0-0
	// 0 issues in the original
}
