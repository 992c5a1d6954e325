package access

// RequestModel returns the model a request names, as the access check
// reads it: from its path (GET /v1/models/{model}), or from its JSON body
// by the first of its endpoint's members that names one (an alias's
// target before its name), read through body only where the endpoint's
// body names models (never a blob upload). A body that is no JSON object
// names none. The upstream pool routes a request by it, so that a request
// goes to the upstream of the model its key was checked against.
func RequestModel(method, path string, body func() ([]byte, error)) (string, error) {
	ep := Classify(method, path)
	if ep.PathModel != "" || ep.Members == nil {
		return ep.PathModel, nil
	}
	raw, err := body()
	if err != nil {
		return "", err
	}
	for _, m := range ep.Members {
		if names, _ := BodyModels(raw, m); len(names) > 0 {
			return names[0], nil
		}
	}
	return "", nil
}
