package memadapter

import (
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/privacy"
)

// engine is the privacy engine with the contract's default policy.
var engine = func() *privacy.Engine {
	e, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		panic(err) // the default configuration is valid
	}
	return e
}()

// sanitize sanitises payload for provider with the privacy engine; any
// failure is an error (fail closed).
func sanitize(provider string, payload any) (contract.PrivacyResult, error) {
	r, err := engine.SanitizePayload(provider, payload)
	if err != nil {
		return contract.PrivacyResult{}, err
	}
	return r.ForProvider(provider), nil
}
