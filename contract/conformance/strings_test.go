package conformance_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
	"github.com/ds4context/adapterkit/internal/jsstring"
	"github.com/ds4context/adapterkit/reference"
)

// Adapters that handle strings Go's way — trimmed with strings.TrimSpace,
// compared with strings.EqualFold or strings.ToLower, lines and Unicode
// normalised — where SPEC says JavaScript's way or says to keep them. Each
// slips only on the strings of one class of contract/gen's adversarial
// strings, and a default run of the check that draws them catches it.

// providerMatch reports whether an adapter takes the requested provider p
// for the configured provider name n.
type providerMatch func(p, n string) bool

// javaScriptMatch is SPEC §8's: trimmed as String.prototype.trim trims,
// lower-cased as toLowerCase lower-cases.
func javaScriptMatch(p, n string) bool { return jsstring.Lower(jsstring.Trim(p)) == jsstring.Lower(n) }

// trimmedBy matches as JavaScript does, except that the name is trimmed of
// the characters space reports.
func trimmedBy(space func(rune) bool) providerMatch {
	return func(p, n string) bool { return jsstring.Lower(strings.TrimFunc(p, space)) == jsstring.Lower(n) }
}

// loweredBy matches as JavaScript does, except that both names are
// lower-cased by lower.
func loweredBy(lower func(string) string) providerMatch {
	return func(p, n string) bool { return lower(jsstring.Trim(p)) == lower(n) }
}

// unconfigured is a provider name no configuration of these tests names:
// a remote provider under the default remote policy.
const unconfigured = "provider-no-configuration-names"

// givenProvider is the context key under which matchedNames passes the
// provider as the caller gave it to the transport.
type givenProvider struct{}

// matchedNames is an adapter that decides which configured provider a
// request names with its own match, and otherwise keeps the contract: the
// engine behind it sees the configured name the match found (or a name no
// configuration holds), while results and the transport carry the provider
// as given.
type matchedNames struct {
	contract.Adapter
	match providerMatch
	names []string
}

func (a matchedNames) configured(p string) string {
	if contract.IsBlank(p) {
		return p // the blank check is not what this adapter gets wrong
	}
	for _, n := range a.names {
		if a.match(p, n) {
			return n
		}
	}
	return unconfigured
}

func (a matchedNames) EnforcePrivacy(ctx context.Context, req contract.PrivacyRequest) (contract.PrivacyResult, error) {
	given := req.Provider
	req.Provider = a.configured(given)
	res, err := a.Adapter.EnforcePrivacy(ctx, req)
	if err == nil {
		res.Provider = given
	}
	return res, err
}

func (a matchedNames) Complete(ctx context.Context, req contract.CompletionRequest) contract.CompletionResult {
	given := req.Provider
	req.Provider = a.configured(given)
	r := a.Adapter.Complete(context.WithValue(ctx, givenProvider{}, given), req)
	if r.Status == contract.StatusCompleted {
		r.Privacy.Provider = given
	}
	return r
}

// namedBy returns base's factory with every adapter matching provider
// names by match against the names of its declared privacy configuration.
func namedBy(base conformance.Factory, match providerMatch) conformance.Factory {
	return conformance.NewFactory("named-by", func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		tr := setup.Transport
		setup.Transport = contract.TransportFunc(func(ctx context.Context, req contract.TransportRequest) (json.RawMessage, error) {
			if p, ok := ctx.Value(givenProvider{}).(string); ok {
				req.Provider = p
			}
			return tr.Send(ctx, req)
		})
		inst, err := base.Create(ctx, setup)
		if err != nil {
			return inst, err
		}
		cfg := privacy.DefaultConfig()
		if inst.PrivacyConfig != nil {
			cfg = *inst.PrivacyConfig
		}
		inst.Adapter = matchedNames{Adapter: inst.Adapter, match: match, names: slices.Concat(cfg.LocalProviders, slices.Sorted(maps.Keys(cfg.RemoteProviders)))}
		return inst, nil
	})
}

