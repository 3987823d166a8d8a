package configs

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// A key reef renames keeps working for one release under its old name: Load reads it as the
// new one and says so in Notes (reef doctor prints it, the gateway logs it at start). The
// release after drops the line, and the old name is then an unknown key.

// renamedKey is one renamed key. old is its path: keys separated by ".", "*" for any key of
// a map (providers.*.x), "[]" after a key whose value is a list (agents[].x); new is the
// last key's new name.
type renamedKey struct {
	old, new string
	since    string // the release that renamed it
}

// renamedKeys are the renamed keys of this release. None yet: a rename adds its line here,
// changes the struct tag, reef.example.yaml and the docs.
var renamedKeys []renamedKey

// rewriteRenamed renames, in a parsed document, every old key of keys to its new name and
// returns a note for each. A key set under both names keeps the new one.
func rewriteRenamed(doc *yaml.Node, keys []renamedKey) []string {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	var notes []string
	for _, k := range keys {
		renameAt(root, strings.Split(k.old, "."), "", k, &notes)
	}
	return notes
}

// renameAt follows segs from the mapping n (at path) and renames the last key.
func renameAt(n *yaml.Node, segs []string, path string, k renamedKey, notes *[]string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	if len(segs) == 1 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Value != segs[0] {
				continue
			}
			old, renamed := join(segs[0]), join(k.new)
			if mappingValue(n, k.new) != nil {
				n.Content = append(n.Content[:i], n.Content[i+2:]...)
				*notes = append(*notes, fmt.Sprintf("%s (line %d) was renamed %s in reef %s, which is also set: %s is ignored; remove it",
					old, key.Line, renamed, k.since, old))
				return
			}
			key.Value = k.new
			*notes = append(*notes, fmt.Sprintf("%s (line %d) was renamed %s in reef %s: the old name works until the next release; rename it in reef.yaml",
				old, key.Line, renamed, k.since))
			return
		}
		return
	}
	name, each := strings.CutSuffix(segs[0], "[]")
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if name != "*" && key.Value != name {
			continue
		}
		if !each {
			renameAt(val, segs[1:], join(key.Value), k, notes)
			continue
		}
		if val.Kind == yaml.SequenceNode {
			for j, el := range val.Content {
				renameAt(el, segs[1:], fmt.Sprintf("%s[%d]", join(key.Value), j), k, notes)
			}
		}
	}
}
