package build

import (
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/fixtures"
)

// writeReference writes messages as a reference history file of the
// fixture identity: the header, then one message record per line.
func writeReference(messages []contract.Message) ([]byte, error) {
	b := object(
		member{"type", str(referenceRecordType)},
		member{"runtimeId", str(fixtures.HistoryRuntimeID)},
		member{"sessionId", str(fixtures.HistorySessionID)},
		member{"projectRoot", str(fixtures.ProjectRoot)},
	)
	b = append(b, '\n')
	for i := range messages {
		b = append(b, `{"type":"message","message":`...)
		var err error
		if b, err = contract.AppendMessageJSON(b, &messages[i]); err != nil {
			return nil, err
		}
		b = append(b, "}\n"...)
	}
	return b, nil
}
