package message

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/reefgw/reef/tools"
)

// MaxMedia caps a file the tool sends, in bytes (the platforms' own limits are lower for
// some kinds: Telegram photos 10 MB, Discord 10 MB; the channel refuses those with a note).
const MaxMedia = 50 << 20

// checkMedia checks a media reference the way the agent can act on: an https URL, or a file
// the run may name (tools.OpenFile: inside the workspace, within the run's reach, a regular
// file with one link) no bigger than MaxMedia. It returns the reference to send, relative to
// the workspace for a path.
func checkMedia(env tools.Env, ref string) (string, error) {
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
	if env.Workspace == "" {
		return "", errors.New("media: no workspace to send files from")
	}
	f, st, rel, err := tools.OpenFile(env.Workspace, env.Reach, ref)
	switch {
	case errors.Is(err, tools.ErrEscapes):
		return "", fmt.Errorf("media %q is outside your workspace; copy it into the workspace first", ref)
	case err != nil:
		return "", fmt.Errorf("media: %w", err)
	}
	defer f.Close()
	if st.Size() > MaxMedia {
		return "", fmt.Errorf("media %q is %d MB; at most %d MB can be sent", ref, st.Size()>>20, MaxMedia>>20)
	}
	return filepath.ToSlash(filepath.Clean(rel)), nil
}
