package actor

import (
	"log/slog"
	"os"
	"time"
)

type Config struct {
	DeadLetterThrottleInterval  time.Duration      // throttle deadletter logging after this interval
	DeadLetterThrottleCount     int32              // throttle deadletter logging after this count
	DeadLetterRequestLogging    bool               // do not log dead-letters with sender
	DeveloperSupervisionLogging bool               // console log and promote supervision logs to Warning level
	DiagnosticsSerializer       func(Actor) string // extract diagnostics from actor and return as string
	LoggerFactory               func(system *ActorSystem) *slog.Logger
}

func defaultConfig() *Config {
	return &Config{
		DeadLetterThrottleInterval:  1 * time.Second,
		DeadLetterThrottleCount:     3,
		DeadLetterRequestLogging:    true,
		DeveloperSupervisionLogging: false,
		DiagnosticsSerializer: func(actor Actor) string {
			return ""
		},
		LoggerFactory: func(system *ActorSystem) *slog.Logger {
			w := os.Stderr

			// create a new logger
			// reef patch: a plain text handler instead of github.com/lmittmann/tint's
			// colored one, so tint leaves the build (reef supplies its own LoggerFactory).
			return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
				Level: slog.LevelInfo,
			})).With("lib", "Proto.Actor").
				With("system", system.ID)
		},
	}
}

func NewConfig() *Config {
	return defaultConfig()
}
