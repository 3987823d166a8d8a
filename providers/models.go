package providers

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ModelLister is implemented by clients that can list the models their provider offers
// (OpenAI and compatible servers: GET /v1/models; Anthropic: GET /v1/models; Gemini:
// GET /v1beta/models).
type ModelLister interface {
	Models(ctx context.Context) ([]string, error)
}

// ModelNotFoundError says that the provider does not offer the model a request named. It
// matches ErrModelNotFound with errors.Is.
type ModelNotFoundError struct {
	Provider string   // the provider's name in the configuration: "openai"
	Model    string   // the model asked for, without the provider: "gpt-5x"
	Offered  []string // the models the provider lists, sorted
	Message  string   // the provider's own message
}

func (e *ModelNotFoundError) Error() string {
	msg := e.Provider + ": model " + `"` + e.Model + `"` + " not found"
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

func (e *ModelNotFoundError) Is(target error) bool { return target == ErrModelNotFound }

// listTimeout bounds the model list a client fetches to explain a 404.
const listTimeout = 10 * time.Second

// mentionsMissingModel reports whether a 400 answer's message says a model does not exist
// (some compatible servers answer so instead of 404).
func mentionsMissingModel(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist"))
}

// CheckModel explains an error answer to a request for model: when the answer is a 404 (or a 400
// saying the model does not exist) and the provider's model list works and lacks the model, it is a
// ModelNotFoundError with that list. Otherwise (a wrong base URL also answers 404, and then
// the list fails too) err is returned as it was.
func CheckModel(ctx context.Context, err error, provider, model string, list func(context.Context) ([]string, error)) error {
	var api *APIError
	if !errors.As(err, &api) || api.Status != http.StatusNotFound && !(api.Status == http.StatusBadRequest && mentionsMissingModel(api.Message)) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	offered, lerr := list(ctx)
	if lerr != nil || slices.Contains(offered, model) {
		return err
	}
	slices.Sort(offered)
	return &ModelNotFoundError{Provider: provider, Model: model, Offered: offered, Message: api.Message}
}
