package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
)

// watchEvery is how often the gateway looks at reef.yaml: a stat each time, a read and a
// hash only when its size or modification time changed.
const watchEvery = time.Second

// settleFor is how long a changed file must stay unchanged before it is read: an editor's
// save or a copy may take more than one write.
const settleFor = 300 * time.Millisecond

// watch reloads on SIGHUP and when the configuration file changes, until stop is called.
func (l *reloader) watch() (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		last := statOf(l.file())
		for {
			select {
			case <-done:
				return
			case <-hup:
				l.reload("SIGHUP")
				last = statOf(l.file())
			case <-tick.C:
				now := statOf(l.file())
				if now == last {
					continue
				}
				time.Sleep(settleFor)
				if now = statOf(l.file()); now == last {
					continue
				}
				last = now
				data, err := os.ReadFile(l.file())
				if err == nil && !l.changedOnDisk(data) {
					continue // touched, or written back as it was
				}
				l.reload("reef.yaml changed")
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-finished
	}
}

// fileStat is what the watcher compares: cheap, and changed by every write.
type fileStat struct {
	size  int64
	mtime time.Time
	found bool
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}
	}
	return fileStat{size: fi.Size(), mtime: fi.ModTime(), found: true}
}

// accountID is the channels.ID of a configured bot account.
func accountID(a configs.ChannelAccount) string { return channels.ID(a.Channel, a.Account) }
