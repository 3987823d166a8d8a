package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Hiding reef's own state (the data directory: database, gateway token, backups, control
// socket) from commands. Two layers, each where the machine allows it:
//
//   - A user and mount namespace of the command's own: the supervisor starts stage 2 in a
//     new user namespace (reef's uid and gid mapped to themselves) and mount namespace, with
//     CAP_SYS_ADMIN and CAP_SETPCAP kept across the exec as ambient capabilities. Stage 2
//     mounts an empty read-only tmpfs over every hidden directory (/dev/null over a hidden
//     file), then drops every capability, bounding set included, before anything else runs.
//     The command cannot unmount them: it has no capability, and in a user namespace it
//     makes itself the mounts it inherits are locked. The socket path is gone, so it cannot
//     even connect. Without unprivileged user namespaces the command runs without this
//     layer.
//   - Landlock (the landlock level) restricts reads too: reading is granted beside each
//     hidden path (its siblings, and theirs up to /), not below it, so no path reaches the
//     hidden files, /proc/<pid>/root/... of a process outside the namespace included.
//     Directories above a hidden path stay listable, so the names in a hidden directory can
//     be listed through such a path; their contents cannot be read.
//
// Landlock does not guard connecting to a unix socket, and a process outside the namespace
// shows the real file system through /proc/<pid>/root: the control socket checks its peers
// itself (Started).

// nsEnvValue is innerEnv's value when stage 2 runs in namespaces of its own.
const nsEnvValue = "inner-ns"

// wantNamespace reports whether stage 2 should get a user and mount namespace.
func wantNamespace(o helperOptions) bool {
	return o.userns && len(o.hide) > 0 && (o.level == SandboxLandlock || o.level == "rlimits")
}

// namespaceAttr is the SysProcAttr of a stage 2 in namespaces of its own.
func namespaceAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Pdeathsig:                  syscall.SIGKILL,
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// hideMounts covers every hidden path that exists with an empty read-only tmpfs (a
// directory) or /dev/null (a file), in stage 2's own mount namespace.
func hideMounts(hide []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	for _, h := range hide {
		st, err := os.Stat(h)
		if err != nil {
			continue // nothing to hide
		}
		flags := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
		if st.IsDir() {
			err = unix.Mount("tmpfs", h, "tmpfs", flags, "size=4k,mode=0500")
		} else if err = unix.Mount("/dev/null", h, "", unix.MS_BIND, ""); err == nil {
			err = unix.Mount("", h, "", unix.MS_REMOUNT|unix.MS_BIND|flags, "")
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	return nil
}

// dropCapabilities leaves the calling thread (the one that execs the command) no capability
// now or after the exec: bounding set, ambient, effective, permitted, inheritable.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// readableBeside lists what Landlock grants reading on so that nothing below a hidden path
// is readable: for every directory above a hidden path, its other entries, recursively down
// to the hidden path. ancestors are those directories (listing them stays allowed).
func readableBeside(hide []string) (grant, ancestors []string) {
	var clean []string
	for _, h := range hide {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		if filepath.IsAbs(h) && h != "/" {
			clean = append(clean, filepath.Clean(h))
		}
	}
	if len(clean) == 0 {
		return []string{"/"}, nil
	}
	isHidden := func(p string) bool {
		for _, h := range clean {
			if p == h {
				return true
			}
		}
		return false
	}
	above := func(p string) bool {
		for _, h := range clean {
			if p == "/" || strings.HasPrefix(h, p+"/") {
				return true
			}
		}
		return false
	}
	below := func(p string) bool {
		for _, h := range clean {
			if strings.HasPrefix(p, h+"/") {
				return true
			}
		}
		return false
	}
	var walk func(dir string)
	walk = func(dir string) {
		ancestors = append(ancestors, dir)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case isHidden(p):
			case above(p) && e.IsDir():
				walk(p)
			case e.Type()&os.ModeSymlink != 0:
				// A link is granted as what it points to: not when that is or holds a hidden path.
				if r, err := filepath.EvalSymlinks(p); err == nil && !isHidden(r) && !above(r) && !below(r) {
					grant = append(grant, p)
				}
			default:
				grant = append(grant, p)
			}
		}
	}
	walk("/")
	return grant, ancestors
}
