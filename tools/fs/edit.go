package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Edit is the edit tool: replace one exact piece of text in a workspace file.
type Edit struct{ cfg Config }

var _ tools.Tool = (*Edit)(nil)

// NewEdit returns the edit tool.
func NewEdit(cfg Config) *Edit { return &Edit{cfg: cfg.withDefaults()} }

type editArgs struct {
	pathArgs
	OldText   *string `json:"oldText"`
	NewText   *string `json:"newText"`
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
}

// Spec describes edit to the model.
func (t *Edit) Spec() messages.ToolSpec {
	props := pathProps("File to change, relative to the workspace.")
	props["oldText"] = map[string]any{"type": "string",
		"description": "Exact text to replace, whitespace included. It must occur once in the file: add surrounding lines until it does."}
	props["newText"] = map[string]any{"type": "string", "description": "Text to put in its place; may be empty to delete."}
	props["old_string"] = map[string]any{"type": "string", "description": "Same as oldText; give one of the two."}
	props["new_string"] = map[string]any{"type": "string", "description": "Same as newText; give one of the two."}
	return messages.ToolSpec{
		Name: "edit",
		Description: "Change part of a workspace file by replacing one exact, unique piece of its text with new text. " +
			"Read the file first and copy the text to replace from it. Use write to replace a whole file.",
		Parameters: schema(map[string]any{"type": "object", "properties": props, "additionalProperties": false}),
	}
}

// pick returns the value given under either name.
func pick(a, b *string, names string) (string, error) {
	switch {
	case a != nil && b != nil && *a != *b:
		return "", fmt.Errorf("give %s, not both", names)
	case a != nil:
		return *a, nil
	case b != nil:
		return *b, nil
	}
	return "", fmt.Errorf("%s is required", strings.Replace(names, " or ", " (or ", 1)+")")
}

// Run applies the edit.
func (t *Edit) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a editArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := a.get("")
	if err != nil {
		return tools.Result{}, err
	}
	oldText, err := pick(a.OldText, a.OldString, "oldText or old_string")
	if err != nil {
		return tools.Result{}, err
	}
	newText, err := pick(a.NewText, a.NewString, "newText or new_string")
	if err != nil {
		return tools.Result{}, err
	}
	if oldText == "" {
		return tools.Result{}, errors.New("oldText is empty; give the exact text to replace")
	}
	if oldText == newText {
		return tools.Result{}, errors.New("oldText and newText are the same; nothing would change")
	}
	root, rel, err := openWorkspace(call.Env, p)
	if err != nil {
		return tools.Result{}, err
	}
	defer root.Close()
	f, info, err := openRegular(root, rel, p)
	if err != nil {
		return tools.Result{}, err
	}
	data, err := readAll(f, t.cfg.WriteBytes, p)
	f.Close()
	if err != nil {
		return tools.Result{}, err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return tools.Result{}, fmt.Errorf("%s is a binary file (%d bytes); edit only changes text", p, len(data))
	}
	content := string(data)
	// A file with Windows line ends still matches text the model wrote with "\n".
	if !strings.Contains(content, oldText) && strings.Contains(content, "\r\n") && !strings.Contains(oldText, "\r") {
		oldText = strings.ReplaceAll(oldText, "\n", "\r\n")
		newText = strings.ReplaceAll(newText, "\n", "\r\n")
	}
	switch n := strings.Count(content, oldText); {
	case n == 0:
		return tools.Result{}, notFound(content, oldText, p)
	case n > 1:
		return tools.Result{}, fmt.Errorf("oldText occurs %d times in %s; include more of the surrounding lines so it matches exactly once", n, p)
	}
	idx := strings.Index(content, oldText)
	updated := content[:idx] + newText + content[idx+len(oldText):]
	if len(updated) > t.cfg.WriteBytes {
		return tools.Result{}, fmt.Errorf("the edited file would be larger than %s", size(int64(t.cfg.WriteBytes)))
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, errors.New("edit was cancelled; the file is unchanged")
	}
	if err := atomicWrite(root, rel, []byte(updated), info.Mode().Perm()); err != nil {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	t.cfg.changed(ctx, call.Env, rel)
	first := strings.Count(content[:idx], "\n") + 1
	oldLines, newLines := strings.Count(oldText, "\n")+1, strings.Count(newText, "\n")+1
	return tools.Result{Content: fmt.Sprintf("edited %s: replaced %s with %d line%s",
		rel, lineRange(first, oldLines), newLines, plural(newLines))}, nil
}

func lineRange(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, first+n-1)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// notFound explains a missing oldText, pointing at a line that matches its first non-blank
// line when whitespace is ignored.
func notFound(content, oldText, p string) error {
	msg := fmt.Sprintf("oldText was not found in %s; it must match the file exactly, whitespace included", p)
	var want string
	for _, l := range strings.Split(oldText, "\n") {
		if want = squash(l); want != "" {
			break
		}
	}
	if want == "" {
		return errors.New(msg)
	}
	for i, l := range strings.Split(content, "\n") {
		if squash(l) == want {
			l = strings.TrimSuffix(l, "\r")
			if len(l) > 300 {
				l = l[:300] + "…"
			}
			return fmt.Errorf("%s. Line %d matches its first line when whitespace is ignored: %q; read the file there and copy the text exactly",
				msg, i+1, strings.ToValidUTF8(l, "\uFFFD"))
		}
	}
	return errors.New(msg + "; read the file and copy the text exactly")
}

// squash drops all whitespace, so lines that differ only in indentation compare equal.
func squash(s string) string {
	return strings.Join(strings.Fields(s), "")
}