// localConfig is the default privacy configuration with one more local
// provider, whose name holds a letter a case trap needs: a k (the Kelvin
// sign lower-cases to it), a final sigma (a capital sigma ending a word
// lower-cases to it) or a double s (sharp s folds to it in full). Local, a
// name taken for another is a destination changed, whatever the payload.
func localConfig(name string) privacy.Config {
	cfg := privacy.DefaultConfig()
	cfg.LocalProviders = append(cfg.LocalProviders, name)
	return cfg
}

// configuredReference is the reference adapter enforcing cfg, without a
// source hook or a local KV port, under a name of its own (SPEC's rules for
// the reference adapter give it a port whenever one is offered).
func configuredReference(cfg privacy.Config) conformance.Factory {
	return conformance.NewFactory("reference with its own privacy configuration", func(ctx context.Context, setup conformance.Setup) (inst conformance.Instance, err error) {
		dir, err := os.MkdirTemp("", "adapterkit-strings-")
		if err != nil {
			return inst, err
		}
		cleanup := func(context.Context) error { return os.RemoveAll(dir) }
		defer func() {
			if err != nil {
				os.RemoveAll(dir)
			}
		}()
		root := filepath.Join(dir, "project")
		if err := os.Mkdir(root, 0o700); err != nil {
			return inst, err
		}
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return inst, err
		}
		fx := setup.Fixture
		path := filepath.Join(dir, "history", "session.jsonl")
		if err := reference.CreateHistory(ctx, path, reference.Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}, fx.Messages); err != nil {
			return inst, err
		}
		a, err := reference.New(reference.Options{HistoryPath: path, RuntimeID: fx.RuntimeID, ProjectRoot: root, Model: &fx.Model, Transport: setup.Transport, Privacy: &cfg})
		if err != nil {
			return inst, err
		}
		return conformance.Instance{Adapter: renamed{a}, ExpectedProjectRoot: root, Cleanup: cleanup, PrivacyConfig: &cfg}, nil
	})
}

// renamed is an adapter under another name than the reference's.
type renamed struct{ contract.Adapter }

func (a renamed) Identity() contract.Identity {
	id := a.Adapter.Identity()
	id.AdapterName = "reference-with-its-own-privacy-configuration"
	return id
}

// providerSample says which of the nine tests below, of provider names Go
// and JavaScript trim or case differently, run by default: one Go-only
// space, one case folding, one configured name. Each is the same model run
// against another wrapper; the other six run in the long form.
const providerSample = "of the provider-name tests, TrimmedOfNextLine, ComparedWithEqualFold and LowerCasedWithGoBeforeAFinalSigma run"

// modelCatches runs the model check at its default size on f and
// requires it to fail on what enforcement decided: a result or what the
// transport received.
func modelCatches(t *testing.T, f conformance.Factory) {
	t.Helper()
	c, _ := conformance.CheckByID(conformance.CheckModel)
	r := c.Run(ctx, f, conformance.WithoutShrinking(), conformance.WithSeed(1))
	if r.Status != conformance.StatusFail || !strings.Contains(r.Failure.Rule, "§8") && !strings.Contains(r.Failure.Rule, "§9") {
		t.Fatalf("model: %s %+v", r.Status, r.Failure)
	}
	t.Log(r.Failure.Rule, r.Failure.Actual)
}

// The wrappers themselves keep the contract when they match as JavaScript
// does: what the tests below catch is the match alone (a short run, to
// keep the test cheap).
func TestMatchingProvidersAsJavaScriptPassesTheModel(t *testing.T) {
	t.Parallel()
	c, _ := conformance.CheckByID(conformance.CheckModel)
	cfg := localConfig("koboldcpp")
	cfg.RemoteProviders = map[string][]privacy.Classification{"\u03b5\u03c1\u03bc\u03b7\u03c2": {privacy.Sensitive}, "massive-ai": {privacy.Sensitive}} // ερμης
	r := c.Run(ctx, namedBy(configuredReference(cfg), javaScriptMatch), conformance.WithSeed(1), conformance.WithModelSteps(300))
	if r.Status != conformance.StatusPass {
		t.Fatalf("model: %s %+v", r.Status, r.Failure)
	}
}

