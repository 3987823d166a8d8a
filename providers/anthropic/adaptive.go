package anthropic

import (
	"errors"
	"strings"

	"github.com/reefgw/reef/providers"
)

// Claude models from Opus 4.7 on take only adaptive thinking ({"type":"adaptive"} with
// output_config.effort): extended thinking with a budget gets a 400. The 4.6 models take
// both and have the budget form deprecated; the older ones take only the budget form.
// adaptiveModels are the model id prefixes known to want the adaptive form; a model not
// listed that refuses the budget form is learned from its 400 (see retryAdaptive).
var adaptiveModels = []string{
	"claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-opus-5", "claude-sonnet-5",
	"claude-mythos", "claude-fable",
}

// adaptive reports whether model gets the adaptive form of thinking.
func (c *Client) adaptive(model string) bool {
	if _, ok := c.learned.Load(model); ok {
		return true
	}
	m := strings.ToLower(model)
	m = m[strings.LastIndex(m, "/")+1:]     // "anthropic/claude-…" behind a router
	m = strings.TrimPrefix(m, "anthropic.") // Bedrock ids
	for _, p := range adaptiveModels {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// refusesBudget reports whether err is the 400 a model that takes only adaptive thinking
// gives a request with the budget form.
func refusesBudget(err error) bool {
	var apiErr *providers.APIError
	if !errors.Is(err, providers.ErrBadRequest) || !errors.As(err, &apiErr) {
		return false
	}
	m := strings.ToLower(apiErr.Message)
	return strings.Contains(m, "adaptive") && strings.Contains(m, "thinking")
}
