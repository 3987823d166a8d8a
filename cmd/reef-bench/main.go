// Command reef-bench measures a reef binary from outside, with nothing leaving the machine:
// it starts fake platform APIs (Telegram, Discord, Feishu) and a fake OpenAI-compatible model
// on 127.0.0.1, writes a temporary REEF_HOME pointing at them, runs `reef gateway` as a child
// process and plays users. It measures exactly the binary users run: the one given by -reef,
// else a `reef` next to this executable, else one it builds from ./cmd/reef.
//
//	reef-bench [-reef PATH] [-scenario all|idle|burst|chats|tools|passivated] ...
//	reef-bench -floor ...   the burst against the floor gateway (reef's channel and model client only)
//	reef-bench crash ...    SIGKILL and restart the gateway under load; nothing lost or doubled
//	reef-bench soak ...     a steady load for a long time; memory, goroutines and files sampled
//	reef-bench cluster ...  several nodes in cluster mode on one PostgreSQL, one SIGKILLed; per-message database costs
//
// It is not part of the product: it may link the test fakes, reef's own packages and the
// testing package; `reef` may not (internal/depcheck).
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
