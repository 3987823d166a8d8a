package actors

import (
	"sort"
	"strings"
)

// minSecret is the shortest value treated as a secret: shorter ones would redact ordinary words.
const minSecret = 8

// redactor replaces the gateway's secret values (API keys, bot tokens) in text that reaches a
// transcript, an LLM request or a platform: tool output can contain them (a command may read
// the gateway's environment), and redacting at that source keeps every later copy clean.
type redactor struct{ r *strings.Replacer }

func newRedactor(secrets []string) redactor {
	uniq := map[string]bool{}
	for _, s := range secrets {
		if len(s) >= minSecret {
			uniq[s] = true
		}
	}
	if len(uniq) == 0 {
		return redactor{}
	}
	list := make([]string, 0, len(uniq))
	for s := range uniq {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) }) // longest first
	pairs := make([]string, 0, 2*len(list))
	for _, s := range list {
		pairs = append(pairs, s, "[redacted]")
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) apply(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
