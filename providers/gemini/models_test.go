package gemini_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

// TestUnknownModelSaysWhatIsOffered: a 404 for a model the provider does not list is
// ErrModelNotFound with the list; another error stays what it was.
func TestUnknownModelSaysWhatIsOffered(t *testing.T) {
	c, _, _ := setup(t, fake.Reply{Status: http.StatusNotFound})
	_, err := c.Stream(context.Background(), providers.Request{Model: "gemini-5x", Messages: userReq("hi").Messages})
	var nf *providers.ModelNotFoundError
	if !errors.Is(err, providers.ErrModelNotFound) || !errors.As(err, &nf) {
		t.Fatalf("got %v, want ErrModelNotFound", err)
	}
	if nf.Model != "gemini-5x" || !cmp.Equal(nf.Offered, []string{"gemini-fake"}) {
		t.Errorf("got model %q offered %q, want gemini-5x and [gemini-fake]", nf.Model, nf.Offered)
	}
	models, err := c.Models(context.Background())
	if err != nil || !cmp.Equal(models, []string{"gemini-fake"}) {
		t.Errorf("Models = %q, %v", models, err)
	}
	c2, _, _ := setup(t, fake.Reply{Status: http.StatusBadRequest})
	if _, err := c2.Stream(context.Background(), providers.Request{Model: "gemini-5x", Messages: userReq("hi").Messages}); errors.Is(err, providers.ErrModelNotFound) || !errors.Is(err, providers.ErrBadRequest) {
		t.Errorf("a 400 became %v, want ErrBadRequest", err)
	}
}
