package access

import (
	"encoding/json"
	"regexp"
	"strings"
)

// What an owner's approval of a command covers. A command the owner approves "always" stores
// its prefix, and later commands that start with that prefix run without asking.
//
// The prefix of a command is its program (the first word, whatever it looks like) followed by
// the leading words that are plain names (letters, digits and _ + : @ -, not starting with
// "-"), at most MaxPrefixWords words in all: it stops at the first option, path, file name,
// quoted or variable word.
//
//	git status --short       → git status
//	go test ./...            → go test
//	ls -la /tmp              → ls
//	npm run build            → npm run build
//	./deploy.sh staging      → ./deploy.sh staging
//
// A command matches a prefix when its words begin with the prefix's words (word by word:
// "git status" does not match "git statusx") and it holds no shell operator (; & | ` $ ( ) < >
// \ or a line break): "git status; rm -rf ~" matches nothing, and a command with an operator
// can be approved only once.
const MaxPrefixWords = 3

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_+:@][A-Za-z0-9_+:@-]*$`)

// shellOperators are the characters that chain, substitute, redirect or escape in sh.
const shellOperators = ";&|`$()<>\\\n\r"

// Prefix returns the prefix an allow-always approval of command stores, and false when
// command cannot be allowed always (it is empty or holds a shell operator).
func Prefix(command string) (string, bool) {
	if strings.ContainsAny(command, shellOperators) {
		return "", false
	}
	words := strings.Fields(command)
	if len(words) == 0 {
		return "", false
	}
	prefix := words[:1]
	for _, w := range words[1:] {
		if len(prefix) == MaxPrefixWords || !plainWord.MatchString(w) {
			break
		}
		prefix = append(prefix, w)
	}
	return strings.Join(prefix, " "), true
}

// Matches reports whether command starts with prefix, word by word, and holds no shell
// operator.
func Matches(command, prefix string) bool {
	if strings.ContainsAny(command, shellOperators) {
		return false
	}
	words, want := strings.Fields(command), strings.Fields(prefix)
	if len(want) == 0 || len(words) < len(want) {
		return false
	}
	for i, w := range want {
		if words[i] != w {
			return false
		}
	}
	return true
}

// Describe reads the command and working folder ("" = the workspace) of an exec call's
// arguments, for an approval request. ok is false when they are not an exec call's.
func Describe(args string) (command, workdir string, ok bool) {
	var a struct {
		Command string `json:"command"`
		Workdir string `json:"workdir"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || strings.TrimSpace(a.Command) == "" {
		return "", "", false
	}
	return a.Command, a.Workdir, true
}
