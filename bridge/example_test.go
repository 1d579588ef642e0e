package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/ds4context/adapterkit/bridge"
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/reference"
)

// An adapter process is a conformance.Factory like any other: every
// instance is a contract.Adapter whose calls cross to the process.
func ExampleCommand() {
	factory := bridge.Command("node", "examples/node-adapter/adapter.mjs")
	inst, err := factory.Create(context.Background(), conformance.Setup{
		Fixture: conformance.NewFixture(),
		Transport: contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
			return json.RawMessage(`{"role":"assistant","content":"ok"}`), nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Cleanup(context.Background())
	fmt.Println(inst.Adapter.Identity().ContractVersion)
}

// A Go adapter's main package can expose its factory to any harness that
// speaks the protocol.
func ExampleServe() {
	if err := bridge.Serve(context.Background(), reference.NewConformanceFactory(), os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Pipe runs a factory through the protocol without a process.
func ExamplePipe() {
	ctx := context.Background()
	factory := bridge.Pipe(reference.NewConformanceFactory(), bridge.Options{})
	inst, err := factory.Create(ctx, conformance.Setup{
		Fixture: conformance.NewFixture(),
		Transport: contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
			return json.RawMessage(`"ok"`), nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Cleanup(ctx)
	snap, err := inst.Adapter.SnapshotHistory(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inst.Adapter.Identity().AdapterName)
	fmt.Println(len(snap.Messages), "messages,", len(snap.ToolAtomicGroups), "tool atomic group")
	// Output:
	// ds4-context-reference-adapter-go
	// 4 messages, 1 tool atomic group
}
