package configs

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// walker visits a YAML node tree alongside the Go type it decodes into, so that problems
// can be reported with a key path ("agents[0].model") as well as a line.
type walker struct {
	unknown func(key *yaml.Node, path string, known []string) // a mapping key with no field
	scalar  func(n *yaml.Node, path string, t reflect.Type)   // a scalar value and its Go type
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.walk(c, t, path)
		}
	case yaml.ScalarNode:
		if w.scalar != nil {
			w.scalar(n, path, t)
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return // the decoder reports the type mismatch
		}
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.MappingNode:
		w.mapping(n, t, path)
	}
}

func (w *walker) mapping(n *yaml.Node, t reflect.Type, path string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" {
			continue // merge key: its aliased content is checked where it is defined
		}
		switch t.Kind() {
		case reflect.Map:
			w.walk(v, t.Elem(), joinMapKey(path, k.Value))
		case reflect.Struct:
			f, ok := fieldByYAMLName(t, k.Value)
			if !ok {
				if w.unknown != nil {
					w.unknown(k, path, yamlNames(t))
				}
				continue
			}
			w.walk(v, f.Type, joinPath(path, k.Value))
		}
	}
}

// yamlName returns the key a struct field decodes from, or "" when it is not decoded.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByYAMLName(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); yamlName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := yamlName(t.Field(i)); n != "" {
			names = append(names, n)
		}
	}
	return names
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinMapKey names a map entry: providers.openai, but models["openai/gpt-4.1-mini"].
func joinMapKey(path, key string) string {
	if plainKey.MatchString(key) {
		return joinPath(path, key)
	}
	return fmt.Sprintf("%s[%q]", path, key)
}

// unknownKeyError formats an unknown key the way a user can act on it.
func unknownKeyError(file string, key *yaml.Node, path string, known []string) error {
	where := "at the top level"
	if path != "" {
		where = "in " + path
	}
	msg := fmt.Sprintf("%s:%d: unknown key %q %s", file, key.Line, key.Value, where)
	if s := suggest(key.Value, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		sorted := append([]string(nil), known...)
		sort.Strings(sorted)
		msg += " (known keys: " + strings.Join(sorted, ", ") + ")"
	}
	return fmt.Errorf("%s", msg)
}

// Suggest returns the known name closest to name, or "" when none is close: the
// did-you-mean of configuration keys, for other names a user types (models, providers).
func Suggest(name string, known []string) string { return suggest(name, known) }

// suggest returns the known name closest to key, or "" when none is close: names that
// differ only in case, '_' or '-' match first, then an edit distance of at most 2
// (1 for short keys).
func suggest(key string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	for _, k := range known {
		if norm(k) == norm(key) {
			return k
		}
	}
	limit := 2
	if len(key) <= 4 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting an adjacent
// transposition ("modle" for "model") as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
