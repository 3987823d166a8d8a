package configs

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Edit sets one key of reef.yaml: Path names it from the top (a list item by its index,
// "agents", "0", "model"); Value is a string, or a []string for a list. The web UI's form
// for the common settings writes through these, so that the rest of the file, comments
// included, stays as the owner wrote it.
type Edit struct {
	Path  []string
	Value any
}

// envRef is a value that is only a ${NAME} reference.
var envRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// IsEnvRef reports whether s is a single ${NAME} reference: the only way the web UI writes
// a secret.
func IsEnvRef(s string) bool { return envRef.MatchString(s) }

// RawValue is the scalar at path as written in data, before ${ENV} expansion ("" and false
// when there is none).
func RawValue(data []byte, path ...string) (string, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return "", false
	}
	n := doc.Content[0]
	for _, key := range path {
		if n = child(n, key); n == nil {
			return "", false
		}
	}
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// ApplyEdits returns data with every edit made, creating the mappings (and list items) a
// path needs.
func ApplyEdits(data []byte, edits []Edit) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	for _, e := range edits {
		n := doc.Content[0]
		for _, key := range e.Path {
			next, err := childOrNew(n, key)
			if err != nil {
				return nil, fmt.Errorf("%v: %w", e.Path, err)
			}
			n = next
		}
		setValue(n, e.Value)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// child is the value under key in a mapping, or the item at index key in a list.
func child(n *yaml.Node, key string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// childOrNew is child, made when missing: a mapping entry in a mapping (or an empty node
// turned into one), the next item of a list (an empty mapping).
func childOrNew(n *yaml.Node, key string) (*yaml.Node, error) {
	if c := child(n, key); c != nil {
		return c, nil
	}
	if n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Value == "" && n.Tag != "!!str" {
		if _, err := strconv.Atoi(key); err == nil {
			*n = yaml.Node{Kind: yaml.SequenceNode}
		} else {
			*n = yaml.Node{Kind: yaml.MappingNode}
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		v := &yaml.Node{}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
		return v, nil
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(key); err == nil && i == len(n.Content) {
			v := &yaml.Node{Kind: yaml.MappingNode}
			n.Content = append(n.Content, v)
			return v, nil
		}
	}
	return nil, fmt.Errorf("cannot set %q here", key)
}

func setValue(n *yaml.Node, v any) {
	switch v := v.(type) {
	case []string:
		*n = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range v {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s, Style: quoteStyle(s)})
		}
	case string:
		*n = yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: quoteStyle(v)}
	}
}

// quoteStyle quotes what YAML would otherwise read as another type (a number id, "off").
func quoteStyle(s string) yaml.Style {
	var probe any
	if err := yaml.Unmarshal([]byte(s), &probe); err != nil {
		return yaml.DoubleQuotedStyle
	}
	if _, ok := probe.(string); !ok || s == "" {
		return yaml.DoubleQuotedStyle
	}
	return 0
}
