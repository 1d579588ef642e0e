package nodeadapter_test

import (
	"os"
	"testing"

	"github.com/ds4context/adapterkit/internal/testgc"
)

// The checks draw histories and payloads by the hundred on this side of
// the bridge; testgc's collector settings spend less CPU collecting them.
func TestMain(m *testing.M) { os.Exit(testgc.Run(m)) }
