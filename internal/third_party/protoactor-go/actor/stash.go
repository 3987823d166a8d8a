package actor

// reef patch: the stash was github.com/emirpasic/gods/stacks/linkedliststack; this is the
// part of it the actor context uses (Push, Pop, Empty), on a slice.

// messageStack is a last-in, first-out stack of messages. Not safe for concurrent use.
type messageStack struct {
	items []interface{}
}

// Push puts a message on top of the stack.
func (s *messageStack) Push(message interface{}) {
	s.items = append(s.items, message)
}

// Pop removes the message on top of the stack and returns it; ok is false if the stack is empty.
func (s *messageStack) Pop() (message interface{}, ok bool) {
	n := len(s.items)
	if n == 0 {
		return nil, false
	}

	message = s.items[n-1]
	s.items[n-1] = nil // release the message
	s.items = s.items[:n-1]

	return message, true
}

// Empty reports whether the stack holds no messages.
func (s *messageStack) Empty() bool {
	return len(s.items) == 0
}
