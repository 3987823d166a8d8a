package actors_test

import (
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
)

// TestChannelHealthDescribe: each state reads as the docs show it, and a reason is shown only
// when the channel is not connected.
func TestChannelHealthDescribe(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 4, 13, 0, time.Local)
	since := time.Date(2026, 3, 1, 10, 4, 5, 0, time.Local)
	for _, tc := range []struct {
		h    actors.ChannelHealth
		want string
	}{
		{actors.ChannelHealth{State: actors.ChannelConnected, Connected: true, Reason: "stale"}, "connected"},
		{actors.ChannelHealth{State: actors.ChannelConnecting, Since: since}, "connecting (for 8s)"},
		{actors.ChannelHealth{State: actors.ChannelReconnecting, Since: since, NextTry: now.Add(8 * time.Second),
			Reason: "cannot resolve api.telegram.org (DNS)"},
			"reconnecting (since 10:04:05, next try in 8s): cannot resolve api.telegram.org (DNS)"},
		{actors.ChannelHealth{State: actors.ChannelReconnecting, Since: since, Reason: "x"}, "reconnecting (since 10:04:05, trying now): x"},
		{actors.ChannelHealth{State: actors.ChannelFailed, Reason: "token refused (401)"}, "failed: token refused (401)"},
	} {
		if got := tc.h.Describe(now); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
}
