package feishu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// permanentCodes are send errors that retrying will not fix.
var permanentCodes = map[int]bool{
	230001:   true,                 // invalid request (content rejected)
	230002:   true,                 // the bot is not in the chat
	230006:   true,                 // bot ability not enabled for the app
	230013:   true,                 // the user is outside the bot's availability
	230025:   true,                 // message too long
	230027:   true,                 // no permission to send
	230028:   true,                 // message blocked by the tenant's review
	99991672: true, 99991679: true, // the app lacks the scope
}

// rateCodes mean "slow down".
var rateCodes = map[int]bool{99991400: true, 230020: true}

// goneCodes mean the message replied to no longer exists; the reply goes to the chat instead.
var goneCodes = map[int]bool{230011: true, 231003: true}

// maxRateRetries bounds how often one call is retried after a rate limit.
const maxRateRetries = 5

// Send posts out.Text to its chat, split into messages of at most Limit runes with code fences
// balanced, rendered as markdown (a post with one md element). The first chunk replies to
// out.ReplyToID when set (every chunk, inside a thread); the rest go to the chat. It returns
// the ids of the messages created. Each chunk carries an idempotency key derived from the
// outbox row, so a retried Send does not double chunks that already went out.
func (b *Bot) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	if out.ChatID == "" {
		return nil, b.errorf(channels.ErrPermanent, "feishu: send: no chat id")
	}
	var ids []string
	var chunks []string
	if strings.TrimSpace(out.Text) != "" {
		chunks = channels.CapChunks(chunk(out.Text), out.MaxChunks, channels.OmittedNote)
	}
	for i, text := range chunks {
		key := ""
		if out.OutboxSeq != 0 {
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", out.SessionKey, out.OutboxSeq, i)))
			key = hex.EncodeToString(sum[:16])
		}
		content := postContent(text)
		var id string
		var err error
		if out.ReplyToID != "" && (i == 0 || out.ThreadID != "") {
			id, err = b.reply(ctx, out.ReplyToID, content, out.ThreadID != "", key)
			if code, ok := err.(*codeErr); ok && goneCodes[code.code] {
				id, err = b.create(ctx, out.ChatID, content, key)
			}
		} else {
			id, err = b.create(ctx, out.ChatID, content, key)
		}
		if err != nil {
			return ids, b.wrap("send", err)
		}
		ids = append(ids, id)
	}
	if len(out.Media) > 0 { // the files follow the text (media.go)
		more, err := b.sendFiles(ctx, out)
		return append(ids, more...), err
	}
	return ids, nil
}

// fileKey is the idempotency key of the i-th file message of an outbox row.
func fileKey(session string, seq uint64, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00file\x00%d", session, seq, i)))
	return hex.EncodeToString(sum[:16])
}

// Edit replaces the text of a message the bot sent (PUT /open-apis/im/v1/messages/{id}). Text
// longer than Limit is cut to its first chunk. The platform refuses edits of a recalled
// message (230011), after 20 edits, past the tenant's edit window and of other message types:
// every such refusal (a 4xx answer that is not a rate limit) wraps channels.ErrPermanent, so
// the caller sends the text as a new message instead.
func (b *Bot) Edit(ctx context.Context, chatID, messageID, text string) error {
	if messageID == "" {
		return b.errorf(channels.ErrPermanent, "feishu: edit: no message id")
	}
	content := postContent(chunk(text)[0])
	_, err := b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
		resp, err := b.im.Message.Update(ctx, larkim.NewUpdateMessageReqBuilder().
			MessageId(messageID).
			Body(&larkim.UpdateMessageReqBody{MsgType: ptr("post"), Content: &content}).Build())
		if err != nil {
			return nil, larkcore.CodeError{}, "", err
		}
		return resp.ApiResp, resp.CodeError, "", nil
	})
	if ce, ok := err.(*codeErr); ok && ce.status >= 400 && ce.status < 500 && !rateCodes[ce.code] && ce.status != http.StatusTooManyRequests {
		return b.errorf(channels.ErrPermanent, "feishu: edit refused: %v", err)
	}
	if err != nil {
		return b.wrap("edit", err)
	}
	return nil
}

// Delete recalls a message the bot sent (DELETE /open-apis/im/v1/messages/{id}); a message
// already recalled or gone counts as deleted.
func (b *Bot) Delete(ctx context.Context, chatID, messageID string) error {
	if messageID == "" {
		return b.errorf(channels.ErrPermanent, "feishu: recall: no message id")
	}
	_, err := b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
		resp, err := b.im.Message.Delete(ctx, larkim.NewDeleteMessageReqBuilder().MessageId(messageID).Build())
		if err != nil {
			return nil, larkcore.CodeError{}, "", err
		}
		return resp.ApiResp, resp.CodeError, "", nil
	})
	if ce, ok := err.(*codeErr); ok && goneCodes[ce.code] {
		return nil
	}
	if err != nil {
		return b.wrap("recall", err)
	}
	return nil
}

