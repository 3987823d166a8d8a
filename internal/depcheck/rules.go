package depcheck

import (
	"path"
	"strings"
)

// importRef is one import as the rules see it.
type importRef struct {
	path     string // as written
	rel      string // relative to the module root, when inModule
	inModule bool
}

// rule: a file for which from is true must not make an import for which bad is true.
type rule struct {
	name string
	from func(File) bool
	bad  func(File, importRef) bool
}

const protoactor = "github.com/asynkron/protoactor-go"

// rules are DESIGN.md §1. Patterns are module-relative directories; "x/..." means x and
// everything below it.
var rules = []rule{
	{
		name: "messages imports only the standard library",
		from: in("messages/..."),
		bad:  func(_ File, i importRef) bool { return !isStd(i.path) },
	},
	{
		name: "only actors, cmd and internal/testutil import protoactor",
		from: not(in("actors/...", "cmd/...", "internal/testutil")),
		bad:  func(_ File, i importRef) bool { return under(i.path, protoactor) },
	},
	{
		name: "agent, providers, tools, channels, persistence and configs never import actors",
		from: in("agent/...", "providers/...", "tools/...", "channels/...", "persistence/...", "configs/..."),
		bad:  imports("actors/..."),
	},
	{
		name: "only cmd imports actors or cmd",
		from: func(f File) bool { return !in("cmd/...")(f) && !(f.Test && in("actors/...")(f)) },
		bad:  imports("actors/...", "cmd/..."),
	},
	{
		name: "a plugin never imports a sibling plugin",
		from: func(f File) bool { return pluginOf(f.Dir) != "" },
		bad:  siblingPlugin,
	},
	{
		name: "agent imports no reef package but messages",
		from: in("agent/..."),
		bad: func(_ File, i importRef) bool {
			return i.inModule && !under(i.rel, "messages") && !under(i.rel, "agent")
		},
	},
	{
		// The runtime reaches plugins through their parent's interface (providers.Provider,
		// tools.Tool, ...), handed over by cmd; its tests may import fakes and plugins.
		name: "actors imports no plugin",
		from: func(f File) bool { return !f.Test && in("actors/...")(f) },
		bad:  func(_ File, i importRef) bool { return i.inModule && pluginOf(i.rel) != "" },
	},
	{
		name: "access, routing, schedule, sessionkey and streaming import only messages, persistence and the standard library",
		from: in(policyPackages...),
		bad:  policyImport,
	},
}

// policyPackages hold pure policy: plain Go that the runtime and the CLI ask.
var policyPackages = []string{"access/...", "routing/...", "schedule/...", "sessionkey/...", "streaming/..."}

// policyImport reports an import a policy package may not make: anything but messages,
// persistence (the interface) and the standard library. Its tests may use other modules
// (go-cmp) and the in-memory store.
func policyImport(f File, i importRef) bool {
	if !i.inModule {
		return !isStd(i.path) && !f.Test
	}
	if f.Test && i.rel == "persistence/memory" {
		return false
	}
	return !under(i.rel, "messages") && i.rel != "persistence"
}

// binaryRule: the packages a command links (all its dependencies, as `go list -deps` sees
// them) must include none for which bad is true.
type binaryRule struct {
	name string
	cmd  string   // module-relative directory of the command
	goos []string // checked for each of these (build constraints differ)
	bad  func(dep string) bool
}

// binaryRules hold for whole programs, not single imports.
var binaryRules = []binaryRule{
	{
		name: "the product binary links no test code (testing, httptest, *test packages)",
		cmd:  "cmd/reef",
		goos: []string{"linux", "darwin"},
		bad:  testCode,
	},
}

// stdTestInternals are the standard library's own test hooks that every Go program links,
// with why: they cannot be avoided, and do nothing outside a test.
var stdTestInternals = map[string]string{
	"internal/testlog":  "os imports it: the hook behind go test's -test.testlogfile",
	"internal/synctest": "sync imports it: the bubbles of testing/synctest",
}

// testCode reports whether dep is test code: testing and below, or a package whose name
// ends in "test" (httptest, channeltest, openaitest...).
func testCode(dep string) bool {
	if _, ok := stdTestInternals[dep]; ok {
		return false
	}
	return under(dep, "testing") || strings.HasSuffix(path.Base(dep), "test")
}

// pluginParents hold plugins: their direct children.
var pluginParents = []string{"providers", "tools", "channels", "persistence"}

// pluginOf returns the plugin directory dir belongs to ("providers/openai" for
// providers/openai/openaitest), or "" when dir is not in a plugin.
func pluginOf(dir string) string {
	parts := strings.Split(dir, "/")
	if len(parts) < 2 {
		return ""
	}
	for _, p := range pluginParents {
		if parts[0] == p {
			return parts[0] + "/" + parts[1]
		}
	}
	return ""
}

// siblingPlugin reports an import of another plugin under the same parent, except the
// shared ones: fake, packages named *test, providers/sse, and the parent's internal
// directory (helpers its plugins share, which Go keeps to the parent's tree; they import no
// plugin themselves).
func siblingPlugin(f File, i importRef) bool {
	if !i.inModule {
		return false
	}
	mine, theirs := pluginOf(f.Dir), pluginOf(i.rel)
	if theirs == "" || theirs == mine || strings.Split(mine, "/")[0] != strings.Split(theirs, "/")[0] {
		return false
	}
	name := i.rel[strings.LastIndex(i.rel, "/")+1:]
	return name != "fake" && !strings.HasSuffix(name, "test") && i.rel != "providers/sse" && !strings.HasSuffix(theirs, "/internal")
}

// in matches files whose directory matches one of the patterns.
func in(patterns ...string) func(File) bool {
	return func(f File) bool {
		for _, p := range patterns {
			if match(f.Dir, p) {
				return true
			}
		}
		return false
	}
}

func not(pred func(File) bool) func(File) bool {
	return func(f File) bool { return !pred(f) }
}

// imports matches module packages matching one of the patterns.
func imports(patterns ...string) func(File, importRef) bool {
	return func(_ File, i importRef) bool {
		if !i.inModule {
			return false
		}
		for _, p := range patterns {
			if match(i.rel, p) {
				return true
			}
		}
		return false
	}
}

// match reports whether dir matches pattern: "x" is x alone, "x/..." is x and below.
func match(dir, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return under(dir, base)
	}
	return dir == pattern
}

// under reports whether p is base or below it.
func under(p, base string) bool {
	return p == base || strings.HasPrefix(p, base+"/")
}

// isStd reports whether an import path is in the standard library: its first element has no dot.
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}
