package actors

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// recoverMiddleware logs the stack of a panic inside Receive through zerolog, then lets the
// panic continue to protoactor's supervision (which logs no stack and drops the message).
func recoverMiddleware(log zerolog.Logger) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(ctx actor.ReceiverContext, env *actor.MessageEnvelope) {
			defer func() {
				if r := recover(); r != nil {
					log.Error().
						Str("actor", ctx.Self().GetId()).
						Str("msg", fmt.Sprintf("%T", env.Message)).
						Str("panic", fmt.Sprint(r)).
						Str("stack", string(debug.Stack())).
						Msg("actor panicked")
					panic(r)
				}
			}()
			next(ctx, env)
		}
	}
}

// SystemConfig routes protoactor's own slog output to zerolog, at warn level and above
// (its info lines are per-actor chatter).
func SystemConfig(log zerolog.Logger) *actor.Config {
	return actor.Configure(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			l := log.With().Str("lib", "protoactor").Logger().Level(maxLevel(log.GetLevel(), zerolog.WarnLevel))
			return slog.New(zerolog.NewSlogHandler(l))
		}),
		actor.WithDeadLetterThrottleCount(3),
	)
}

func maxLevel(a, b zerolog.Level) zerolog.Level {
	if a > b {
		return a
	}
	return b
}
