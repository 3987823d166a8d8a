package configs

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/streaming"
)

// StreamingConfig is how a channel account shows a run while the agent works
// (docs/channels.md#live-progress): channels.<channel>.streaming, per account where accounts
// exist (an account without its own block takes its platform's).
type StreamingConfig struct {
	Mode     string                   `yaml:"mode"` // off | partial | block | progress (default)
	Progress *ProgressStreamingConfig `yaml:"progress"`
	Block    *BlockStreamingConfig    `yaml:"block"`
}

// ProgressStreamingConfig shapes a progress draft; StartDelayMs applies to every mode.
type ProgressStreamingConfig struct {
	Label        *LabelSetting `yaml:"label"`        // auto (default) | "<text>" | false
	Labels       []string      `yaml:"labels"`       // what auto picks from; default a built-in pool
	MaxLines     int           `yaml:"maxLines"`     // default 8
	MaxLineChars int           `yaml:"maxLineChars"` // default 120
	ToolProgress *bool         `yaml:"toolProgress"` // a line per tool call; default true
	StartDelayMs *int          `yaml:"startDelayMs"` // default 500
}

// BlockStreamingConfig shapes block mode.
type BlockStreamingConfig struct {
	MinChars int `yaml:"minChars"` // default 800
}

// LabelSetting is progress.label: auto, a text, or false (no label).
type LabelSetting struct {
	Text string `yaml:"-"` // "" when Off
	Off  bool   `yaml:"-"`
}

// UnmarshalYAML takes a string or false.
func (l *LabelSetting) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		if b {
			return fmt.Errorf("line %d: label: true is not a label: write auto, a text, or false", n.Line)
		}
		l.Off = true
		return nil
	}
	return n.Decode(&l.Text)
}

// Settings returns the streaming settings with defaults.
func (s *StreamingConfig) Settings() streaming.Settings {
	out := streaming.Defaults()
	if s == nil {
		return out
	}
	if s.Mode != "" {
		out.Mode = streaming.Mode(s.Mode)
	}
	if p := s.Progress; p != nil {
		if p.Label != nil {
			out.Label = p.Label.Text
			if p.Label.Off {
				out.Label = ""
			}
		}
		out.Labels = p.Labels
		if p.MaxLines > 0 {
			out.MaxLines = p.MaxLines
		}
		if p.MaxLineChars > 0 {
			out.MaxLineChars = p.MaxLineChars
		}
		if p.ToolProgress != nil {
			out.ToolProgress = *p.ToolProgress
		}
		if p.StartDelayMs != nil {
			out.StartDelay = time.Duration(*p.StartDelayMs) * time.Millisecond
		}
	}
	if s.Block != nil && s.Block.MinChars > 0 {
		out.BlockMinChars = s.Block.MinChars
	}
	return out
}

// Streaming returns the account's streaming settings with defaults.
func (a ChannelAccount) Streaming() streaming.Settings {
	switch {
	case a.Telegram != nil:
		return a.Telegram.Streaming.Settings()
	case a.Discord != nil:
		return a.Discord.Streaming.Settings()
	case a.Feishu != nil:
		return a.Feishu.Streaming.Settings()
	case a.Slack != nil:
		return a.Slack.Streaming.Settings()
	}
	return streaming.Defaults()
}

func validateStreaming(v *validator, path string, s *StreamingConfig) {
	if s == nil {
		return
	}
	path += ".streaming"
	if s.Mode != "" {
		modes := make([]string, len(streaming.Modes))
		for i, m := range streaming.Modes {
			modes[i] = string(m)
		}
		v.oneOf(path+".mode", s.Mode, modes)
	}
	if p := s.Progress; p != nil {
		v.nonNegative(path+".progress.maxLines", p.MaxLines)
		v.nonNegative(path+".progress.maxLineChars", p.MaxLineChars)
		if p.MaxLineChars > 0 && p.MaxLineChars < 10 {
			v.addf("%s.progress.maxLineChars: %d is too short to read: use 10 or more", path, p.MaxLineChars)
		}
		if p.MaxLines > 50 {
			v.addf("%s.progress.maxLines: %d lines do not fit one message: use at most 50", path, p.MaxLines)
		}
		if p.StartDelayMs != nil && (*p.StartDelayMs < 0 || *p.StartDelayMs > 600000) {
			v.addf("%s.progress.startDelayMs: %d is out of range: use 0 to 600000 (10 minutes)", path, *p.StartDelayMs)
		}
		if p.Label != nil && !p.Label.Off && strings.TrimSpace(p.Label.Text) == "" {
			v.addf("%s.progress.label: empty: write auto, a text, or false for no label", path)
		}
		for i, l := range p.Labels {
			if strings.TrimSpace(l) == "" {
				v.addf("%s.progress.labels[%d]: empty: remove it or write a word", path, i)
			}
		}
	}
	if s.Block != nil {
		v.nonNegative(path+".block.minChars", s.Block.MinChars)
	}
}