func (b *Bot) create(ctx context.Context, chatID, content, key string) (string, error) {
	return b.createTyped(ctx, chatID, "post", content, key)
}

func (b *Bot) createTyped(ctx context.Context, chatID, msgType, content, key string) (string, error) {
	body := &larkim.CreateMessageReqBody{ReceiveId: &chatID, MsgType: &msgType, Content: &content}
	if key != "" {
		body.Uuid = &key
	}
	return b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
		resp, err := b.im.Message.Create(ctx, larkim.NewCreateMessageReqBuilder().
			ReceiveIdType(larkim.CreateMessageV1ReceiveIDTypeChatId).Body(body).Build())
		if err != nil {
			return nil, larkcore.CodeError{}, "", err
		}
		id := ""
		if resp.Data != nil {
			id = str(resp.Data.MessageId)
		}
		return resp.ApiResp, resp.CodeError, id, nil
	})
}

func (b *Bot) reply(ctx context.Context, messageID, content string, inThread bool, key string) (string, error) {
	body := &larkim.ReplyMessageReqBody{MsgType: ptr("post"), Content: &content}
	if inThread {
		body.ReplyInThread = &inThread
	}
	if key != "" {
		body.Uuid = &key
	}
	return b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
		resp, err := b.im.Message.Reply(ctx, larkim.NewReplyMessageReqBuilder().
			MessageId(messageID).Body(body).Build())
		if err != nil {
			return nil, larkcore.CodeError{}, "", err
		}
		id := ""
		if resp.Data != nil {
			id = str(resp.Data.MessageId)
		}
		return resp.ApiResp, resp.CodeError, id, nil
	})
}

// codeErr is a platform error answer; Unwrap gives channels.ErrPermanent for permanent codes.
type codeErr struct {
	code   int
	msg    string
	status int
}

func (e *codeErr) Error() string {
	return fmt.Sprintf("HTTP %d, code %d: %s", e.status, e.code, e.msg)
}

func (e *codeErr) Unwrap() error {
	if permanentCodes[e.code] {
		return channels.ErrPermanent
	}
	return nil
}

// call runs one API request, waiting and retrying while the platform rate-limits it (bounded
// by ctx, maxRateRetries and maxRetryWait). It returns the message id the call produced.
func (b *Bot) call(ctx context.Context, do func() (*larkcore.ApiResp, larkcore.CodeError, string, error)) (string, error) {
	for attempt := 0; ; attempt++ {
		resp, ce, id, err := do()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", err
		}
		status := resp.StatusCode
		if ce.Code == 0 && status < 300 {
			return id, nil
		}
		e := &codeErr{code: ce.Code, msg: ce.Msg, status: status}
		if !rateCodes[ce.Code] && status != http.StatusTooManyRequests || attempt >= maxRateRetries {
			return "", e
		}
		wait := retryAfter(resp.Header, attempt)
		if wait > b.maxRetryWait {
			return "", e
		}
		b.log.Debug().Str("wait", wait.Round(time.Millisecond).String()).Int("code", ce.Code).Msg("rate limited")
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// retryAfter reads the platform's wait hint (x-ogw-ratelimit-reset or Retry-After, seconds),
// else backs off exponentially from 250 ms.
func retryAfter(h http.Header, attempt int) time.Duration {
	for _, name := range []string{"X-Ogw-Ratelimit-Reset", "Retry-After"} {
		if s, err := strconv.ParseFloat(h.Get(name), 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
	}
	return 250 * time.Millisecond << attempt
}

// chunk splits text into messages of at most Limit runes, fences balanced.
func chunk(text string) []string {
	reserve := channels.FenceReserve
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimLeft(line, " "); strings.HasPrefix(t, "```") {
			reserve = max(reserve, channels.FenceReserve+channels.Runes(t))
		}
	}
	reserve = min(reserve, Limit/2)
	return channels.BalanceFences(channels.Split(text, Limit-reserve, channels.Runes))
}

// postContent renders text as the content of a post message: one md element, so markdown
// (code blocks included) renders as such.
func postContent(text string) string {
	type elem struct {
		Tag  string `json:"tag"`
		Text string `json:"text"`
	}
	type post struct {
		Content [][]elem `json:"content"`
	}
	raw, _ := json.Marshal(map[string]post{"zh_cn": {Content: [][]elem{{{Tag: "md", Text: text}}}}})
	return string(raw)
}

func ptr[T any](v T) *T { return &v }
