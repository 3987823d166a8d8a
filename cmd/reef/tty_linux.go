package main

import "golang.org/x/sys/unix"

// lineMode puts the terminal on fd in the mode reef's line editor needs: no line buffering
// and no echo (the editor echoes), while Ctrl-C still sends SIGINT and output is processed
// as usual. restore puts the terminal back as it was.
func lineMode(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