// JavaScript-only space: Go's strings.TrimSpace keeps U+FEFF, so
// "\ufeffollama" is no local provider to it.
func TestModelCatchesProvidersTrimmedWithoutTheByteOrderMark(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	modelCatches(t, namedBy(correct(), trimmedBy(func(r rune) bool { return jsstring.IsSpace(r) && r != '\ufeff' })))
}

// Go-only space: strings.TrimSpace trims U+0085, so "ollama\u0085" is
// local to it (also with U+FEFF trimmed, as an adapter aware of byte order
// marks trims).
func TestModelCatchesProvidersTrimmedOfNextLine(t *testing.T) {
	t.Parallel()
	modelCatches(t, namedBy(correct(), trimmedBy(func(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' })))
}

// Space look-alikes: a whitespace table from before Unicode 6.3 holds
// U+180E, which JavaScript's trim keeps.
func TestModelCatchesProvidersTrimmedOfTheMongolianVowelSeparator(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	modelCatches(t, namedBy(correct(), trimmedBy(func(r rune) bool { return jsstring.IsSpace(r) || r == '\u180e' })))
}

// Case trap, long s: strings.EqualFold folds ſ onto s, so "lmſtudio" is
// local to it.
func TestModelCatchesProvidersComparedWithEqualFold(t *testing.T) {
	t.Parallel()
	modelCatches(t, namedBy(correct(), func(p, n string) bool { return strings.EqualFold(jsstring.Trim(p), n) }))
}

// Case trap, capital I with dot: strings.ToLower makes "LMSTUDİO"
// "lmstudio", toLowerCase "lmstudi̇o".
func TestModelCatchesProvidersLowerCasedWithGo(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	modelCatches(t, namedBy(correct(), loweredBy(strings.ToLower)))
}

// Case trap, dotless i: strings.ToUpper makes "lmstudıo" "LMSTUDIO".
func TestModelCatchesProvidersComparedUpperCased(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	modelCatches(t, namedBy(correct(), loweredBy(strings.ToUpper)))
}

// Case trap, Kelvin sign: toLowerCase makes "\u212aOBOLDCPP" "koboldcpp",
// a configured local provider; an ASCII lower-casing does not.
func TestModelCatchesProvidersLowerCasedAsASCII(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	ascii := func(s string) string {
		return strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, s)
	}
	modelCatches(t, namedBy(configuredReference(localConfig("koboldcpp")), loweredBy(ascii)))
}

// Case trap, capital sigma: toLowerCase makes "ΕΡΜΗΣ" "ερμης", the
// configured name; strings.ToLower makes it "ερμησ".
func TestModelCatchesProvidersLowerCasedWithGoBeforeAFinalSigma(t *testing.T) {
	t.Parallel()
	lower := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307")) }
	modelCatches(t, namedBy(configuredReference(localConfig("\u03b5\u03c1\u03bc\u03b7\u03c2")), loweredBy(lower))) // ερμης
}

// Case trap, sharp s: full case folding makes "maßive-ai" the configured
// "massive-ai"; toLowerCase keeps the ß.
func TestModelCatchesProvidersCaseFoldedInFull(t *testing.T) {
	longOnly(t, providerSample)
	t.Parallel()
	fold := func(s string) string { return strings.ReplaceAll(jsstring.Lower(s), "\u00df", "ss") }
	modelCatches(t, namedBy(configuredReference(localConfig("massive-ai")), loweredBy(fold)))
}

// rewritten is an adapter whose snapshots pass through edit.
type rewritten struct {
	contract.Adapter
	edit func(*contract.HistorySnapshot)
}

func (a rewritten) SnapshotHistory(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.SnapshotHistory(ctx)
	if err == nil {
		a.edit(&s)
	}
	return s, err
}

func (a rewritten) RebuildDerivedState(ctx context.Context) (contract.HistorySnapshot, error) {
	s, err := a.Adapter.RebuildDerivedState(ctx)
	if err == nil {
		a.edit(&s)
	}
	return s, err
}

// editTexts applies edit to every text, thinking and tool result content
// of s.
func editTexts(s *contract.HistorySnapshot, edit func(string) string) {
	for i := range s.Messages {
		for _, b := range s.Messages[i].Blocks {
			switch b := b.(type) {
			case *contract.TextBlock:
				b.Text = edit(b.Text)
			case *contract.ThinkingBlock:
				b.Thinking = edit(b.Thinking)
			case *contract.ToolResultBlock:
				b.Content = edit(b.Content)
			}
		}
	}
}

// projectionCatches runs the projection check at its default size on
// correct()'s adapters with their snapshots edited, and requires it to
// fail.
func projectionCatches(t *testing.T, edit func(*contract.HistorySnapshot)) {
	t.Helper()
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter { return rewritten{a, edit} }, new(int))
	c, _ := conformance.CheckByID(conformance.CheckProjection)
	if r := c.Run(ctx, f, conformance.WithoutShrinking()); r.Status != conformance.StatusFail {
		t.Fatalf("projection: %s %q %+v", r.Status, r.Note, r.Failure)
	}
}

// Go-only space: an adapter that skips the entries whose id is blank by
// strings.TrimSpace drops one whose entry id is U+0085 and spaces.
func TestProjectionCatchesEntriesSkippedAsBlankByGo(t *testing.T) {
	t.Parallel()
	projectionCatches(t, func(s *contract.HistorySnapshot) {
		s.Messages = slices.DeleteFunc(s.Messages, func(m contract.Message) bool { return strings.TrimSpace(m.Provenance.EntryID) == "" })
		s.ToolAtomicGroups = contract.BuildToolAtomicGroups(s.Messages)
	})
}

// Carriage return: an adapter that normalises line endings in texts.
func TestProjectionCatchesNormalisedLineEndings(t *testing.T) {
	t.Parallel()
	projectionCatches(t, func(s *contract.HistorySnapshot) {
		editTexts(s, strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace)
	})
}

// Combining mark: an adapter that composes texts (NFC) the way it knows.
func TestProjectionCatchesComposedTexts(t *testing.T) {
	t.Parallel()
	projectionCatches(t, func(s *contract.HistorySnapshot) {
		editTexts(s, strings.NewReplacer("e\u0301", "\u00e9", "A\u030a", "\u00c5", "\u212b", "\u00c5").Replace)
	})
}

// Noncharacter: an adapter that replaces noncharacters in texts with
// U+FFFD.
func TestProjectionCatchesReplacedNoncharacters(t *testing.T) {
	t.Parallel()
	projectionCatches(t, func(s *contract.HistorySnapshot) {
		editTexts(s, func(x string) string {
			return strings.Map(func(r rune) rune {
				if r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe {
					return unicode.ReplacementChar
				}
				return r
			}, x)
		})
	})
}

// A mime type lower-cased, as mime.ParseMediaType returns it: the model
// appends image blocks by the dozen (the projection's histories hold a few).
func TestModelCatchesLowerCasedMimeTypes(t *testing.T) {
	t.Parallel()
	f := wrapped(func(a contract.Adapter, _ conformance.Setup) contract.Adapter {
		return rewritten{a, func(s *contract.HistorySnapshot) {
			for i := range s.Messages {
				for _, b := range s.Messages[i].Blocks {
					if img, ok := b.(*contract.ImageBlock); ok && img.MimeType != nil {
						img.MimeType = new(strings.ToLower(*img.MimeType))
					}
				}
			}
		}}
	}, new(int))
	c, _ := conformance.CheckByID(conformance.CheckModel)
	if r := c.Run(ctx, f, conformance.WithoutShrinking(), conformance.WithSeed(1)); r.Status != conformance.StatusFail {
		t.Fatalf("model: %s %+v", r.Status, r.Failure)
	}
}
