package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"

	"github.com/reefgw/reef/channels"
)

// Run receives messages until ctx ends: it fetches the bot's identity, then serves the
// long-connection WebSocket or the webhook. It returns nil when ctx ended, an error wrapping
// channels.ErrAuth when the platform refused the credentials, another error otherwise.
func (b *Bot) Run(ctx context.Context, deliver channels.Deliver) error {
	if err := b.fetchBotInfo(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var err error
	if b.cfg.Mode == ModeWebhook {
		err = b.runWebhook(ctx, deliver)
	} else { // in a cluster only the node that holds the app's inbound loop connects
		if b.cfg.Gate != nil {
			b.reachable() // the bot's info answered: this node sends, whoever receives
		}
		err = channels.Gated(ctx, b.cfg.Gate, channels.InboundWork("feishu", b.cfg.Account), func(ctx context.Context) error {
			return b.runWebSocket(ctx, deliver)
		})
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// authCodes are platform error codes that mean the app's credentials are refused: restarting
// will not help. (An invalid tenant token, 9999166x, is not among them: the SDK fetches a new
// one when the cached one expires, so a restart with backoff recovers.)
var authCodes = map[int]bool{
	10003:    true, // invalid app_id
	10014:    true, // app secret invalid
	10015:    true, // app secret invalid (marketplace)
	99991401: true, // the server's IP is not in the app's allowlist
}

// fetchBotInfo learns the bot's open_id (for mention detection) and name.
func (b *Bot) fetchBotInfo(ctx context.Context) error {
	resp, err := larkcore.Request(ctx, &larkcore.ApiReq{HttpMethod: http.MethodGet, ApiPath: "/open-apis/bot/v3/info",
		SupportedAccessTokenTypes: []larkcore.AccessTokenType{larkcore.AccessTokenTypeTenant}}, b.sdk)
	if err != nil {
		if code, msg := codeError(err); authCodes[code] {
			return b.errorf(channels.ErrAuth, "feishu: the platform refused the app credentials (code %d %s): check appId and appSecret (%v)", code, msg, channels.ErrAuth)
		}
		return b.wrap("bot info", err)
	}
	var info struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Bot  struct {
			AppName string `json:"app_name"`
			OpenID  string `json:"open_id"`
		} `json:"bot"`
	}
	if err := json.Unmarshal(resp.RawBody, &info); err != nil {
		return b.errorf(nil, "feishu: bot info: HTTP %d, unreadable body", resp.StatusCode)
	}
	if info.Code != 0 {
		if authCodes[info.Code] {
			return b.errorf(channels.ErrAuth, "feishu: the platform refused the app credentials (code %d %s): check appId and appSecret (%v)", info.Code, info.Msg, channels.ErrAuth)
		}
		return b.errorf(nil, "feishu: bot info: code %d %s", info.Code, info.Msg)
	}
	b.mu.Lock()
	b.openID = info.Bot.OpenID
	if b.botName == "" {
		b.botName = info.Bot.AppName
	}
	b.mu.Unlock()
	b.log.Info().Str("openId", info.Bot.OpenID).Str("name", info.Bot.AppName).Msg("bot identity")
	return nil
}

// codeError returns the platform code and message of err when it is a larkcore.CodeError
// (value or pointer), else 0 and "".
func codeError(err error) (int, string) {
	var ce larkcore.CodeError
	if errors.As(err, &ce) {
		return ce.Code, ce.Msg
	}
	var pce *larkcore.CodeError
	if errors.As(err, &pce) && pce != nil {
		return pce.Code, pce.Msg
	}
	return 0, ""
}

// runWebSocket serves the long connection until ctx ends. The SDK reconnects after drops; it
// returns early only on errors it does not retry (refused credentials, too many connections).
func (b *Bot) runWebSocket(ctx context.Context, deliver channels.Deliver) error {
	logger := &sdkLogger{log: b.log, red: b.red}
	handler := dispatcher.NewEventDispatcher("", "")
	handler.InitConfig(func(c *larkcore.Config) { c.Logger = logger })
	handler.OnP2MessageReceiveV1(func(ctx context.Context, ev *larkim.P2MessageReceiveV1) error {
		return b.deliverBounded(ctx, deliver, ev)
	})
	cli := larkws.NewClient(b.cfg.AppID, b.cfg.AppSecret,
		larkws.WithEventHandler(handler),
		larkws.WithDomain(b.base),
		larkws.WithHttpClient(b.http),
		larkws.WithLogger(logger),
		larkws.WithLogLevel(larkcore.LogLevelDebug),
		larkws.WithOnReady(func() { b.log.Info().Msg("websocket connected"); b.reachable() }),
		larkws.WithOnReconnected(func() { b.log.Info().Msg("websocket reconnected"); b.reachable() }),
	)
	err := cli.Start(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return b.wsError(err)
}

// wsAuthCodes are the long-connection endpoint's codes for refused app credentials.
var wsAuthCodes = map[int]bool{1000040344: true}

// wsError explains why the long connection ended. Only refused credentials wrap
// channels.ErrAuth; everything else (the connection limit included: the SDK reports it as a
// client error with code 514) is worth another try, and the caller restarts with backoff.
func (b *Bot) wsError(err error) error {
	var ce *larkws.ClientError
	switch {
	case err == nil:
		return b.errorf(nil, "feishu: websocket: connection closed")
	case !errors.As(err, &ce):
		return b.wrap("websocket", err)
	case authCodes[ce.Code] || wsAuthCodes[ce.Code]:
		return b.errorf(channels.ErrAuth, "feishu: the platform refused the app credentials (code %d %s): check appId and appSecret (%v)", ce.Code, ce.Msg, channels.ErrAuth)
	case ce.Code == larkws.AuthFailed || ce.Code == larkws.ExceedConnLimit:
		return b.errorf(nil, "feishu: connection limit reached: the app already holds as many long connections as the platform allows "+
			"(another reef or SDK client with this app id?); retrying")
	}
	return b.errorf(nil, "feishu: websocket refused (code %d %s)", ce.Code, ce.Msg)
}

// handle delivers one event. Its error travels back to the platform as a failed ack, so the
// event is delivered again.
func (b *Bot) handle(ctx context.Context, deliver channels.Deliver, ev *larkim.P2MessageReceiveV1) error {
	in, ok := b.normalize(ev)
	if !ok {
		return nil
	}
	if parent := str(ev.Event.Message.ParentId); parent != "" {
		in.ReplyTo = b.parentText(ctx, parent)
	}
	if err := deliver(ctx, in); err != nil {
		b.log.Warn().Err(b.wrap("deliver", err)).Str("message", in.MessageID).Msg("delivery failed; the platform will redeliver")
		return b.wrap("deliver", err)
	}
	return nil
}

// parentWait bounds the lookup of the message replied to; the delivery matters more.
const parentWait = time.Second

// parentText returns the text of the message replied to, or "" when it cannot be had quickly.
func (b *Bot) parentText(ctx context.Context, messageID string) string {
	ctx, cancel := context.WithTimeout(ctx, parentWait)
	defer cancel()
	resp, err := b.im.Message.Get(ctx, larkim.NewGetMessageReqBuilder().MessageId(messageID).Build())
	if err != nil || !resp.Success() || resp.Data == nil || len(resp.Data.Items) == 0 || resp.Data.Items[0].Body == nil {
		b.log.Debug().Str("parent", messageID).Msg("message replied to not available")
		return ""
	}
	item := resp.Data.Items[0]
	var ms []*larkim.MentionEvent
	for _, m := range item.Mentions {
		if m == nil {
			continue
		}
		me := &larkim.MentionEvent{Key: m.Key, Name: m.Name}
		if str(m.IdType) == "open_id" || str(m.IdType) == "" {
			me.Id = &larkim.UserId{OpenId: m.Id}
		}
		ms = append(ms, me)
	}
	openID, name := b.self()
	return messageText(str(item.MsgType), str(item.Body.Content), mentionsOf(ms, openID, name))
}
