package providers

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestCheckModel(t *testing.T) {
	notFound := StatusError("openai", http.StatusNotFound, nil, "Not Found", false)
	offered := func(context.Context) ([]string, error) { return []string{"gpt-4o", "gpt-4o-mini"}, nil }
	broken := func(context.Context) ([]string, error) { return nil, notFound }
	tests := []struct {
		name string
		err  error
		list func(context.Context) ([]string, error)
		want bool // ErrModelNotFound
	}{
		{"404 and the list lacks the model", notFound, offered, true},
		{"400 saying so", StatusError("ollama", 400, nil, `model "gpt-5x" not found, try pulling it first`, false), offered, true},
		{"404 and the list fails too: a wrong base URL", notFound, broken, false},
		{"404 but the model is listed", notFound, func(context.Context) ([]string, error) { return []string{"gpt-5x"}, nil }, false},
		{"another error", StatusError("openai", 400, nil, "Invalid request.", false), offered, false},
		{"not an API error", errors.New("dial tcp: refused"), offered, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckModel(context.Background(), tt.err, "openai", "gpt-5x", tt.list)
			if errors.Is(got, ErrModelNotFound) != tt.want {
				t.Errorf("CheckModel = %v, want model not found: %v", got, tt.want)
			}
			if !tt.want && got != tt.err {
				t.Errorf("CheckModel changed the error to %v", got)
			}
		})
	}
}
