package feishutest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Webhook posts event callbacks to a bot's webhook URL the way the platform does: with
// EncryptKey set, the body is {"encrypt": base64(iv + AES-256-CBC(sha256(key), event))} and
// signed with X-Lark-Request-Timestamp, X-Lark-Request-Nonce and
// X-Lark-Signature = hex(sha256(timestamp + nonce + key + body)).
type Webhook struct {
	EncryptKey string
	Client     *http.Client // default: a client with a 10 s timeout
}

// PostOptions alter one callback, to test the bot's checks.
type PostOptions struct {
	Plain        bool // do not encrypt, even with an EncryptKey
	NoSignature  bool // leave the signature headers out
	BadSignature bool // sign with the wrong key
}

// Post sends payload to url and returns the HTTP status and response body.
func (w *Webhook) Post(ctx context.Context, url string, payload []byte, opt PostOptions) (int, []byte, error) {
	body := payload
	if w.EncryptKey != "" && !opt.Plain {
		enc, err := Encrypt(payload, w.EncryptKey)
		if err != nil {
			return 0, nil, err
		}
		body, _ = json.Marshal(map[string]string{"encrypt": enc})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if w.EncryptKey != "" && !opt.NoSignature {
		ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), randHex(8)
		key := w.EncryptKey
		if opt.BadSignature {
			key += "-wrong"
		}
		req.Header.Set("X-Lark-Request-Timestamp", ts)
		req.Header.Set("X-Lark-Request-Nonce", nonce)
		req.Header.Set("X-Lark-Signature", Sign(ts, nonce, key, body))
	}
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, got, err
}

// ChallengePayload is the url_verification callback the platform sends when a URL is set.
func ChallengePayload(token, challenge string) []byte {
	raw, _ := json.Marshal(map[string]string{"challenge": challenge, "token": token, "type": "url_verification"})
	return raw
}

// Encrypt encrypts an event body as the platform does.
func Encrypt(plain []byte, key string) (string, error) {
	sum := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return "", err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	buf := make([]byte, aes.BlockSize+len(plain)+pad)
	if _, err := rand.Read(buf[:aes.BlockSize]); err != nil {
		return "", err
	}
	copy(buf[aes.BlockSize:], plain)
	for i := len(buf) - pad; i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, buf[:aes.BlockSize]).CryptBlocks(buf[aes.BlockSize:], buf[aes.BlockSize:])
	return base64.StdEncoding.EncodeToString(buf), nil
}

// Sign computes X-Lark-Signature.
func Sign(timestamp, nonce, key string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp + nonce + key))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// webhookTarget delivers queued events by webhook.
type webhookTarget struct {
	url    func() string
	hook   *Webhook
	client *http.Client
}

// UseWebhook makes the fake deliver events by POSTing them to url() (polled until it is not
// empty) instead of over the long connection, encrypted and signed when encryptKey is set.
func (s *Server) UseWebhook(url func() string, encryptKey string) {
	client := &http.Client{Timeout: 10 * time.Second}
	s.mu.Lock()
	s.hook = &webhookTarget{url: url, client: client, hook: &Webhook{EncryptKey: encryptKey, Client: client}}
	s.mu.Unlock()
	s.kick()
}

// push posts one event; tried is false while the bot's URL is unknown.
func (h *webhookTarget) push(s *Server, p *pending) (status int, tried bool) {
	url := h.url()
	if url == "" {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	status, _, err := h.hook.Post(ctx, url, p.payload, PostOptions{})
	if err != nil {
		return 0, true
	}
	return status, true
}
