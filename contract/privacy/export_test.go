package privacy

// MarkerFloorOf returns the marker-structure floor the engine computes for
// payload ("" when there is none), for the tests of package privacy_test.
func MarkerFloorOf(payload any) (Classification, error) {
	toks, _, err := encodePayload(payload)
	if err != nil {
		return "", err
	}
	return markerFloor(toks, true), nil
}
