package reference_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/reference"
)

func userMessage(session, entry, text string) contract.Message {
	return contract.Message{
		ID:            session + ":" + entry,
		SourceEntryID: entry,
		Role:          contract.RoleUser,
		Blocks:        []contract.Block{&contract.TextBlock{Text: text}},
		Provenance: contract.Provenance{
			Source:    contract.SourceRuntimeSession,
			SessionID: session,
			EntryID:   entry,
			RuntimeID: new(reference.DefaultRuntimeID),
		},
	}
}

// A runtime creates its history file once, appends to it as the
// conversation goes on, and hands the adapter the file and its project root.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "reference-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "history", "session.jsonl")

	h := reference.Header{SessionID: "s1", ProjectRoot: dir}
	if err := reference.CreateHistory(ctx, path, h, []contract.Message{userMessage("s1", "e1", "hello")}); err != nil {
		panic(err)
	}
	if err := reference.AppendMessage(ctx, path, userMessage("s1", "e2", "and more")); err != nil {
		panic(err)
	}

	a, err := reference.New(reference.Options{
		HistoryPath: path,
		ProjectRoot: dir,
		Transport: contract.TransportFunc(func(context.Context, contract.TransportRequest) (json.RawMessage, error) {
			return json.RawMessage(`"done"`), nil
		}),
	})
	if err != nil {
		panic(err)
	}
	defer a.Shutdown(ctx)
	s, err := a.SnapshotHistory(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.RuntimeID, s.SessionID, len(s.Messages), len(s.Revision))

	r := a.Complete(ctx, contract.CompletionRequest{Provider: "ollama", Model: "codestral", Payload: map[string]string{"prompt": "hi"}})
	fmt.Println(r.Status, r.Privacy.Destination, string(r.Output))
	// Output:
	// jsonl-reference s1 2 64
	// completed local "done"
}
