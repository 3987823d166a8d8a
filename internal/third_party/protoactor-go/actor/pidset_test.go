package actor

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPIDSet_Empty(t *testing.T) {
	var s PIDSet
	assert.True(t, s.Empty())
}

func TestPIDSet_Clear(t *testing.T) {
	var s PIDSet
	s.Add(NewPID(localAddress, "p1"))
	s.Add(NewPID(localAddress, "p2"))
	s.Add(NewPID(localAddress, "p3"))
	assert.Equal(t, 3, s.Len())
	s.Clear()
	assert.True(t, s.Empty())
	assert.Len(t, s.pids, 0)
}

func TestPIDSet_Remove(t *testing.T) {
	var s PIDSet
	s.Add(NewPID(localAddress, "p1"))
	s.Add(NewPID(localAddress, "p2"))
	s.Add(NewPID(localAddress, "p3"))
	assert.Equal(t, 3, s.Len())

	s.Remove(NewPID(localAddress, "p3"))
	assert.Equal(t, 2, s.Len())
	assert.False(t, s.Contains(NewPID(localAddress, "p3")))
}

func TestPIDSet_AddSmall(t *testing.T) {
	s := NewPIDSet()
	p1 := NewPID(localAddress, "p1")
	s.Add(p1)
	assert.False(t, s.Empty())
	p1 = NewPID(localAddress, "p1")
	s.Add(p1)
	assert.Equal(t, 1, s.Len())
}

func TestPIDSet_Values(t *testing.T) {
	var s PIDSet
	s.Add(NewPID(localAddress, "p1"))
	s.Add(NewPID(localAddress, "p2"))
	s.Add(NewPID(localAddress, "p3"))
	assert.False(t, s.Empty())

	r := s.Values()
	assert.Len(t, r, 3)
}

func TestPIDSet_AddMap(t *testing.T) {
	s := NewPIDSet()
	p1 := NewPID(localAddress, "p1")
	s.Add(p1)
	assert.False(t, s.Empty())
	p1 = NewPID(localAddress, "p1")
	s.Add(p1)
	assert.Equal(t, 1, s.Len())
}

var pids []*PID

func init() {
	for i := 0; i < 100000; i++ {
		pids = append(pids, NewPID(localAddress, "p"+strconv.Itoa(i)))
	}
}

func BenchmarkPIDSet_Add(b *testing.B) {
	cases := []struct {
		l int
	}{
		{l: 1},
		{l: 5},
		{l: 20},
		{l: 500},
	}

	for _, tc := range cases {
		b.Run("len "+strconv.Itoa(tc.l), func(b *testing.B) {
			pidSetAdd(b, pids[:tc.l])
		})
	}
}

func pidSetAdd(b *testing.B, data []*PID) {
	for i := 0; i < b.N; i++ {
		var s PIDSet
		for j := 0; j < len(data); j++ {
			s.Add(data[j])
		}
	}
}

func BenchmarkPIDSet_AddRemove(b *testing.B) {
	cases := []struct {
		l int
	}{
		{l: 1},
		{l: 5},
		{l: 20},
		{l: 500},
	}

	for _, tc := range cases {
		b.Run("len "+strconv.Itoa(tc.l), func(b *testing.B) {
			pidSetAddRemove(b, pids[:tc.l])
		})
	}
}

func pidSetAddRemove(b *testing.B, data []*PID) {
	for i := 0; i < b.N; i++ {
		var s PIDSet
		for j := 0; j < len(data); j++ {
			s.Add(data[j])
		}
		for j := 0; j < len(data); j++ {
			s.Remove(data[j])
		}
	}
}

func BenchmarkPIDSet(b *testing.B) {
	cases := []struct {
		l int
	}{
		{l: 1},
		{l: 5},
		{l: 20},
		{l: 500},
		{l: 1000},
		{l: 10000},
		{l: 100000},
	}

	for _, tc := range cases {
		b.Run("len "+strconv.Itoa(tc.l), func(b *testing.B) {
			b.StopTimer()
			var s PIDSet
			for i := 0; i < tc.l; i++ {
				s.Add(pids[i])
			}
			b.StartTimer()

			for i := 0; i < b.N; i++ {
				pid := pids[rand.Intn(len(pids))]

				s.Add(pid)

				s.Remove(s.Get(rand.Intn(s.Len())))
			}
		})
	}
}

// TestPIDSet_RemoveReleasesSlots: no removed PID stays in the backing array past the
// length, where it would keep its cached process reachable (reef patch 5 in README.md).
func TestPIDSet_RemoveReleasesSlots(t *testing.T) {
	tests := []struct {
		name   string
		remove []string
		clear  bool
	}{
		{name: "last", remove: []string{"p3"}},
		{name: "middle", remove: []string{"p2"}},
		{name: "first", remove: []string{"p1"}},
		{name: "all", remove: []string{"p2", "p1", "p3"}},
		{name: "clear", clear: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s PIDSet
			for _, id := range []string{"p1", "p2", "p3"} {
				s.Add(NewPID(localAddress, id))
			}
			for _, id := range tt.remove {
				assert.True(t, s.Remove(NewPID(localAddress, id)))
			}
			if tt.clear {
				s.Clear()
			}
			for i, pid := range s.pids[len(s.pids):cap(s.pids)] {
				assert.Nil(t, pid, "slot %d past the length", len(s.pids)+i)
			}
			for _, pid := range s.pids {
				assert.True(t, s.Contains(pid))
			}
		})
	}
}
