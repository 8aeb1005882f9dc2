// Command prometheus serves the scheduler statistics of wsgroup as
// Prometheus metrics on /metrics, and runs a little wsgroup work
// periodically so that the numbers move.
//
// It registers wsgroupprom.NewCollector in Prometheus's default registry,
// next to the Go runtime and process collectors that the default registry
// has already, and serves that registry with promhttp.Handler. Every
// -every, it sums a slice with a recursive fork-join (a wsgroup.Group per
// level of the recursion) and runs a wsgroup.For loop over it.
//
// Usage, from this directory (a module of its own):
//
//	go run . [-addr localhost:2112] [-every 1s]
//	curl -s localhost:2112/metrics | grep ^wsgroup_
//
// It runs until interrupted (Ctrl-C or SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/go-steal/steal/examples/prometheus/wsgroupprom"
	"github.com/go-steal/steal/wsgroup"
)

func main() {
	addr := flag.String("addr", "localhost:2112", "address to serve /metrics on")
	every := flag.Duration("every", time.Second, "how often to run a batch of wsgroup work")
	flag.Parse()
	if *every <= 0 {
		log.Fatalf("-every must be positive, not %v", *every)
	}

	prometheus.MustRegister(wsgroupprom.NewCollector())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	log.Printf("serving http://%s/metrics; a batch of work every %v", *addr, *every)

	data := make([]int64, 1<<16)
	for i := range data {
		data[i] = int64(i)
	}
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		if err := work(ctx, data); err != nil && ctx.Err() == nil {
			log.Printf("work: %v", err)
		}
		select {
		case <-tick.C:
		case err := <-served:
			log.Fatal(err)
		case <-ctx.Done():
			log.Print("shutting down")
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shut); err != nil {
				log.Fatal(err)
			}
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				log.Fatal(err)
			}
			log.Print("stopped")
			return
		}
	}
}

// work is one batch: a recursive sum of data, with a Group per level, and a
// For loop over data that checks every element.
func work(ctx context.Context, data []int64) error {
	sum, err := sumTree(data)
	if err != nil {
		return err
	}
	if n := int64(len(data)); sum != n*(n-1)/2 {
		return fmt.Errorf("sum of 0..%d = %d, want %d", n-1, sum, n*(n-1)/2)
	}
	var odd atomic.Int64
	err = wsgroup.For(ctx, len(data), func(_ context.Context, i int) error {
		if data[i]%2 == 1 {
			odd.Add(1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if got, want := odd.Load(), int64(len(data)/2); got != want {
		return fmt.Errorf("odd elements: %d, want %d", got, want)
	}
	return nil
}

// sumTree sums data by splitting it in halves down to 1024 elements, each
// half a task of the Group of its level.
func sumTree(data []int64) (int64, error) {
	if len(data) <= 1024 {
		var s int64
		for _, v := range data {
			s += v
		}
		return s, nil
	}
	var left, right int64
	var g wsgroup.Group
	mid := len(data) / 2
	g.Go(func() (err error) { left, err = sumTree(data[:mid]); return err })
	g.Go(func() (err error) { right, err = sumTree(data[mid:]); return err })
	err := g.Wait()
	return left + right, err
}
