package workload

// Chain returns n task functions in which task i waits until task i+1 has
// finished, and a channel closed when task 0, the last to finish, has.
// Each task calls then(i), when then is not nil, just before it finishes.
// Given to a group in order, they stall a pool of fixed size that runs
// tasks in order and does not notice that its workers are blocked.
func Chain(n int, then func(i int)) (tasks []func() error, first <-chan struct{}) {
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	tasks = make([]func() error, n)
	for i := range tasks {
		tasks[i] = func() error {
			if i+1 < n {
				<-done[i+1]
			}
			if then != nil {
				then(i)
			}
			close(done[i])
			return nil
		}
	}
	return tasks, done[0]
}
