package web

import (
	"sync"
	"time"
)

// cache keeps fetched pages in memory for ttl, at most size of them; when full, the entry that
// expires first goes. Safe for concurrent use.
type cache struct {
	mu      sync.Mutex
	size    int
	ttl     time.Duration
	now     func() time.Time
	entries map[string]cacheEntry
}

type cacheEntry struct {
	page    fetchResult
	expires time.Time
}

func newCache(size int, ttl time.Duration, now func() time.Time) *cache {
	return &cache{size: size, ttl: ttl, now: now, entries: make(map[string]cacheEntry, size)}
}

func (c *cache) get(key string) (fetchResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return fetchResult{}, false
	}
	if !c.now().Before(e.expires) {
		delete(c.entries, key)
		return fetchResult{}, false
	}
	return e.page, true
}

func (c *cache) put(key string, page fetchResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		var oldest string
		var oldestAt time.Time
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
				continue
			}
			if oldest == "" || e.expires.Before(oldestAt) {
				oldest, oldestAt = k, e.expires
			}
		}
		if len(c.entries) >= c.size {
			delete(c.entries, oldest)
		}
	}
	c.entries[key] = cacheEntry{page: page, expires: now.Add(c.ttl)}
}
