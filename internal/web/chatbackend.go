package web

import (
	"context"
	"time"
)

// ChatBackend is what WebChat's conversations need beyond Backend: their names, and the
// models the picker offers. A Config with a Chat needs a Backend that implements it too;
// cmd/reef's does, keeping the records in the store (bucket webchat/chats).
type ChatBackend interface {
	// Chats are the conversations' records by chat id (those renamed, created or deleted
	// here; a conversation without one is listed from its session alone).
	Chats(ctx context.Context) (map[string]Chat, error)
	// PutChat creates or replaces a conversation's record.
	PutChat(ctx context.Context, c Chat) error
	// ChatModels lists the models /model offers the owner in the agent's conversations, the
	// agent's own model first ("" = the default agent).
	ChatModels(ctx context.Context, agentID string) ([]string, error)
}

// Chat is a WebChat conversation's record.
type Chat struct {
	ID      string    `json:"id"`
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	// Deleted hides it from the list; its transcript stays in Sessions.
	Deleted bool `json:"deleted,omitempty"`
}

// ThinkLevels are what the thinking picker offers (/think's arguments).
var ThinkLevels = []string{"default", "off", "low", "medium", "high"}
