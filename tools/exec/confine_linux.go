package exec

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confineAndExec is stage 2 of the helper: limits, then confinement, then the command.
// no_new_privs and Landlock bind the calling thread only, and execve keeps the credentials
// of the thread that calls it: the goroutine is locked to one thread from the first prctl
// to the exec, or the command could start from a thread that was never confined.
func confineAndExec(o helperOptions) error {
	runtime.LockOSThread()
	if err := setLimits(o); err != nil {
		return err
	}
	argv := o.argv
	if os.Getenv(innerEnv) == nsEnvValue {
		// In namespaces of its own (supervise): hide reef's state, then give up the
		// capabilities that made it possible.
		if err := hideMounts(o.hide); err != nil {
			return err
		}
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	os.Unsetenv(innerEnv)
	switch o.level {
	case SandboxLandlock:
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		if err := landlock(o.writable, o.hide); err != nil {
			return err
		}
	case SandboxBwrap:
		bwrap, err := osexec.LookPath("bwrap")
		if err != nil {
			return errors.New("bwrap is not installed")
		}
		argv = append(bwrapArgs(bwrap, o.writable, o.hide), argv...)
	}
	path, err := osexec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// setLimits sets the rlimits a level other than off asks for. RLIMIT_NPROC counts every
// process of the real user, so the limit is what the user runs now plus o.nproc.
func setLimits(o helperOptions) error {
	if o.level == SandboxOff {
		return nil
	}
	set := func(name string, res int, v int64) error {
		if v < 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: uint64(v), Max: uint64(v)}); err != nil {
			return fmt.Errorf("rlimit %s: %w", name, err)
		}
		return nil
	}
	nproc := int64(-1)
	if o.nproc >= 0 {
		nproc = int64(userTasks(os.Getuid()) + o.nproc)
	}
	return errors.Join(
		set("processes", unix.RLIMIT_NPROC, nproc),
		set("file size", unix.RLIMIT_FSIZE, o.fsize),
		set("cpu", unix.RLIMIT_CPU, int64(o.cpu)),
		set("address space", unix.RLIMIT_AS, o.as))
}

// userTasks counts the tasks (threads included, as RLIMIT_NPROC does) of uid.
func userTasks(uid int) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	want := strconv.Itoa(uid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var real string
		threads := 0
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			}
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == want {
			n += max(threads, 1)
		}
	}
	return n
}

// LandlockABI returns the Landlock ABI version of the running kernel, 0 without Landlock.
func LandlockABI() int {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(r)
}

// landlock restricts this process and its descendants: no file may be created, written,
// truncated, removed or renamed outside writable (and /dev, for /dev/null and ttys, where
// only writing existing files is allowed). Reading is allowed everywhere but below hide
// (readableBeside); executing stays allowed. From ABI 6 on, signals to processes outside
// the sandbox (the supervisor, reef) are refused too.
func landlock(writable, hide []string) error {
	abi := LandlockABI()
	if abi < 1 {
		return errors.New("this kernel has no Landlock (needs Linux 5.13 with landlock among the LSMs)")
	}
	fileRights := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE)
	dirRights := fileRights | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	if abi >= 2 {
		dirRights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		fileRights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
		dirRights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	const readRights = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	handled := dirRights
	if len(hide) > 0 {
		handled |= readRights
	}
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	size := unsafe.Offsetof(attr.Access_net) // ABI 1-3 know only Access_fs
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(attr)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("landlock: create ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	add := func(path string, rights uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil // nothing there to write to
			}
			return fmt.Errorf("landlock: %s: %w", path, err)
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return fmt.Errorf("landlock: %s: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= fileRights | unix.LANDLOCK_ACCESS_FS_READ_FILE
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("landlock: allow %s: %w", path, e)
		}
		return nil
	}
	writeRights := dirRights
	if len(hide) > 0 {
		grant, ancestors := readableBeside(hide)
		for _, g := range grant {
			if err := add(g, readRights); err != nil {
				return err
			}
		}
		for _, a := range ancestors {
			if err := add(a, unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
				return err
			}
		}
		// A writable folder must show what is written into it later; one that holds a
		// hidden path (a data dir under /tmp) leaves that path to the namespace alone.
		writeRights |= readRights
	}
	for _, w := range writable {
		if err := add(w, writeRights); err != nil {
			return err
		}
	}
	if err := add("/dev", fileRights); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock: restrict: %w", e)
	}
	return nil
}

// bwrapArgs runs the command in bubblewrap: the whole file system read-only, writable only
// below writable, an empty read-only tmpfs over every hidden directory, a fresh /dev and
// /proc, its own PID and IPC namespaces and session.
func bwrapArgs(bwrap string, writable, hide []string) []string {
	a := []string{bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, w := range writable {
		if _, err := os.Stat(w); err == nil {
			a = append(a, "--bind", w, w)
		}
	}
	for _, h := range hide {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			a = append(a, "--tmpfs", h, "--remount-ro", h)
		} else if err == nil {
			a = append(a, "--ro-bind", "/dev/null", h)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		a = append(a, "--chdir", wd)
	}
	return append(a, "--")
}

// Probe reports the sandbox level mode gives on this machine.
func Probe(mode string) Level {
	abi := LandlockABI()
	switch mode {
	case SandboxOff:
		return Level{Mode: SandboxOff, Detail: "off: no limits or confinement (descendants still die with each call)"}
	case SandboxLandlock:
		if abi < 1 {
			return Level{Mode: SandboxLandlock, Err: errors.New("sandbox: landlock, but this kernel has no Landlock")}
		}
		return Level{Mode: SandboxLandlock, Detail: fmt.Sprintf("landlock (ABI %d): writes only in the workspace and temp dirs, reef's data dir unreadable; rlimits", abi)}
	case SandboxBwrap:
		if _, err := osexec.LookPath("bwrap"); err != nil {
			return Level{Mode: SandboxBwrap, Err: errors.New("sandbox: bwrap, but bwrap is not installed (apt-get install bubblewrap)")}
		}
		return Level{Mode: SandboxBwrap, Detail: "bwrap: read-only system, writable workspace and temp dirs, reef's data dir hidden, own PID namespace; rlimits"}
	}
	if abi >= 1 {
		return Level{Mode: SandboxLandlock, Detail: fmt.Sprintf("auto → landlock (ABI %d): writes only in the workspace and temp dirs, reef's data dir unreadable; rlimits", abi)}
	}
	return Level{Mode: "rlimits", Detail: "auto → rlimits only: this kernel has no Landlock, so commands may write wherever reef's user may (reef's data dir is hidden where user namespaces are allowed)"}
}

// dieWithParent has the kernel send SIGTERM to the child when reef dies.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
