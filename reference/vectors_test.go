package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"github.com/ds4context/adapterkit/internal/vectors"
)

type referenceVector struct {
	Name  string `json:"name"`
	Input struct {
		RuntimeID   string            `json:"runtimeId"`
		SessionID   string            `json:"sessionId"`
		ProjectRoot string            `json:"projectRoot"`
		Messages    []json.RawMessage `json:"messages"`
	} `json:"input"`
	Output struct {
		Create   struct{ OK bool } `json:"create"`
		FileText string            `json:"fileText"`
		Snapshot json.RawMessage   `json:"snapshot"`
	} `json:"output"`
}

func loadReferenceVectors(t *testing.T) []referenceVector {
	t.Helper()
	var out []referenceVector
	for _, c := range vectors.Read(t, "reference-jsonl.jsonl") {
		v := referenceVector{Name: c.Name}
		c.Decode(t, &v.Input, &v.Output)
		out = append(out, v)
	}
	return out
}

// TestReferenceVectors checks that the Go kit writes and reads history files
// exactly as the TypeScript kit does. The vectors' project root does not
// exist here, so the header is rewritten for a temporary root: every message
// line must match byte for byte, the snapshot must match the vector's except
// for projectRoot and revision, and the vector's revision must be the
// SHA-256 of its exact file text.
func TestReferenceVectors(t *testing.T) {
	for _, v := range loadReferenceVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			if !v.Output.Create.OK {
				t.Fatal("vector expects create to fail; this test only knows successful creates")
			}
			msgs := make([]contract.Message, len(v.Input.Messages))
			for i, raw := range v.Input.Messages {
				m, err := contract.DecodeMessage(raw)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				msgs[i] = m
			}
			e := newEnv(t)
			h := Header{RuntimeID: v.Input.RuntimeID, SessionID: v.Input.SessionID, ProjectRoot: e.root}
			if err := CreateHistory(context.Background(), e.path, h, msgs); err != nil {
				t.Fatal(err)
			}
			oldRoot := string(jsonw.AppendString(nil, v.Input.ProjectRoot))
			newRoot := string(jsonw.AppendString(nil, e.root))
			want := strings.Replace(v.Output.FileText, `"projectRoot":`+oldRoot+"}\n", `"projectRoot":`+newRoot+"}\n", 1)
			got := e.read(t)
			if string(got) != want {
				t.Fatalf("file text differs:\n got %q\nwant %q", got, want)
			}

			// Read the vector's own file text back (header rewritten).
			e2 := newEnv(t)
			text := strings.Replace(v.Output.FileText, `"projectRoot":`+oldRoot+"}\n", `"projectRoot":`+string(jsonw.AppendString(nil, e2.root))+"}\n", 1)
			e2.write(t, text)
			opts := e2.options(nil)
			opts.RuntimeID = v.Input.RuntimeID
			s, err := newAdapter(t, opts).SnapshotHistory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if s.Revision != revisionOf([]byte(text)) || s.ProjectRoot != e2.root {
				t.Fatalf("revision %s or root %s is not the file's", s.Revision, s.ProjectRoot)
			}
			var wantSnap contract.HistorySnapshot
			if err := json.Unmarshal(v.Output.Snapshot, &wantSnap); err != nil {
				t.Fatal(err)
			}
			if revisionOf([]byte(v.Output.FileText)) != wantSnap.Revision {
				t.Fatal("the vector's revision is not the SHA-256 of its file text")
			}
			s.Revision, s.ProjectRoot = wantSnap.Revision, wantSnap.ProjectRoot
			gotJSON, err := contract.AppendSnapshotJSON(nil, &s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotJSON, v.Output.Snapshot) {
				t.Fatalf("snapshot differs:\n got %s\nwant %s", gotJSON, v.Output.Snapshot)
			}
		})
	}
}

// TestReferenceVectorsExactRoot reads the vectors' file text unchanged when
// the machine has the project root the header names as a real directory, so
// that the revision can be compared too.
func TestReferenceVectorsExactRoot(t *testing.T) {
	for _, v := range loadReferenceVectors(t) {
		root, err := resolveRoot(v.Input.ProjectRoot)
		if err != nil || root != v.Input.ProjectRoot {
			t.Skipf("project root %s is not a canonical directory here; TestReferenceVectors covers the rest", v.Input.ProjectRoot)
		}
		e := newEnv(t)
		e.write(t, v.Output.FileText)
		opts := e.options(nil)
		opts.RuntimeID, opts.ProjectRoot = v.Input.RuntimeID, root
		s, err := newAdapter(t, opts).SnapshotHistory(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got, err := contract.AppendSnapshotJSON(nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, v.Output.Snapshot) {
			t.Fatalf("snapshot differs:\n got %s\nwant %s", got, v.Output.Snapshot)
		}
	}
}
