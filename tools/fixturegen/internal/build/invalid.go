package build

func invalidFiles() ([]File, error) { return nil, nil }
