package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// unsetRef is a ${VAR} reference, without a default, whose variable was unset or empty.
type unsetRef struct {
	path string // key path of the value, e.g. providers.openai.apiKey
	name string // the variable, e.g. OPENAI_API_KEY
}

// Load reads the YAML file at path (which must exist), expands ${VAR} references from env
// (os.Getenv when nil), decodes it strictly, applies defaults and validates the result.
// Every problem found is returned together. When the file could be parsed, the Config is
// returned along with any error so that a caller can still show what was understood.
func Load(path string, env func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return load(path, data, env)
}

// LoadDefault loads DefaultPath(env). A missing file is not an error: the configuration
// then comes from defaults and the environment alone.
func LoadDefault(env func(string) string) (*Config, error) {
	if env == nil {
		env = os.Getenv
	}
	path := DefaultPath(env)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config: %w", err)
	}
	return load(path, data, env)
}

// DefaultPath is where LoadDefault looks for the configuration: $REEF_HOME/reef.yaml.
func DefaultPath(env func(string) string) string {
	if env == nil {
		env = os.Getenv
	}
	return filepath.Join(homeDir(env), "reef.yaml")
}

func load(file string, data []byte, env func(string) string) (*Config, error) {
	if env == nil {
		env = os.Getenv
	}
	c, problems, err := parse(file, data, env)
	if err != nil {
		return nil, err
	}
	ApplyDefaults(c, env)
	if err := c.Validate(); err != nil {
		problems = append(problems, err)
	}
	return c, errors.Join(problems...)
}

// parse expands and decodes data. A YAML syntax error is returned as err; unknown keys and
// values of the wrong type are returned as problems alongside the partly decoded Config.
func parse(file string, data []byte, env func(string) string) (*Config, []error, error) {
	exp := expand(string(data), env)
	redact := redactor(exp.used)

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(exp.text), &doc); err != nil {
		return nil, nil, syntaxError(file, redact(err.Error()))
	}
	// Walk the file as written, before expansion, so that problems quote ${VAR} rather than
	// its value and unset references are found in values only, never in comments.
	// Expansion keeps line numbers unless a value holds a newline; then walk the expanded text.
	var raw yaml.Node
	walkDoc, rawOK := &raw, yaml.Unmarshal(data, &raw) == nil
	if !rawOK || strings.Count(exp.text, "\n") != bytes.Count(data, []byte("\n")) {
		walkDoc, rawOK = &doc, false
	}
	c := &Config{}
	c.aliases = rewriteAliases(&doc)
	c.renamed = rewriteRenamed(&doc, renamedKeys)
	if rawOK {
		rewriteAliases(&raw)
		rewriteRenamed(&raw, renamedKeys)
	}
	text := []byte(exp.text)
	if len(c.aliases) > 0 || len(c.renamed) > 0 {
		// decode the rewritten document (strictly, as the file): line numbers in problems
		// may then be off where the aliases changed the layout.
		if b, err := yaml.Marshal(&doc); err == nil {
			text = b
		}
	}
	var problems []error
	reported := map[int]bool{}
	values := map[int]*yaml.Node{} // line → first scalar value on it
	paths := map[int]string{}      // line → key path of that value
	w := walker{
		unknown: func(k *yaml.Node, path string, known []string) {
			reported[k.Line] = true
			problems = append(problems, unknownKeyError(file, k, path, known))
		},
		scalar: func(n *yaml.Node, path string, _ reflect.Type) {
			if _, ok := values[n.Line]; !ok {
				values[n.Line], paths[n.Line] = n, path
			}
			if rawOK {
				for _, name := range expand(n.Value, env).unset {
					c.unset = append(c.unset, unsetRef{path: path, name: name})
				}
			}
		},
	}
	w.walk(walkDoc, reflect.TypeOf(Config{}), "")

	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	err := dec.Decode(c)
	var te *yaml.TypeError
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.As(err, &te):
		for _, e := range te.Errors {
			if p := typeError(file, e, reported, values, paths); p != nil {
				problems = append(problems, errors.New(redact(p.Error())))
			}
		}
	default:
		return nil, nil, syntaxError(file, redact(err.Error()))
	}
	return c, problems, nil
}

var (
	yamlLine      = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	cannotDecode  = regexp.MustCompile("^cannot unmarshal !!\\w+ `(.*)` into (.+)$")
	typeNameWords = map[string]string{
		"int": "a whole number", "bool": "true or false", "string": "a string",
		"[]string": "a list", "float64": "a number",
	}
)

// syntaxError turns yaml's "yaml: line 3: msg" into "file:3: msg".
func syntaxError(file, msg string) error {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", file, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// typeError rewrites one of yaml's decoding errors with the file name and key path, quoting
// the value as written in the file. Unknown fields already reported by the walker are skipped.
func typeError(file, e string, reported map[int]bool, values map[int]*yaml.Node, paths map[int]string) error {
	m := yamlLine.FindStringSubmatch(e)
	if m == nil {
		return fmt.Errorf("%s: %s", file, e)
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	if strings.Contains(msg, "not found in type") {
		if reported[line] {
			return nil
		}
	} else if d := cannotDecode.FindStringSubmatch(msg); d != nil {
		want := typeNameWords[d[2]]
		switch goType := strings.TrimPrefix(d[2], "*"); {
		case want != "":
		case strings.HasPrefix(goType, "[]"):
			want = "a list"
		case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "configs."):
			want = "a mapping"
		default:
			want = goType
		}
		got := d[1]
		if n := values[line]; n != nil {
			got = n.Value
		}
		msg = fmt.Sprintf("got %q, want %s", got, want)
	}
	if p := paths[line]; p != "" {
		msg = p + ": " + msg
	}
	return fmt.Errorf("%s:%d: %s", file, line, msg)
}

// redactor replaces values taken from the environment by their ${NAME} reference, so that
// an error message quoting a value never shows a secret.
func redactor(used []expansion) func(string) string {
	vals := append([]expansion(nil), used...)
	sort.Slice(vals, func(i, j int) bool { return len(vals[i].value) > len(vals[j].value) })
	return func(s string) string {
		for _, u := range vals {
			if len(u.value) >= 4 {
				s = strings.ReplaceAll(s, u.value, "${"+u.name+"}")
			}
			if len(u.value) > 10 { // yaml shortens long values to their first 7 bytes and "..."
				s = strings.ReplaceAll(s, u.value[:7]+"...", "${"+u.name+"}")
			}
		}
		return s
	}
}

// LoadBytes is Load of data, read from file by the caller (the web UI's editor checks a
// configuration before it writes it).
func LoadBytes(file string, data []byte, env func(string) string) (*Config, error) {
	return load(file, data, env)
}
