// Package deque implements a generic, growable Chase-Lev work-stealing deque.
//
// A [Deque] has one owner and any number of thieves. The owner pushes and
// pops items at the bottom end, last in first out, without contention in the
// common case; thieves steal the oldest items from the top end, first in
// first out, by a compare-and-swap on the top index. The only time the owner
// competes with thieves is when it pops the last item.
//
// # Algorithm
//
// The code follows the ordering of Lê, Pop, Cohen and Zappa Nardelli,
// "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013),
// which is the C11 formulation of Chase and Lev, "Dynamic Circular
// Work-Stealing Deque" (SPAA 2005). The paper needs explicit fences
// (a release fence in push, sequentially consistent fences in take and
// steal) because C11 lets it pick weaker orderings for each access. Every
// operation of Go's sync/atomic package is sequentially consistent (see
// "The Go Memory Model"), so all the loads, stores and compare-and-swaps of
// this package fall into a single total order and every fence of the paper
// is implied. The comments at each atomic operation say which part of the
// argument it carries.
//
// Two indices, top and bottom, only ever move forward (bottom also steps
// back by one while the owner pops) and are never reduced modulo anything;
// the items live at indices [top, bottom) of a circular ring whose size is a
// power of two. When the ring is full the owner copies the live range into
// a ring of twice the size and publishes it; when a Pop leaves it less than
// a quarter full (and above the capacity the deque was created with) the
// owner copies it into a ring of half the size. Thieves that still hold an
// old ring keep reading valid values from it: the owner never writes to a
// ring again after replacing it.
//
// # Garbage collection
//
// Unlike the paper's deque, this one does not keep taken items reachable:
// the owner stores nil into each slot it pops, and a thief that wins an item
// clears the slot it took the item from with a compare-and-swap (see
// [Deque.Steal] for why it must not be a plain store). Because of that
// compare-and-swap, a pointer must not be in a deque twice at the same time;
// see [Deque.Push].
package deque
