package persistence

import (
	"strings"
	"testing"
)

func TestFormatErrorNamesTheRelease(t *testing.T) {
	for _, tc := range []struct {
		needs, want string
	}{
		{"v9.4.0", "needs reef v9.4.0 or later"},
		{"", "needs a newer reef"},
		{FormatRelease[Format], "needs a newer reef"}, // stale: a release this reef knows cannot be the one
	} {
		e := &FormatError{Store: "the database /x/reef.db", Format: Format + 1, Needs: tc.needs}
		if !strings.Contains(e.Error(), tc.want) || !strings.Contains(e.Error(), "/x/reef.db") {
			t.Errorf("needs %q: Error() = %q; want it to say %q", tc.needs, e.Error(), tc.want)
		}
		if h := e.Help(); !strings.Contains(h, ReleasesURL) || !strings.Contains(h, "reef restore") || !strings.Contains(h, "reef version") {
			t.Errorf("Help() = %q; want the releases, reef version and reef restore", h)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for v, want := range map[string]int{"1": 1, "2": 2, "17": 17, "0": 0, "-1": 0, "x": 0, "": 0} {
		got, err := ParseFormat(v)
		if got != want || (err == nil) != (want > 0) {
			t.Errorf("ParseFormat(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
}
