package channels

import (
	"context"
	"errors"
)

// Gate says which node of a cluster runs an inbound loop (docs/scaling.md): a Telegram long
// poll, a Feishu long connection, a Discord shard. Every node sends replies through the
// platform's REST API; only the node that holds a loop's unit of work receives. A channel
// without a Gate (one node, the default) runs its loop itself.
type Gate interface {
	// Hold blocks until this node holds unit or ctx ends (then it returns ctx's error). The
	// context it returns ends when the node loses the unit; release gives it back and must
	// be called when the loop stops.
	Hold(ctx context.Context, unit string) (held context.Context, release context.CancelFunc, err error)
}

// ErrWorkMoved is Run's error when its Gate's unit moved to another node: the connector
// asks the Gate again at once (it waits there until this node may run the loop again).
var ErrWorkMoved = errors.New("the inbound loop moved to another node of the cluster")

// InboundWork names the unit of work of an account's inbound loop: "channel:telegram:default".
func InboundWork(platform, account string) string {
	if account == "" {
		account = "default"
	}
	return "channel:" + platform + ":" + account
}

// Gated runs loop under gate's unit: at once when gate is nil, else once this node holds
// the unit, with a context that ends when it loses it. It returns ErrWorkMoved when the
// unit moved while ctx goes on, nil when ctx ended.
func Gated(ctx context.Context, gate Gate, unit string, loop func(context.Context) error) error {
	if gate == nil {
		return loop(ctx)
	}
	held, release, err := gate.Hold(ctx, unit)
	if err != nil {
		return nil // ctx ended
	}
	defer release()
	err = loop(held)
	if ctx.Err() == nil && held.Err() != nil {
		return ErrWorkMoved
	}
	return err
}

// Spreader is an optional ability of a Gate: it counts the live nodes of the cluster, so
// that a connector with several units of work (a Discord bot's shards) holds only its share
// of them (the units divided by the nodes, rounded up) and they spread over the nodes.
type Spreader interface {
	Nodes(ctx context.Context) (int, error)
}
