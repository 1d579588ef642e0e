package conformance

import (
	"context"

	"github.com/ds4context/adapterkit/contract/privacy"
)

// CaseResult is a case's result, for the external tests.
type CaseResult = caseResult

// PrivacyProbesCase runs checkPrivacyProbes with n payloads from seed, as a
// case, so that its failure is formatted as a run formats it.
func PrivacyProbesCase(ctx context.Context, s *Session, seed uint64, n int) CaseResult {
	return contractCase{id: "privacy-probes", check: func(ctx context.Context, s *Session) error {
		return checkPrivacyProbesSeed(ctx, s, seed, n, false)
	}}.runCase(ctx, s)
}

// PrivacyProbesStrictCase is PrivacyProbesCase under WithStrictPrivacy.
func PrivacyProbesStrictCase(ctx context.Context, s *Session, seed uint64, n int) CaseResult {
	return contractCase{id: "privacy-probes", check: func(ctx context.Context, s *Session) error {
		return checkPrivacyProbesSeed(ctx, s, seed, n, true)
	}}.runCase(ctx, s)
}

// PrivacyProbesRandomCase runs checkPrivacyProbes itself (a fresh seed).
func PrivacyProbesRandomCase(ctx context.Context, s *Session) CaseResult {
	return contractCase{id: "privacy-probes", check: checkPrivacyProbes}.runCase(ctx, s)
}

// PrivacyEngineCase runs checkPrivacyEngine under cfg with n payloads
// from seed, as a case.
func PrivacyEngineCase(ctx context.Context, s *Session, cfg privacy.Config, seed uint64, n int) CaseResult {
	return contractCase{id: "privacy-engine", check: func(ctx context.Context, s *Session) error {
		return checkPrivacyEngineSeed(ctx, s, cfg, seed, n, false)
	}}.runCase(ctx, s)
}

// PrivacyEngineStrictCase is PrivacyEngineCase under WithStrictPrivacy.
func PrivacyEngineStrictCase(ctx context.Context, s *Session, cfg privacy.Config, seed uint64, n int) CaseResult {
	return contractCase{id: "privacy-engine", check: func(ctx context.Context, s *Session) error {
		return checkPrivacyEngineSeed(ctx, s, cfg, seed, n, true)
	}}.runCase(ctx, s)
}

// PrivacyEngineRandomCase runs checkPrivacyEngine itself (a fresh seed).
func PrivacyEngineRandomCase(ctx context.Context, s *Session, cfg privacy.Config) CaseResult {
	return contractCase{id: "privacy-engine", check: func(ctx context.Context, s *Session) error {
		return checkPrivacyEngine(ctx, s, cfg)
	}}.runCase(ctx, s)
}

// PrivacyProbeTokens returns every token the batch of n payloads from seed
// plants (the fixture's provider given as provider).
func PrivacyProbeTokens(seed uint64, n int) []string {
	return newProbeBatch(seed, n, FixtureProvider).tokens()
}

// Batch sizes of one run.
const (
	PrivacyProbeCount  = privacyProbeCount
	PrivacyEngineCount = privacyEngineCount
)

// ContractCase runs the contract case with the given id on s.
func ContractCase(ctx context.Context, s *Session, id string) CaseResult {
	for _, c := range contractCases() {
		if c.id == id {
			return c.runCase(ctx, s)
		}
	}
	panic("no contract case " + id)
}
