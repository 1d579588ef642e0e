package build

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestGenerateIsDeterministic generates twice and compares every byte.
func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("file %s differs between two runs", a[i].Path)
		}
		if i > 0 && a[i-1].Path >= a[i].Path {
			t.Errorf("files not sorted: %s before %s", a[i-1].Path, a[i].Path)
		}
	}
}

func TestJSONFilesAreValidJSON(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if bytes.HasSuffix([]byte(f.Path), []byte(".json")) && !json.Valid(f.Data) {
			t.Errorf("%s is not valid JSON", f.Path)
		}
	}
}

func TestLayoutChangesWhitespaceOnly(t *testing.T) {
	in := `{"a":[1,{"b":"x,y:{[\"]}"}],"c":{},"d":[],"e":{"f":{"g":[true,null]}}}`
	got := string(layout([]byte(in), 2))
	want := "{\n" +
		"  \"a\": [\n" +
		"    1,\n" +
		"    {\"b\":\"x,y:{[\\\"]}\"}\n" +
		"  ],\n" +
		"  \"c\": {},\n" +
		"  \"d\": [],\n" +
		"  \"e\": {\n" +
		"    \"f\": {\"g\":[true,null]}\n" +
		"  }\n" +
		"}\n"
	if got != want {
		t.Errorf("layout:\n%s\nwant\n%s", got, want)
	}
	var x, y any
	if err := json.Unmarshal([]byte(in), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	if !bytes.Equal(xb, yb) {
		t.Error("layout changed the value")
	}
}
