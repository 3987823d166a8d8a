package cluster

import (
	"cmp"
	"slices"
)

// Plan says which member should hold each of n partitions: as even as it can be (each
// member n/len or one more), moving as few partitions as it can. A member keeps the
// partitions it holds now up to its share; the rest (free ones, those of nodes that left,
// those over a share) go to the members below their share, in order. held is the owner of
// each partition's live lease; owners that are not members count as free. Every node
// computes the same plan from the same members and leases, and acts on its own part of it.
func Plan(members []string, held map[int]string, n int) map[int]string {
	if len(members) == 0 || n <= 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(members))
	have := map[string][]int{}
	for p := range n {
		if o, ok := held[p]; ok && slices.Contains(sorted, o) {
			have[o] = append(have[o], p)
		}
	}
	// The members holding most get the shares with one more, so fewer partitions move.
	byHeld := slices.Clone(sorted)
	slices.SortStableFunc(byHeld, func(a, b string) int { return cmp.Compare(len(have[b]), len(have[a])) })
	share := map[string]int{}
	for i, m := range byHeld {
		share[m] = n / len(sorted)
		if i < n%len(sorted) {
			share[m]++
		}
	}
	out := make(map[int]string, n)
	for _, m := range sorted {
		for _, p := range have[m][:min(len(have[m]), share[m])] {
			out[p] = m
		}
	}
	count := map[string]int{}
	for _, m := range out {
		count[m]++
	}
	i := 0
	for p := range n {
		if _, ok := out[p]; ok {
			continue
		}
		for count[sorted[i]] >= share[sorted[i]] {
			i++
		}
		out[p] = sorted[i]
		count[sorted[i]]++
	}
	return out
}
