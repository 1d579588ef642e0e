package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
)

// Break damages the history file as d says, as a careless program writing
// it would (conformance.SourceBreaker): a record SPEC §7 rejects, a record
// cut short, a record holding bytes that are not UTF-8, a blank line after
// the last record, or a header naming another runtime id or another
// existing project root (the root's parent folder). The file is replaced
// as a whole (written to a temporary file renamed over it), so a reader
// sees it before or after the damage.
func (p *historySource) Break(ctx context.Context, d conformance.Damage) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.keepWhole(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	data, err := os.ReadFile(p.path)
	if err != nil {
		return err
	}
	switch d.Kind {
	case conformance.DamageRecord, conformance.DamageTornRecord, conformance.DamageInvalidUTF8:
		if d.Message == nil {
			return fmt.Errorf("reference: the damage %s needs a message", d.Kind)
		}
		line, err := contract.AppendMessageJSON(append([]byte(nil), recordPrefix...), d.Message)
		if err != nil {
			return err
		}
		line = append(line, '}')
		switch d.Kind {
		case conformance.DamageRecord:
			data = append(append(data, line...), '\n')
		case conformance.DamageTornRecord:
			data = append(data, line[:len(line)/2]...)
		default:
			// A byte that is never UTF-8, at the start of the record's
			// first string value.
			at := bytes.Index(line[len(recordPrefix):], []byte(`":"`)) + len(recordPrefix) + 3
			line = append(line[:at:at], append([]byte{0xff}, line[at:]...)...)
			data = append(append(data, line...), '\n')
		}
	case conformance.DamageTrailing:
		data = append(data, '\n')
	case conformance.DamageIdentity, conformance.DamageRoot:
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return fmt.Errorf("reference: the history file has no header line")
		}
		h, err := decodeHeader(data[:end])
		if err != nil {
			return err
		}
		if d.Kind == conformance.DamageIdentity {
			h.RuntimeID += "-other"
		} else {
			h.ProjectRoot = filepath.Dir(h.ProjectRoot)
		}
		data = append(appendHeader(nil, &h), data[end+1:]...)
	default:
		return fmt.Errorf("reference: damage %q: %w", d.Kind, errors.ErrUnsupported)
	}
	return replaceFile(p.path, data)
}

// Repair writes back the file as it was before the first Corrupt or Break
// since it was last whole (conformance.SourceBreaker).
func (p *historySource) Repair(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.whole == nil {
		return nil
	}
	if err := replaceFile(p.path, p.whole); err != nil {
		return err
	}
	p.whole = nil
	return nil
}

// keepWhole saves the file's bytes before its first damage since it was
// last whole.
func (p *historySource) keepWhole() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.whole != nil {
		return nil
	}
	data, err := os.ReadFile(p.path)
	if err != nil {
		return err
	}
	p.whole = data
	return nil
}

// replaceFile writes data to a temporary file beside path, renamed over it.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".break-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(0o600), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
