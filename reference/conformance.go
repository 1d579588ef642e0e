package reference

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// NewConformanceFactory returns the conformance factory of the reference
// adapter. Each Create makes a fresh temporary folder holding a project
// root and a history file written with CreateHistory from the fixture,
// and an adapter over them with the fixture's runtime id and model and the
// given transport. When the setup carries a local KV port, the adapter is
// configured with it, enabled, and prepares payloads with
// conformance.ReadLocalKVPrompt. The instance's cleanup removes the folder;
// its Source appends to the history file with AppendMessage, rewrites a
// message in place (it is a conformance.SourceRewriter) and corrupts the
// file by appending a line that does not parse; its PrivacyConfig is the default
// configuration the adapter enforces.
func NewConformanceFactory(opts ...FactoryOption) conformance.Factory {
	var cfg factoryConfig
	for _, o := range opts {
		o(&cfg)
	}
	name := AdapterName
	if cfg.embedding != nil {
		name += " with embedding port"
	}
	return conformance.NewFactory(name, func(ctx context.Context, setup conformance.Setup) (conformance.Instance, error) {
		return createConformanceInstance(ctx, setup, cfg)
	})
}

// FactoryOption configures NewConformanceFactory.
type FactoryOption func(*factoryConfig)

type factoryConfig struct {
	embedding contract.EmbeddingPort
}

// WithEmbeddingPort gives every adapter the factory creates this embedding
// port, so the suite's embedding checks run instead of being skipped.
func WithEmbeddingPort(port contract.EmbeddingPort) FactoryOption {
	return func(c *factoryConfig) { c.embedding = port }
}

func createConformanceInstance(ctx context.Context, setup conformance.Setup, cfg factoryConfig) (inst conformance.Instance, err error) {
	dir, err := os.MkdirTemp("", "ds4-reference-conformance-")
	if err != nil {
		return inst, err
	}
	cleanup := func(context.Context) error { return os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	rootPath := filepath.Join(dir, "project")
	if err := os.Mkdir(rootPath, 0o700); err != nil {
		return inst, err
	}
	root, err := resolveRoot(rootPath)
	if err != nil {
		return inst, err
	}
	fx := setup.Fixture
	path := filepath.Join(dir, "history", "session.jsonl")
	h := Header{RuntimeID: fx.RuntimeID, SessionID: fx.SessionID, ProjectRoot: root}
	if err := writeFixtureHistory(ctx, path, h, fx.Messages); err != nil {
		return inst, err
	}
	opts := Options{
		HistoryPath:   path,
		RuntimeID:     fx.RuntimeID,
		ProjectRoot:   root,
		Model:         &fx.Model,
		Transport:     setup.Transport,
		EmbeddingPort: cfg.embedding,
	}
	if setup.LocalKVPort != nil {
		opts.LocalKV = &LocalKVOptions{
			Enabled:         true,
			Port:            setup.LocalKVPort,
			RuntimeRevision: conformance.LocalKVRuntimeRevision,
			ModelRevision:   conformance.LocalKVModelRevision,
			Prepare:         prepareConformancePayload,
		}
	}
	a, err := New(opts)
	if err != nil {
		return inst, err
	}
	enforced := privacy.DefaultConfig()
	return conformance.Instance{Adapter: a, ExpectedProjectRoot: root, Cleanup: cleanup, Source: &historySource{path: path}, PrivacyConfig: &enforced}, nil
}

// writeFixtureHistory writes an instance's history as CreateHistory
// writes it, checks and bytes, but without its lock, temporary file and
// fsyncs: those make a runtime's new history whole and durable against
// other writers and power loss, while the instance's folder is its own
// and lives no longer than the instance. They were a tenth of the CPU of
// a catalogue run.
func writeFixtureHistory(ctx context.Context, path string, h Header, messages []contract.Message) error {
	data, _, _, err := prepareNew(ctx, path, h, messages, nil)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return writeError(createOp, path, "file cannot be created", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeError(createOp, path, "file cannot be written", err)
	}
	return nil
}

// historySource is the conformance Source of an instance: its history
// file. Append goes through AppendMessage; Corrupt appends a line that is
// not JSON, which is how a torn or damaged write looks to a reader; Break
// damages the file (see conformance_break.go) and Repair writes back the
// bytes it held before the first Corrupt or Break.
type historySource struct {
	path string
	mu   sync.Mutex
	// whole is the file as it was before the first Corrupt or Break since
	// it was last whole; nil when it is whole.
	whole []byte
}

// String is the history file's path.
func (p *historySource) String() string { return p.path }

func (p *historySource) Append(ctx context.Context, msg contract.Message) error {
	return AppendMessage(ctx, p.path, msg)
}

func (p *historySource) Corrupt(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.keepWhole(); err != nil {
		return err
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("{\"type\":\"message\",\"message\":\n"))
	return errors.Join(err, f.Close())
}

// prepareConformancePayload reads the payload shape of the local KV
// conformance checks.
func prepareConformancePayload(payload json.RawMessage) (LocalKVPrepared, bool) {
	p, ok := conformance.ReadLocalKVPrompt(payload)
	if !ok {
		return LocalKVPrepared{}, false
	}
	system, tool := p.Options()
	return LocalKVPrepared{PromptPrefix: []byte(p.Prefix), SystemOptions: system, ToolOptions: tool,
		PrefixTokenCount: p.PrefixTokens, ContextTokenCount: p.ContextTokens}, true
}
