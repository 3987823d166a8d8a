package configs

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// OpenClaw writes some agent keys in another shape than reef. reef accepts them, rewrites
// them to its own shape before decoding, and says so in Notes (reef doctor prints it):
//
//	agents[].skills: [a, b]                  → skills: {allow: [a, b]}
//	agents[].model: {primary: m, fallbacks}  → model: m, fallbacks: [...]
//	agents[].identity: {name: n}             → name: n

// rewriteAliases rewrites the aliases in a parsed document and returns a note for each.
func rewriteAliases(doc *yaml.Node) []string {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	agents := mappingValue(root, "agents")
	if agents == nil || agents.Kind != yaml.SequenceNode {
		return nil
	}
	var notes []string
	for i, a := range agents.Content {
		if a.Kind != yaml.MappingNode {
			continue
		}
		path := fmt.Sprintf("agents[%d]", i)
		if s := mappingValue(a, "skills"); s != nil && s.Kind == yaml.SequenceNode {
			*s = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: s.Line, Column: s.Column,
				Content: []*yaml.Node{scalar("allow", s.Line), cloneNode(s)}}
			notes = append(notes, path+".skills is a list (OpenClaw's form): read as skills.allow; write skills: {allow: [...]}")
		}
		if m := mappingValue(a, "model"); m != nil && m.Kind == yaml.MappingNode {
			primary, fallbacks := mappingValue(m, "primary"), mappingValue(m, "fallbacks")
			if primary != nil && primary.Kind == yaml.ScalarNode {
				*m = *cloneNode(primary)
				if fallbacks != nil && mappingValue(a, "fallbacks") == nil {
					a.Content = append(a.Content, scalar("fallbacks", fallbacks.Line), fallbacks)
				}
				notes = append(notes, path+".model is {primary, fallbacks} (OpenClaw's form): read as model and fallbacks; write model: provider/model and fallbacks: [...]")
			}
		}
		if id := mappingValue(a, "identity"); id != nil && id.Kind == yaml.MappingNode {
			name := mappingValue(id, "name")
			removeKey(a, "identity")
			if name != nil && name.Kind == yaml.ScalarNode && mappingValue(a, "name") == nil {
				a.Content = append(a.Content, scalar("name", name.Line), name)
			}
			notes = append(notes, path+".identity is OpenClaw's: its name is read as name, the rest is ignored; write name: instead")
		}
	}
	return notes
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func removeKey(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			return
		}
	}
}

func scalar(value string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: line}
}

func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	return &c
}
