package conformance_test

import (
	"context"
	"fmt"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
)

// An adapter repository runs the seven cases on its factory and asserts the
// report, with no test framework at all.
func ExampleRun() {
	report, err := conformance.Run(context.Background(), memadapter.ConformanceFactory())
	if err != nil {
		fmt.Println("the run itself failed:", err)
		return
	}
	for _, c := range report.Cases {
		fmt.Println(c.ID, c.Passed)
	}
	fmt.Println("conformant:", conformance.Assert(report) == nil)
	// Output:
	// identity true
	// capabilities true
	// canonical-history true
	// rebuild true
	// privacy true
	// fallback true
	// lifecycle true
	// conformant: true
}

// Verify explains failures instead of reporting them: the rule, what was
// expected and what the adapter did.
func ExampleVerify() {
	if err := conformance.Verify(context.Background(), memadapter.ConformanceFactory()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("all seven cases passed")
	// Output: all seven cases passed
}
