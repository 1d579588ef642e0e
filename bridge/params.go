package bridge

import (
	"encoding/json"
	"fmt"
)

// unmarshalParams decodes a request's params; absent params are an error.
func unmarshalParams(data []byte, v any) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: params are missing", ErrProtocol)
	}
	return json.Unmarshal(data, v)
}
