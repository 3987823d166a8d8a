package openaiapi

import (
	"encoding/json"
	"fmt"
)

// requestOptions are the sampling options of a request that reef reads. The agent's run
// takes max_tokens (or max_completion_tokens) as a cap on each of its model calls; n and
// response_format it cannot honour, so a request asking for them is refused rather than
// answered otherwise than it asked. temperature, top_p, stop, seed and the penalties are
// accepted and ignored: the agent's model runs with its own settings.
type requestOptions struct {
	N                   *int            `json:"n"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	ResponseFormat      json.RawMessage `json:"response_format"`
}

// outputCap checks the options and returns the output cap they ask for (0: none).
func (o requestOptions) outputCap() (int, *apiError) {
	if o.N != nil && *o.N != 1 {
		return 0, badRequest("unsupported_n", fmt.Sprintf("n is %d; reef answers with one choice (n: 1)", *o.N))
	}
	if len(o.ResponseFormat) > 0 && string(o.ResponseFormat) != "null" {
		var rf struct{ Type string }
		if err := json.Unmarshal(o.ResponseFormat, &rf); err != nil {
			return 0, badRequest("invalid_response_format", "response_format must be an object with a type")
		}
		if rf.Type != "text" {
			return 0, badRequest("unsupported_response_format",
				fmt.Sprintf("response_format %q is not supported: reef's agents answer in text (ask for JSON in the message instead)", rf.Type))
		}
	}
	limit := o.MaxTokens
	if o.MaxCompletionTokens != nil {
		limit = o.MaxCompletionTokens
	}
	if limit == nil {
		return 0, nil
	}
	if *limit < 1 {
		return 0, badRequest("invalid_max_tokens", fmt.Sprintf("max_tokens is %d; it must be at least 1", *limit))
	}
	return *limit, nil
}
