package configs

import (
	"strings"
	"testing"
)

func TestExecBackgroundDefaults(t *testing.T) {
	b := validConfig().Tools.Exec.Background
	want := ExecBackgroundConfig{MaxRunning: 4, MaxTotal: 32, MaxKept: 16, KeepFinishedMinutes: 60, OutputBytes: 1 << 20}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
}

func TestValidateExecBackground(t *testing.T) {
	tests := []struct {
		name string
		b    ExecBackgroundConfig
		want []string // substrings of the error; nil: valid
	}{
		{name: "lower limits", b: ExecBackgroundConfig{MaxRunning: 1, MaxTotal: 2, MaxKept: 1, KeepFinishedMinutes: 5, OutputBytes: 4096}},
		{name: "negative", b: ExecBackgroundConfig{MaxRunning: -1},
			want: []string{"tools.exec.background.maxRunning: -1 is negative"}},
		{name: "absurd", b: ExecBackgroundConfig{MaxTotal: 1000000, OutputBytes: 1 << 30, KeepFinishedMinutes: 999999},
			want: []string{"tools.exec.background.maxTotal: 1000000 is out of range: use a number from 1 to 4096",
				"tools.exec.background.keepFinishedMinutes: 999999 is out of range",
				"tools.exec.background.outputBytes: 1073741824 is out of range: use a number from 1024 to 67108864"}},
		{name: "tiny ring", b: ExecBackgroundConfig{OutputBytes: 10},
			want: []string{"tools.exec.background.outputBytes: 10 is out of range"}},
		{name: "session above gateway", b: ExecBackgroundConfig{MaxRunning: 8, MaxTotal: 4},
			want: []string{"tools.exec.background.maxRunning: 8 is above tools.exec.background.maxTotal (4)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Providers: map[string]ProviderConfig{"openai": {APIKey: "sk"}}}
			c.Tools.Exec.Background = tt.b
			ApplyDefaults(&c, envOf(map[string]string{"HOME": "/home/u"}))
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				if c.Tools.Exec.Background.MaxTotal != tt.b.MaxTotal {
					t.Errorf("maxTotal: got %d, want %d", c.Tools.Exec.Background.MaxTotal, tt.b.MaxTotal)
				}
				return
			}
			if err == nil {
				t.Fatalf("got valid, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
