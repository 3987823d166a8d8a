package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCommandsParse: every `reef …` command the README and docs/ show in a code block is
// a command reef has: `reef <command> [<subcommand>] --help` exits 0.
func TestDocsCommandsParse(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, words := range docCommands(string(b)) {
			key := strings.Join(words, " ")
			if _, ok := seen[key]; !ok {
				seen[key] = filepath.Base(f)
			}
		}
	}
	t.Logf("%d commands: %v", len(seen), seen)
	if len(seen) < 10 {
		t.Fatalf("found only %d reef commands in the docs: %v", len(seen), seen)
	}
	for key, file := range seen {
		var out, errOut bytes.Buffer
		if code := run(append(strings.Fields(key), "--help"), &out, &errOut); code != 0 {
			t.Errorf("%s shows `reef %s`, but `reef %s --help` exits %d: %s", file, key, key, code, firstLine(errOut.String()))
		}
	}
}

var envPrefix = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*=\S*\s+)+`)

// docCommands returns, for each line of a shell code block that runs reef, the command and
// its subcommand (the words before the first flag, argument or shell operator, at most two).
func docCommands(md string) [][]string {
	var out [][]string
	fence, shell := false, false
	for _, line := range strings.Split(md, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") {
			fence = !fence
			lang := strings.TrimPrefix(t, "```")
			shell = fence && (lang == "sh" || lang == "bash" || lang == "shell" || lang == "console")
			continue
		}
		if !shell { // output and usage tables are in blocks without a shell's language
			continue
		}
		l := strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		l = envPrefix.ReplaceAllString(l, "")
		fields := strings.Fields(l)
		if len(fields) < 2 || fields[0] != "reef" {
			continue
		}
		var words []string
		for _, w := range fields[1:] {
			if len(words) == 2 || !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
				break
			}
			words = append(words, w)
		}
		if len(words) == 2 && !hasSubcommands[words[0]] {
			words = words[:1] // the second word is an argument
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// hasSubcommands are the commands whose second word is a subcommand.
var hasSubcommands = map[string]bool{"sessions": true, "cron": true, "pairing": true, "security": true,
	"memory": true, "skills": true, "import": true, "service": true}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
