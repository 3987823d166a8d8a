package feishu_test

import (
	"testing"

	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/feishu/feishutest"
)

func TestConformanceWebSocket(t *testing.T) {
	channeltest.Run(t, feishutest.WebSocketSetup)
}

func TestConformanceWebhook(t *testing.T) {
	channeltest.Run(t, feishutest.WebhookSetup)
}
