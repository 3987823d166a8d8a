// Package web is the gateway's HTTP face: one listener (loopback by default) serving the
// Control UI, WebChat's HTTP side, /healthz and /readyz, and whatever cmd/reef mounts beside
// them (Server.Mount) behind the same authentication.
//
// Every route but /healthz, /readyz, /login and the embedded assets needs the gateway token:
// "Authorization: Bearer <token>", or the cookie the login form sets (a MAC of the token,
// HttpOnly, SameSite=Strict). Cookie requests that change something also need the CSRF
// token (auth.go). Wrong tokens (login form, Bearer) are counted per client address and lock
// it out for a while after five (ratelimit.go). Every response carries a strict Content-Security-Policy; the pages load
// embedded scripts (app.js; chat.js on WebChat and a conversation's page) and no inline code.
//
// WebChat (chat.go, chat_actions.go) keeps several conversations of the owner (a chat id each,
// records through ChatBackend), posts Stop and the pickers as the commands /stop, /model and
// /think into the conversation, takes files through the channel's uploads into the media
// path, and shows answers as HTML rendered by internal/markdown, which escapes all the text.
//
// The pages are rendered with html/template from templates/ and read or change things only
// through Backend, which cmd/reef implements with the CLI's own code paths; every page and
// event this package writes passes through a redactor of the configuration's secrets.
//
// Concurrency: a Server is safe for concurrent use once started. Start starts the serving
// goroutine; Close ends the open event streams (their requests' context is cancelled) and
// stops it. Each event stream (Live, WebChat) is one request goroutine that owns its
// subscriptions and closes them when the request ends.
package web
