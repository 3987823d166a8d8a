package feishu

import "time"

// SetOrderWindow gives b's chats another ordering window (before it runs): a test on a
// loaded machine can hand its goroutines more than the product's 100 ms to arrive.
func SetOrderWindow(b *Bot, d time.Duration) { b.order = newChatOrder(d) }
