package sched

// Test-only views of the pool's state, kept out of the package proper.

// len reports how many spares wait.
func (s *spares) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}

// count returns how many goroutines the set holds.
func (s *gset) count() int {
	n := 0
	for i := range s.keys {
		if s.keys[i].Load() != 0 {
			n++
		}
	}
	return n
}
