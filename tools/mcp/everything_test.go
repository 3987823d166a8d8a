package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/tools"
)

// The reference server, pinned; .ci/run installs the same version into testdata/npm.
const (
	everythingPkg     = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"
	npmDir            = "testdata/npm"
)

// everything returns node and the reference server's entry point, installing the server
// with npm when it is missing. Without node the test is skipped, unless REEF_REQUIRE_NODE
// is set (CI sets it: there the test must run).
func everything(t *testing.T) (node, index string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("REEF_REQUIRE_NODE") != "" {
			t.Fatal("node is not installed, and REEF_REQUIRE_NODE says this test must run")
		}
		t.Skip("skipped: node is not installed (the test runs the reference MCP server from npm)")
	}
	pkgDir := filepath.Join(npmDir, "node_modules", filepath.FromSlash(everythingPkg))
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil || json.Unmarshal(raw, &pkg) != nil || pkg.Version != everythingVersion {
		t.Logf("installing %s@%s into %s", everythingPkg, everythingVersion, npmDir)
		cmd := exec.Command("npm", "install", "--prefix", npmDir, "--no-save", "--no-audit", "--no-fund",
			"--loglevel=error", everythingPkg+"@"+everythingVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install %s: %v\n%s", everythingPkg, err, out)
		}
	}
	abs, err := filepath.Abs(filepath.Join(pkgDir, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	return node, abs
}

func TestEverythingServerStdio(t *testing.T) {
	node, index := everything(t)
	s, ts := start(t, Config{Name: "everything", Command: node, Args: []string{index, "stdio"},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, Timeout: 20 * time.Second})
	checkEverything(t, ts)
	// The reference server registers get-roots-list after the handshake (reef's client offers
	// roots) and announces it with notifications/tools/list_changed: reef lists the tools again.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if cur, _ := s.currentTool("get-roots-list"); cur != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's tools/list_changed did not lead reef to list get-roots-list")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// get-roots-list was added after reef started: an agent's policy judges it as it would a
	// tool listed at start, by its patterns.
	reg, err := tools.NewRegistryWith([]tools.Source{s})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		deny    []string
		offered bool
	}{{nil, true}, {[]string{"mcp:everything:get-roots*"}, false}, {[]string{"everything__get-r*"}, false}} {
		p, err := reg.Policy([]string{"mcp:everything"}, tt.deny)
		if err != nil {
			t.Fatal(err)
		}
		var offered, echo bool
		for _, spec := range reg.Specs(p) {
			offered = offered || spec.Name == "everything__get-roots-list"
			echo = echo || spec.Name == "everything__echo"
		}
		if offered != tt.offered || !echo || p.Allows("everything__get-roots-list") != tt.offered {
			t.Errorf("deny %v: get-roots-list offered %v, want %v (echo offered %v)", tt.deny, offered, tt.offered, echo)
		}
	}
	var roots tools.Tool
	for _, tl := range s.Tools() {
		if tl.Spec().Name == "everything__get-roots-list" {
			roots = tl
		}
	}
	if res := call(t, roots, `{}`); res.IsError || !strings.Contains(strings.ToLower(res.Content), "roots") {
		t.Errorf("get-roots-list: %+v", res)
	}
}

func TestEverythingServerStreamableHTTP(t *testing.T) {
	node, index := everything(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, index, "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), fmt.Sprintf("PORT=%d", port)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server did not listen on %s", addr)
		}
	}
	_, ts := start(t, Config{Name: "everything", URL: "http://" + addr + "/mcp", Timeout: 20 * time.Second})
	checkEverything(t, ts)
}

// checkEverything lists and calls the reference server's tools.
func checkEverything(t *testing.T, ts map[string]tools.Tool) {
	t.Helper()
	for _, n := range []string{"everything__echo", "everything__get-sum", "everything__get-tiny-image"} {
		if ts[n] == nil {
			t.Fatalf("tool %s not offered; got %d tools", n, len(ts))
		}
	}
	if p := string(ts["everything__get-sum"].Spec().Parameters); !strings.Contains(p, `"a"`) || !strings.Contains(p, `"b"`) {
		t.Errorf("get-sum's schema: %s", p)
	}
	tests := []struct {
		tool, args string
		want       string
		isErr      bool
	}{
		{"everything__echo", `{"message":"hello reef"}`, "Echo: hello reef", false},
		{"everything__get-sum", `{"a":2,"b":40}`, "42", false},
		{"everything__get-tiny-image", `{}`, "[image image/png", false},
		{"everything__get-sum", `{"a":"two"}`, "", true},
	}
	for _, tt := range tests {
		res := call(t, ts[tt.tool], tt.args)
		if res.IsError != tt.isErr || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s %s: got %+v, want error=%v and %q", tt.tool, tt.args, res, tt.isErr, tt.want)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
