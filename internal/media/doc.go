// Package media is how reef handles the files people send and the files agents send back.
//
// Inbound: a channel announces a message's files as messages.Media with a platform handle;
// before the run that answers the message, Fetch downloads each one (capped per kind by
// Limits) into the agent's workspace under inbox/<date>/ with a safe name, transcribes voice
// and audio when a Transcriber is configured, reads text-like documents, and Describe writes
// what the model is told about them. Images go to vision models as image input (LoadImages).
//
// Outbound: Resolve turns a reply's "MEDIA: <ref>" line or the message tool's media into a
// messages.Media confined to the workspace (os.Root: no path leaves it, symlinks included),
// size-capped, or an error the agent can act on.
//
// Nothing here knows a platform: channels implement channels.Fetcher and open outbound
// files themselves with os.OpenInRoot.
package media
