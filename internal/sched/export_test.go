package sched

// Test-only views of the pool's state, kept out of the package proper.

// len reports how many spares wait.
func (s *spares) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}
