package memadapter

import (
	"bytes"
	"encoding/json"
	"regexp"

	"github.com/ds4context/adapterkit/contract"
)

var (
	privateSegment = regexp.MustCompile(`(?is)\[ds4:(local-only|sensitive)\].*?\[/ds4:(local-only|sensitive)\]`)
	secretToken    = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`)
)

// sanitize encodes the payload and, for a remote provider, excludes private
// segments and redacts credential-shaped tokens in every string.
func sanitize(provider string, payload any) (contract.PrivacyResult, error) {
	raw, err := marshalPayload(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	res := contract.PrivacyResult{Provider: provider, Destination: contract.DestinationLocal, Payload: raw}
	if isLocal(provider) {
		return res, nil
	}
	res.Destination = contract.DestinationRemote
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return contract.PrivacyResult{}, err
	}
	v = walk(v, &res)
	out, err := json.Marshal(v)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	res.Changed = res.BlockedBlocks > 0 || res.SecretRedactions > 0
	if res.Changed {
		res.Payload = out
	}
	return res, nil
}

func walk(v any, res *contract.PrivacyResult) any {
	switch v := v.(type) {
	case string:
		s := privateSegment.ReplaceAllStringFunc(v, func(m string) string {
			res.BlockedBlocks++
			return "[DS4 " + privateSegment.FindStringSubmatch(m)[1] + " content excluded by privacy policy]"
		})
		return secretToken.ReplaceAllStringFunc(s, func(string) string {
			res.SecretRedactions++
			return "[REDACTED_SECRET]"
		})
	case []any:
		for i := range v {
			v[i] = walk(v[i], res)
		}
	case map[string]any:
		for k := range v {
			v[k] = walk(v[k], res)
		}
	}
	return v
}
