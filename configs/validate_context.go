package configs

import (
	"fmt"

	"github.com/reefgw/reef/agent"
)

// validateContext refuses models whose context window is under agent.MinContextWindow (the
// agent's model, its fallbacks and the models /model may switch to), and compaction settings that leave the conversation too
// little of a window.
func (c *Config) validateContext(v *validator, path string, a AgentConfig) {
	v.nonNegative(path+".compaction.reserveTokens", a.Compaction.ReserveTokens)
	v.nonNegative(path+".compaction.keepRecentTokens", a.Compaction.KeepRecentTokens)
	type use struct{ key, ref string }
	uses := []use{{path + ".model", a.Model}}
	for i, f := range a.Fallbacks {
		uses = append(uses, use{fmt.Sprintf("%s.fallbacks[%d]", path, i), f})
	}
	for i, m := range a.Models {
		uses = append(uses, use{fmt.Sprintf("%s.models[%d]", path, i), m})
	}
	for _, u := range uses {
		key, ref := u.key, u.ref
		if _, _, err := SplitModel(ref); err != nil {
			continue // reported by checkModelRef
		}
		w := c.Model(ref).ContextWindow
		if w < 0 {
			continue // reported as negative
		}
		if w < agent.MinContextWindow {
			v.addf("%s: agent %q uses model %s, whose context window is %d tokens; reef needs at least %d "+
				"(the system prompt, the tools, a summary and the recent messages must fit): choose a model "+
				"with a larger window, or set %s.contextWindow if the model's real window is larger",
				key, a.ID, ref, w, agent.MinContextWindow, joinMapKey("models", ref))
			continue
		}
		if r := a.Compaction.ReserveTokens; r > w/2 {
			v.addf("%s.compaction.reserveTokens: %d is more than half of the %d-token window of %s, "+
				"which leaves too little for the conversation: use at most %d, or 0 for the default",
				path, r, w, ref, w/2)
		}
	}
}
