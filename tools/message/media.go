package message

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// MaxMedia caps a file the tool sends, in bytes (the platforms' own limits are lower for
// some kinds: Telegram photos 10 MB, Discord 10 MB; the channel refuses those with a note).
const MaxMedia = 50 << 20

// checkMedia checks a media reference the way the agent can act on: an https URL, or a
// regular file inside the workspace (os.OpenInRoot: no "..", no absolute path elsewhere, no
// symlink out of it) no bigger than MaxMedia. It returns the reference to send, relative to
// the workspace for a path.
func checkMedia(workspace, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", nil
	}
	if u, err := url.Parse(ref); err == nil && u.Scheme != "" {
		if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return "", fmt.Errorf("media %q: only workspace paths and http(s) URLs can be sent", ref)
		}
		return ref, nil
	}
	if workspace == "" {
		return "", errors.New("media: no workspace to send files from")
	}
	rel := ref
	if filepath.IsAbs(ref) {
		r, err := filepath.Rel(workspace, ref)
		if err != nil || strings.HasPrefix(r, "..") {
			return "", fmt.Errorf("media %q is outside your workspace; copy it into the workspace first", ref)
		}
		rel = r
	}
	f, err := os.OpenInRoot(workspace, rel)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("media %q does not exist in your workspace", ref)
	}
	if err != nil {
		return "", fmt.Errorf("media %q is outside your workspace or unreadable; copy it into the workspace first", ref)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("media %q: %v", ref, err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("media %q is not a regular file", ref)
	case st.Size() > MaxMedia:
		return "", fmt.Errorf("media %q is %d MB; at most %d MB can be sent", ref, st.Size()>>20, MaxMedia>>20)
	}
	return filepath.ToSlash(filepath.Clean(rel)), nil
}
