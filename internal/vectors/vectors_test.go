package vectors

import "testing"

func TestReadFindsEveryVectorFile(t *testing.T) {
	for _, f := range []string{"groups.jsonl", "validate.jsonl", "negotiate.jsonl", "sanitize.jsonl",
		"eligibility.jsonl", "stable.jsonl", "reference-jsonl.jsonl"} {
		for _, c := range Read(t, f) {
			if c.Name == "" || len(c.Input) == 0 || len(c.Output) == 0 {
				t.Errorf("%s: incomplete case %+v", f, c.Name)
			}
		}
	}
}

func TestSameJSON(t *testing.T) {
	if !SameJSON(t, []byte(`{"a":1,"b":[true]}`), []byte(` {"b":[true], "a":1.0}`)) {
		t.Error("equal values reported different")
	}
	if SameJSON(t, []byte(`{"a":1}`), []byte(`{"a":"1"}`)) {
		t.Error("different values reported equal")
	}
}
