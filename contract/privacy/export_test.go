package privacy

// MarkerFloorOf returns the marker-structure floor the engine computes for
// payload ("" when there is none), for the tests of package privacy_test.
func MarkerFloorOf(payload any) (Classification, error) {
	ws := getWork()
	defer ws.release()
	toks, _, err := encodePayload(payload, ws)
	if err != nil {
		return "", err
	}
	ws.toks = toks // what release clears
	return markerFloor(toks, true), nil
}
