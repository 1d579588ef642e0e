package gen_test

import (
	"os"
	"testing"

	"github.com/ds4context/adapterkit/internal/testgc"
)

// The tests draw thousands of histories; with the default collector a
// third of their CPU went to collecting them (about 7 s of CPU, 4 s with
// testgc's).
func TestMain(m *testing.M) { os.Exit(testgc.Run(m)) }
