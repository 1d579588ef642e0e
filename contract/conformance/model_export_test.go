package conformance

// ModelCheck is the model check, for the tests of package conformance_test
// while it is not yet in the catalogue.
var ModelCheck = modelChecks()[0]
