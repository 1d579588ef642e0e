package contract_test

import (
	"os"
	"testing"

	"github.com/ds4context/adapterkit/internal/testgc"
)

// The property tests draw thousands of histories and payloads; with the
// default collector a third of their CPU went to collecting them (about
// 6 s of CPU, 4 s with testgc's).
func TestMain(m *testing.M) { os.Exit(testgc.Run(m)) }
