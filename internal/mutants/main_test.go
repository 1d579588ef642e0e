package mutants_test

import (
	"os"
	"testing"

	"github.com/ds4context/adapterkit/internal/testgc"
)

// The tests run the catalogue on every mutant in this process, and the
// catalogue allocates heavily (histories, reports, probes); with the
// default collector a third of their CPU went to collecting.
func TestMain(m *testing.M) { os.Exit(testgc.Run(m)) }
