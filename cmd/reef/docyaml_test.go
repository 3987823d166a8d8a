package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/configs"
)

// TestDocsConfigKeysExist: every key a YAML block of README.md or docs/*.md shows is one
// reef.yaml may hold (the yaml tags of configs.Config): a renamed or misspelt key in the
// manual fails here instead of misleading a user (reef refuses an unknown key). A block of
// another file says so in a first-line comment naming it ("# prometheus.yml", "# SKILL.md").
func TestDocsConfigKeysExist(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	block := regexp.MustCompile("(?ms)^( *)```ya?ml\n(.*?)^ *```") // indented in a list item too
	unknown := regexp.MustCompile(`line (\d+): field (\S+) not found in type (\S+)`)
	otherFile := regexp.MustCompile(`^# [\w.-]+\.(yml|yaml|md)\b`)
	blocks := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatchIndex(b, -1) {
			text := b[m[4]:m[5]]
			if indent := b[m[2]:m[3]]; len(indent) > 0 {
				text = bytes.ReplaceAll(append([]byte("\n"), text...), append([]byte("\n"), indent...), []byte("\n"))[1:]
			}
			if otherFile.Match(text) {
				continue
			}
			blocks++
			line := 1 + bytes.Count(b[:m[4]], []byte("\n"))
			dec := yaml.NewDecoder(bytes.NewReader(text))
			dec.KnownFields(true)
			var c configs.Config
			err := dec.Decode(&c)
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				continue // a parse error or none: the key check is all this test does
			}
			for _, e := range te.Errors {
				if u := unknown.FindStringSubmatch(e); u != nil {
					t.Errorf("%s, block at line %d: key %s (its line %s) is not a reef.yaml key (in %s)",
						filepath.Base(f), line, u[2], u[1], strings.TrimPrefix(u[3], "configs."))
				}
			}
		}
	}
	if blocks < 10 {
		t.Fatalf("only %d YAML blocks found in the docs: is the pattern still right?", blocks)
	}
}
