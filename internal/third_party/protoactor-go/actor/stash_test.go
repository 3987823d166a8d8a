package actor

import "testing"

func TestMessageStackIsLastInFirstOut(t *testing.T) {
	var s messageStack
	if !s.Empty() {
		t.Fatal("new stack not empty")
	}
	if m, ok := s.Pop(); ok || m != nil {
		t.Fatalf("Pop on empty stack = %v, %v; want nil, false", m, ok)
	}

	for _, m := range []string{"a", "b", "c"} {
		s.Push(m)
	}
	for _, want := range []string{"c", "b", "a"} {
		if m, ok := s.Pop(); !ok || m != want {
			t.Fatalf("Pop = %v, %v; want %s, true", m, ok, want)
		}
	}
	if !s.Empty() {
		t.Fatal("stack not empty after popping everything")
	}
}

func TestMessageStackReleasesPoppedMessages(t *testing.T) {
	var s messageStack
	s.Push("a")
	s.Push("b")
	s.Pop()
	if s.items[:2][1] != nil {
		t.Fatal("the popped message is still referenced by the stack's backing array")
	}
}
