package mutants

import (
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/internal/jsstring"
)

// Families of the mutants of Pending, of their kin in the catalogue and of
// the legal variants: the kinds of input or interleaving the checks do not
// draw yet (or, for a legal variant, the latitude it takes).
const (
	// FamilyBounds: bounds a default run rarely or never reaches — 100
	// diagnostics, records of 1 MiB, raw JSON nested deeper than a few
	// levels, histories past a few thousand messages, tens of local KV
	// completions on one instance.
	FamilyBounds = "bounds"
	// FamilyErrors: the errors, reasons and diagnostics of operations
	// other than privacy enforcement, which SPEC §4 keeps free of history
	// text and payloads too.
	FamilyErrors = "errors"
	// FamilyConcurrency: operations of different kinds at the same time —
	// a snapshot during a source write, completions to a local and a
	// remote provider at once.
	FamilyConcurrency = "concurrency"
	// FamilyStrings: strings of the classes where Go and JavaScript differ
	// (trim, lower-casing, case folding, line ends, noncharacters).
	FamilyStrings = "strings"
	// FamilySources: canonical sources SPEC §7 and §12 make a snapshot
	// refuse, and in-place overwrites a cache can miss.
	FamilySources = "sources"
	// FamilyOutputs: transport outputs that are empty, over 1 MiB, deeply
	// nested or hold numbers Go's float64 cannot hold.
	FamilyOutputs = "outputs"
	// FamilyLocalKV: what the local KV port and controller are given.
	FamilyLocalKV = "local-kv"
	// FamilyTiming: when a completion may give up.
	FamilyTiming = "timing"
	// FamilyNaming: an adapter of its own name, which SPEC holds to the
	// contract and not to the reference adapter's own words (§9, §12).
	FamilyNaming = "naming"
	// FamilyPrivacyConfig: privacy configurations other than the default.
	FamilyPrivacyConfig = "privacy-config"
)

// familyCatalogue holds the mutants of Pending's families that the checks
// catch already: slips of the same kinds on input the checks do draw.
var familyCatalogue = []Mutant{
	{
		Name: "negotiation-reason-cut-at-200", Family: FamilyBounds,
		Breaks: "a declared reason is cut to 240 UTF-16 code units (§5 step 5); this adapter declares one of 231 and negotiates with its reasons cut to 200",
		Fails:  all(conformance.CheckNegotiation, conformance.CheckModel),
		wrap:   func(a contract.Adapter, _ *env) contract.Adapter { return reasonCut{decorator{a}} },
	},
	{
		Name: "skips-torn-last-line", Family: FamilySources,
		Breaks: "a history whose last line does not parse is corrupt (§4, §12: any failure rejects the whole file); this reader takes a last line that does not parse for a write still under way and leaves it out",
		Fails:  all(conformance.CheckSourceCorrupt, conformance.CheckModel),
		port:   watchReplays,
		wrap:   lenientWrap(tolerance{tornLastLine: true}),
		after:  lenientAfter,
	},
}

// longCompactionReason is the reason reasonCut declares compaction
// unsupported for: 231 UTF-16 code units.
const longCompactionReason = "this runtime compacts its history on its own schedule, outside any hook an adapter could call; " +
	"the context engine sees a compaction only as the summary message the runtime appends to the canonical history of the session afterwards."

// reasonCut declares compaction unsupported with a long reason, and
// negotiates with every declared reason normalised and cut to 200 UTF-16
// code units instead of 240.
type reasonCut struct{ decorator }

func (m reasonCut) CapabilityDeclarations() []contract.CapabilityDeclaration {
	ds := m.Adapter.CapabilityDeclarations()
	for i := range ds {
		if ds[i].ID == contract.CapabilityCompaction && !ds[i].Supported {
			ds[i].Reason = longCompactionReason
		}
	}
	return ds
}

func (m reasonCut) NegotiateCapabilities(reqs []contract.CapabilityRequest) contract.Negotiation {
	ds := m.CapabilityDeclarations()
	for i := range ds {
		ds[i].Reason = jsstring.Truncate(jsstring.Trim(jsstring.CollapseSpace(ds[i].Reason)), 200)
	}
	return contract.NegotiateCapabilities(ds, reqs)
}
