package main

import (
	"context"

	"github.com/reefgw/reef/persistence"
)

// channelStateBucket holds the state a channel keeps for whichever node runs its inbound
// loop (a Discord bot's checkpoint), in cluster mode.
const channelStateBucket = "channels/state"

// sharedState is a channel's state under one key of the cluster's database
// (discord.SharedState). It waits for the database like the gate does.
type sharedState struct {
	gate *workGate
	key  string
}

func (s sharedState) storeOf(ctx context.Context) (persistence.Store, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.gate.ready:
		return s.gate.store, nil
	}
}

// Load returns the stored state, nil when there is none.
func (s sharedState) Load(ctx context.Context) ([]byte, error) {
	store, err := s.storeOf(ctx)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = store.View(func(r persistence.Reader) error {
		v, ok, err := r.Get(channelStateBucket, s.key)
		if ok {
			out = append([]byte(nil), v...)
		}
		return err
	})
	return out, err
}

// Update replaces the stored state with merge(old) in one transaction.
func (s sharedState) Update(ctx context.Context, merge func(old []byte) ([]byte, error)) error {
	store, err := s.storeOf(ctx)
	if err != nil {
		return err
	}
	return store.Update(func(tx persistence.Tx) error {
		old, ok, err := tx.Get(channelStateBucket, s.key)
		if err != nil {
			return err
		}
		if !ok {
			old = nil
		}
		next, err := merge(old)
		if err != nil {
			return err
		}
		return tx.Put(channelStateBucket, s.key, next)
	})
}
