//go:build linux

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
)

// benchChild is a running `reef gateway` child.
type benchChild struct {
	cmd       *exec.Cmd
	started   time.Time
	ready     chan struct{}
	readyAt   time.Time
	startupMs float64 // "startup" in its ready line: process start to ready, as it measured
	exited    chan struct{}
	err       error
	log       *benchLog
}

// startGateway starts `reef gateway` on the rig's home with args and waits until it is ready.
func (r *benchRig) startGateway(ctx context.Context, args ...string) (*benchChild, error) {
	c := &benchChild{ready: make(chan struct{}), exited: make(chan struct{})}
	c.log = &benchLog{onReady: func(line string) {
		c.readyAt = time.Now()
		var v struct {
			Startup float64 `json:"startup"`
		}
		if json.Unmarshal([]byte(line), &v) == nil {
			c.startupMs = v.Startup
		}
		close(c.ready)
	}}
	command := cmp.Or(r.command, "gateway")
	c.cmd = exec.Command(r.exe, append([]string{command}, args...)...)
	c.cmd.Env = benchChildEnv(r.home)
	c.cmd.Stderr = c.log
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c.started = time.Now()
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	select {
	case <-c.ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("reef gateway exited before it was ready (%v):\n%s", c.err, c.log.tail())
	case <-time.After(30 * time.Second):
		c.kill()
		return nil, fmt.Errorf("reef gateway not ready after 30s:\n%s", c.log.tail())
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
}

// benchChildEnv is this process's environment without reef's and the providers' variables
// (reef.yaml says everything), with REEF_HOME set and the web listener on a free port.
func benchChildEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		skip := false
		for _, p := range []string{"REEF_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "TELEGRAM_", "DISCORD_", "FEISHU_"} {
			if strings.HasPrefix(name, p) {
				skip = true
			}
		}
		if !skip {
			env = append(env, kv)
		}
	}
	// The web listener on a free port: benchmarks run side by side with other reefs.
	return append(env, "REEF_HOME="+home, "REEF_GATEWAY_LISTEN=127.0.0.1:0")
}

func (c *benchChild) pid() int { return c.cmd.Process.Pid }

// kill SIGKILLs the child and waits until it is gone.
func (c *benchChild) kill() error {
	c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.exited:
		return nil
	case <-time.After(20 * time.Second):
		return errors.New("reef gateway still running 20s after SIGKILL")
	}
}

// stop ends the child with SIGTERM (SIGKILL after 30s) and reports a non-clean exit.
func (c *benchChild) stop() error {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		return fmt.Errorf("reef gateway still running 30s after SIGTERM:\n%s", c.log.tail())
	}
	if c.err != nil {
		return fmt.Errorf("reef gateway: %v after SIGTERM:\n%s", c.err, c.log.tail())
	}
	return nil
}

// benchLog is a child's stderr: it watches for the ready line and keeps the last lines.
type benchLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	ready   bool
	onReady func(line string)
	awaits  []logAwait
}

// logAwait is a line someone waits for: the first containing text goes to ch.
type logAwait struct {
	text string
	ch   chan string
}

// await returns a channel that receives the first line containing text (a line already
// kept counts).
func (l *benchLog) await(text string) <-chan string {
	ch := make(chan string, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, text) {
			ch <- line
			return ch
		}
	}
	l.awaits = append(l.awaits, logAwait{text, ch})
	return ch
}

func (l *benchLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		if !l.ready && strings.Contains(line, "reef gateway ready") {
			l.ready = true
			l.onReady(line)
		}
		l.awaits = slices.DeleteFunc(l.awaits, func(a logAwait) bool {
			if !strings.Contains(line, a.text) {
				return false
			}
			a.ch <- line
			return true
		})
		l.lines = append(l.lines, line)
		if len(l.lines) > 200 {
			l.lines = append(l.lines[:0], l.lines[100:]...)
		}
	}
	if len(l.partial) > 1<<20 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

func (l *benchLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.lines[max(0, len(l.lines)-40):]
	return strings.Join(lines, "\n")
}

// procStat is what /proc says about a process. Memory is in kB. The figure that matters is
// the anonymous memory (RssAnon; Pss_Anon, its proportional share): the heap, stacks and the
// runtime's own. VmRSS and RssFile also count clean file-backed pages (the binary, the mapped
// database) that the kernel reclaims by itself when memory is short.
type procStat struct {
	cpu            time.Duration // utime + stime
	rssKB, hwmKB   int           // VmRSS, VmHWM
	anonKB, fileKB int           // RssAnon, RssFile
	pssKB          int           // Pss (smaps_rollup): each page divided by the processes that map it
	pssAnonKB      int           // Pss_Anon
	threads, fds   int
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on Linux).
const clockTick = 10 * time.Millisecond

