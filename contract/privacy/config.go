package privacy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ds4context/adapterkit/internal/jsstring"
)

// Config is a privacy policy. Its JSON form uses the runtime-adapter-v1
// field names.
type Config struct {
	// Enabled turns enforcement on. A disabled engine returns payloads
	// unchanged (still fully encoded and checked) with zero counts.
	Enabled bool `json:"enabled"`
	// DefaultClassification is the class of text that carries no marker.
	DefaultClassification Classification `json:"defaultClassification"`
	// LocalProviders names the providers that run locally; they receive
	// every class and no secret is redacted for them.
	LocalProviders []string `json:"localProviders"`
	// RemoteDefaultAllowed lists the classes a remote provider may receive
	// when RemoteProviders has no entry for it.
	RemoteDefaultAllowed []Classification `json:"remoteDefaultAllowed"`
	// RemoteProviders overrides the allowed classes per remote provider.
	RemoteProviders map[string][]Classification `json:"remoteProviders"`
	// RedactSecrets turns secret redaction on for remote destinations.
	RedactSecrets bool `json:"redactSecrets"`
}

// DefaultConfig returns the reference policy: enabled, default class
// normal, local providers ollama, llama-cpp and lmstudio, remote providers
// allowed normal and internal, no per-provider overrides, secrets redacted.
func DefaultConfig() Config {
	return Config{
		Enabled:               true,
		DefaultClassification: Normal,
		LocalProviders:        []string{"ollama", "llama-cpp", "lmstudio"},
		RemoteDefaultAllowed:  []Classification{Normal, Internal},
		RemoteProviders:       map[string][]Classification{},
		RedactSecrets:         true,
	}
}

// ErrInvalidConfig is wrapped by every error New returns for a bad Config.
var ErrInvalidConfig = errors.New("privacy: invalid configuration")

// classMask is a set of classes indexed by rank.
type classMask [len(classOrder)]bool

func (m classMask) list() []Classification {
	var out []Classification
	for i, ok := range m {
		if ok {
			out = append(out, classOrder[i])
		}
	}
	return out
}

func maskOf(field string, cs []Classification) (classMask, error) {
	var m classMask
	for _, c := range cs {
		if !c.Valid() {
			return m, fmt.Errorf("%w: %s lists an unknown classification %q", ErrInvalidConfig, field, string(c))
		}
		m[c.Rank()] = true
	}
	return m, nil
}

// compile validates c and returns its normalised form.
func (c Config) compile() (*Engine, error) {
	if !c.DefaultClassification.Valid() {
		return nil, fmt.Errorf("%w: unknown default classification %q", ErrInvalidConfig, string(c.DefaultClassification))
	}
	remoteDefault, err := maskOf("remoteDefaultAllowed", c.RemoteDefaultAllowed)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		enabled:       c.Enabled,
		def:           c.DefaultClassification,
		redact:        c.RedactSecrets,
		local:         make(map[string]struct{}, len(c.LocalProviders)),
		remoteDefault: remoteDefault,
		remote:        make(map[string]classMask, len(c.RemoteProviders)),
	}
	for _, name := range c.LocalProviders {
		e.local[normalizeProvider(name)] = struct{}{}
	}
	// Iterate in sorted order so that the error for a configuration with
	// several problems is deterministic.
	names := make([]string, 0, len(c.RemoteProviders))
	for name := range c.RemoteProviders {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		m, err := maskOf("remoteProviders", c.RemoteProviders[name])
		if err != nil {
			return nil, err
		}
		key := normalizeProvider(name)
		if _, dup := e.remote[key]; dup {
			return nil, fmt.Errorf("%w: two remoteProviders entries name the provider %q", ErrInvalidConfig, key)
		}
		e.remote[key] = m
	}
	return e, nil
}

// normalizeProvider is how provider names are compared: trimmed as
// JavaScript trims, then lower-cased.
func normalizeProvider(name string) string { return jsstring.Lower(jsstring.Trim(name)) }
