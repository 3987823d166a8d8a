package providers

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// OpenStream sends a streaming request under a watchdog: send must issue the request on the
// context it is given, and if no response headers arrive within idle the request is
// cancelled and OpenStream reports ErrIdleTimeout (prefixed with name). On success it
// returns the response and the cancel func that ends the request, to call once the stream is
// done. Errors from send are returned as they are, for the client to classify.
func OpenStream(ctx context.Context, name string, idle time.Duration,
	send func(context.Context) (*http.Response, error)) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	var fired atomic.Bool
	watchdog := time.AfterFunc(idle, func() { fired.Store(true); cancel() })
	resp, err := send(ctx)
	if !watchdog.Stop() && err == nil {
		resp.Body.Close() // the watchdog fired as the headers arrived
		err = context.Canceled
	}
	if err != nil {
		cancel()
		if fired.Load() {
			err = fmt.Errorf("%s: no response headers for %s: %w", name, idle, ErrIdleTimeout)
		}
		return nil, nil, err
	}
	return resp, cancel, nil
}
