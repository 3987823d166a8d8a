package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
)

// newLogger builds the process logger. toFile sends logs to $REEF_HOME/logs/reef.log (for
// `reef chat`, whose terminal belongs to the conversation) unless log.file says otherwise.
// Each line goes to the also writers too (the gateway's log ring, internal/logring).
func newLogger(cfg *configs.Config, toFile bool, also ...io.Writer) (zerolog.Logger, func(), error) {
	level, err := zerolog.ParseLevel(cfg.Log.Level)
	if err != nil || cfg.Log.Level == "" {
		level = zerolog.InfoLevel
	}
	var w io.Writer = os.Stderr
	closer := func() {}
	file := cfg.Log.File
	if file == "" && toFile {
		file = filepath.Join(cfg.Home, "logs", "reef.log")
	}
	if file != "" {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return zerolog.Nop(), closer, err
		}
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return zerolog.Nop(), closer, err
		}
		w, closer = f, func() { f.Close() }
	} else if cfg.Log.Format != "json" && isatty.IsTerminal(os.Stderr.Fd()) {
		w = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05"}
	}
	if len(also) > 0 {
		w = zerolog.MultiLevelWriter(append([]io.Writer{w}, also...)...)
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), closer, nil
}
