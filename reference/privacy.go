package reference

func defaultSanitizer(Options) (payloadSanitizer, error) {
	return nil, optionsError("no privacy engine")
}
