package main

import (
	"context"
	"net"
	"net/http"

	"github.com/rs/zerolog"
)

// The control socket serves only processes that are not reef's own children: a command the
// agent runs through exec (approved once, or asked for by text injected into an owner's run)
// must not approve pairings, plant cron jobs or read backups. The socket's mode (0600) keeps
// other users out; the peer check keeps reef's descendants out (controlPeer). Each
// connection is checked once, when it is accepted; a refused peer gets 403 with the reason
// for every request, and a warning is logged.

type peerVerdictKey struct{}

type peerVerdict struct {
	pid int
	why string // "" = served
}

// peerContext is the server's ConnContext: it checks the process at the other end.
func peerContext(ctx context.Context, c net.Conn) context.Context {
	pid, why := controlPeer(c)
	return context.WithValue(ctx, peerVerdictKey{}, peerVerdict{pid: pid, why: why})
}

// guardPeers refuses the requests of connections peerContext refused.
func guardPeers(next http.Handler, log zerolog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := r.Context().Value(peerVerdictKey{}).(peerVerdict)
		if !ok {
			v.why = "its credentials were not checked"
		}
		if v.why != "" {
			log.Warn().Int("pid", v.pid).Str("why", v.why).Str("path", r.URL.Path).Msg("control socket: refused a process")
			http.Error(w, "reef: the control socket does not serve this process: "+v.why, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
