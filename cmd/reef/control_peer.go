package main

import (
	"fmt"
	"net"
	"time"

	"github.com/rs/zerolog"
)

// peerGuard serves the control socket only to processes that are not reef's own children:
// a command the agent runs through exec (approved once, or asked for by text injected into
// an owner's run) must not approve pairings, plant cron jobs or read backups. The socket's
// mode (0600) keeps other users out; peerGuard keeps reef's descendants out (see
// controlPeer). A refused peer gets a 403 with the reason, and a warning is logged.
type peerGuard struct {
	net.Listener
	log zerolog.Logger
}

func (g peerGuard) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		pid, why := controlPeer(c)
		if why == "" {
			return c, nil
		}
		g.log.Warn().Int("pid", pid).Str("why", why).Msg("control socket: refused a process")
		body := "reef: the control socket does not serve this process: " + why + "\n"
		c.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		c.Close()
	}
}
