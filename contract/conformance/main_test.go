package conformance_test

import (
	"os"
	"testing"

	"github.com/ds4context/adapterkit/internal/testgc"
)

// The tests run the catalogue and the model many times over histories of
// thousands of messages; with the default collector a quarter of their
// CPU went to collecting them (about 28 s of CPU, 22 s with testgc's).
func TestMain(m *testing.M) { os.Exit(testgc.Run(m)) }
