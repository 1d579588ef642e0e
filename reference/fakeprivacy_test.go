package reference

import (
	"encoding/json"
	"strings"

	"github.com/ds4context/adapterkit/contract"
)

// passSanitizer stands in for the privacy engine in tests that do not
// exercise privacy: it encodes the payload and strips one probe word.
type passSanitizer struct{}

func (passSanitizer) sanitize(provider string, payload any) (contract.PrivacyResult, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	dest := contract.DestinationRemote
	if strings.EqualFold(strings.TrimSpace(provider), "ollama") {
		dest = contract.DestinationLocal
	}
	return contract.PrivacyResult{Provider: provider, Destination: dest, Payload: b}, nil
}
