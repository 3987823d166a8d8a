package media

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/reefgw/reef/messages"
)

// ErrOutside is a reply's file reference that leaves the workspace.
var ErrOutside = errors.New("outside the workspace")

// Outbound turns a reply's file reference (a MEDIA: line, the message tool's media) into a
// messages.Media to send: an https URL (fetched through the SSRF guard when sent), or a path
// inside workspace, relative or absolute. It only checks the spelling; the channel opens the
// file with os.OpenInRoot, which refuses symlinks out of the workspace and missing files.
func Outbound(workspace, ref string) (messages.Media, error) {
	ref = strings.TrimSpace(ref)
	if u, err := url.Parse(ref); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		name := path.Base(u.Path)
		return messages.Media{Ref: ref, Name: name, Kind: KindOf("", name)}, nil
	}
	ref = strings.TrimPrefix(ref, "file://")
	switch {
	case ref == "":
		return messages.Media{}, errors.New("no file named")
	case strings.HasPrefix(ref, "~"):
		return messages.Media{}, fmt.Errorf("%s: %w", ref, ErrOutside)
	case filepath.IsAbs(ref):
		rel, err := filepath.Rel(workspace, filepath.Clean(ref))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return messages.Media{}, fmt.Errorf("%s: %w", ref, ErrOutside)
		}
		ref = rel
	}
	rel := filepath.ToSlash(filepath.Clean(ref))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return messages.Media{}, fmt.Errorf("%s: %w", ref, ErrOutside)
	}
	name := path.Base(rel)
	return messages.Media{Root: workspace, Path: rel, Name: name, Kind: KindOf("", name)}, nil
}