// readProc reads the CPU time, memory, threads and open files of pid.
func readProc(pid int) (procStat, error) {
	var st procStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// Fields after the command name (which is in parentheses and may hold spaces).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	st.cpu = time.Duration(ut+stt) * clockTick
	if err := readMem(pid, &st); err != nil {
		return st, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err == nil {
		st.fds = len(fds)
	}
	return st, nil
}

// pssHidden says once that PSS could not be read.
var pssHidden sync.Once

// readMem reads the memory figures and threads of pid into st: /proc/PID/status and
// /proc/PID/smaps_rollup.
func readMem(pid int, st *procStat) error {
	fields := map[string]*int{"VmRSS": &st.rssKB, "VmHWM": &st.hwmKB, "RssAnon": &st.anonKB, "RssFile": &st.fileKB,
		"Threads": &st.threads, "Pss": &st.pssKB, "Pss_Anon": &st.pssAnonKB}
	for _, name := range []string{"status", "smaps_rollup"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		if name == "smaps_rollup" && errors.Is(err, fs.ErrPermission) {
			pssHidden.Do(func() {
				fmt.Fprintln(os.Stderr, "reef-bench: PSS is not readable (reef makes itself not dumpable); it shows as 0. "+
					"Anonymous RSS comes from /proc/PID/status and is measured; run reef-bench as root to see PSS too.")
			})
			continue
		}
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			if p := fields[k]; p != nil {
				*p, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			}
		}
	}
	return nil
}

// memPeaks are the highest memory figures of a process sampled over a while.
type memPeaks struct {
	anonKB, pssKB, pssAnonKB, rssKB int
	samples                         int
}

// sampleMem reads pid's memory every period until stop is called, which returns the peaks
// (a sample at the start and one at the stop included).
func sampleMem(pid int, every time.Duration) (stop func() memPeaks) {
	var p memPeaks
	take := func() {
		var st procStat
		if readMem(pid, &st) != nil {
			return
		}
		p.anonKB, p.pssKB = max(p.anonKB, st.anonKB), max(p.pssKB, st.pssKB)
		p.pssAnonKB, p.rssKB = max(p.pssAnonKB, st.pssAnonKB), max(p.rssKB, st.rssKB)
		p.samples++
	}
	take()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				take()
				return
			case <-t.C:
				take()
			}
		}
	}()
	return func() memPeaks { close(done); <-finished; return p }
}

// goroutines reads the goroutine count from a pprof endpoint at addr.
func goroutines(addr string) (int, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
	if err != nil {
		return 0, err
	}
	// "goroutine profile: total 42"
	_, n, ok := strings.Cut(strings.TrimSpace(line), "total ")
	if !ok {
		return 0, fmt.Errorf("unexpected goroutine profile line %q", line)
	}
	return strconv.Atoi(n)
}

// heapStats reads the runtime's memory statistics ("# HeapInuse = 123" lines) from the heap
// profile of the pprof endpoint at addr.
func heapStats(addr string) (map[string]int64, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	stats := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if !ok {
			continue
		}
		if f := strings.Fields(v); len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				stats[k] = n
			}
		}
	}
	return stats, sc.Err()
}

// saveHeapProfile writes the heap profile of the pprof endpoint at addr, taken after a
// garbage collection, to path (read it with go tool pprof -sample_index=inuse_space).
func saveHeapProfile(addr, path string) error {
	client := http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + addr + "/debug/pprof/heap?gc=1")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %s: %w", path, err)
	}
	return f.Close()
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// loopbackAddr returns a loopback address with a port nobody listens on right now.
func loopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// benchProgress prints a progress line on w every so often until stop is called: overwritten
// in place on a terminal, a new line every few seconds otherwise.
func benchProgress(w io.Writer, tty bool, line func() string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		every := 3 * time.Second
		if tty {
			every = 200 * time.Millisecond
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprintf(w, "\r\033[K")
				}
				return
			case <-t.C:
				if tty {
					fmt.Fprintf(w, "\r\033[K%s", line())
				} else {
					fmt.Fprintln(w, line())
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

func isTerminal(f *os.File) bool { return isatty.IsTerminal(f.Fd()) }

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }
