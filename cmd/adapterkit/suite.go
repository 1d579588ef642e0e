package main

import (
	"cmp"
	"io"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/spec"
)

// silentT is the testing.T stand-in RunSpecs needs outside go test: the
// results are read from the spec reports, not from it.
type silentT struct{}

func (silentT) Fail() {}

// runExtended runs the Ginkgo suite's extended checks (label "extended":
// negotiation for every request set, probes kept out of diagnostics, reads
// refused after shutdown, bounded diagnostics, concurrency, a declared
// embedding port), each on a fresh instance, and returns one row per check.
// Ginkgo allows this once per process.
func runExtended(factory conformance.Factory) []checkResult {
	var rows []checkResult
	ginkgo.ReportAfterEach(func(r ginkgo.SpecReport) {
		if slices.Contains(r.Labels(), spec.LabelExtended) {
			rows = append(rows, rowOf(r))
		}
	})
	spec.Describe(factory)
	gomega.RegisterFailHandler(ginkgo.Fail)
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = spec.LabelExtended
	suiteConfig.RandomizeAllSpecs = false
	reporterConfig.NoColor = true
	// The table is the report; Ginkgo's own reporter stays quiet.
	formatter.ColorableStdOut = io.Discard
	ginkgo.RunSpecs(silentT{}, spec.SuiteTitle+" extended checks", suiteConfig, reporterConfig)
	// Ginkgo shuffles; the table lists the checks in the suite's order, and
	// checks this command does not know yet after them, by name.
	slices.SortStableFunc(rows, func(a, b checkResult) int {
		return cmp.Or(cmp.Compare(orderOf(a.ID), orderOf(b.ID)), cmp.Compare(a.ID, b.ID))
	})
	return rows
}

// extendedOrder is the order the suite defines its extended checks in.
var extendedOrder = []string{"negotiation", "diagnostics-privacy", "closed", "bounded-diagnostics", "concurrency", "embedding-port",
	spec.LabelLocalKVHit, spec.LabelLocalKVChangedPrefix, spec.LabelLocalKVNonHit, spec.LabelLocalKVReplayFailure,
	spec.LabelLocalKVRemote, spec.LabelLocalKVMetadataOnly}

func orderOf(id string) int {
	if i := slices.Index(extendedOrder, id); i >= 0 {
		return i
	}
	return len(extendedOrder)
}

// rowOf turns a spec report into a row: the spec's own label, and for a
// failure the rule, expected and actual lines of its message (the kit's
// failure messages are metadata only; the go test rerun hint is left out).
func rowOf(r ginkgo.SpecReport) checkResult {
	id := spec.LabelExtended
	for _, l := range r.Labels() {
		if l != spec.LabelExtended && !strings.HasPrefix(l, spec.FeatureLabelPrefix) {
			id = l
		}
	}
	row := checkResult{ID: id, Kind: kindExtended, Duration: r.RunTime}
	switch {
	case r.State == types.SpecStatePassed:
		row.Passed = true
	case r.State == types.SpecStateSkipped:
		row.Passed, row.Skipped = true, true
		row.Note = "skipped: " + strings.TrimPrefix(firstLine(r.Failure.Message), "skipped, not passed: ")
	default:
		row.Code = id + "-assertion-failed"
		if r.State.Is(types.SpecStatePanicked) {
			row.Code = id + "-threw"
		}
		f := &conformance.Failure{Case: id, Code: row.Code}
		for _, line := range strings.Split(r.Failure.Message, "\n") {
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "rule:"):
				f.Rule = strings.TrimSpace(strings.TrimPrefix(line, "rule:"))
			case strings.HasPrefix(line, "expected:"):
				f.Expected = strings.TrimSpace(strings.TrimPrefix(line, "expected:"))
			case strings.HasPrefix(line, "actual:"):
				f.Actual = strings.TrimSpace(strings.TrimPrefix(line, "actual:"))
			}
		}
		if f.Rule == "" {
			f.Rule = conformance.Redact(firstLine(r.Failure.Message))
		}
		row.Failure = f
	}
	return row
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
