package privacy_test

import (
	"encoding/json"
	"fmt"

	"github.com/ds4context/adapterkit/contract/privacy"
)

func ExampleEngine_SanitizePayload() {
	engine, err := privacy.New(privacy.DefaultConfig())
	if err != nil {
		panic(err)
	}
	payload := json.RawMessage(`{"model":"m","messages":[{"role":"user",
		"content":"[ds4:local-only]customer list[/ds4:local-only] key sk-abcdefgh12345678"}]}`)
	res, err := engine.SanitizePayload("remote-llm", payload)
	if err != nil {
		panic(err) // fail closed: never send the payload
	}
	fmt.Println(string(res.Value))
	fmt.Println(res.Destination, res.Classification, res.BlockedBlocks, res.SecretRedactions)
	// Output:
	// {"model":"m","messages":[{"role":"user","content":"[DS4 local-only content excluded by privacy policy] key [DS4 REDACTED CREDENTIAL]"}]}
	// remote local-only 1 1
}
