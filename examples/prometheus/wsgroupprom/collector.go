// Package wsgroupprom exports the scheduler statistics of
// github.com/go-steal/steal/wsgroup (wsgroup.ReadStats) as Prometheus
// metrics.
//
// Register the collector once per process, in the registry that the
// service's /metrics handler serves:
//
//	prometheus.MustRegister(wsgroupprom.NewCollector())
//	http.Handle("/metrics", promhttp.Handler())
//
// Each scrape reads wsgroup.ReadStats once and reports every field of
// wsgroup.Stats: the counts as counters named wsgroup_<field>_total
// (wsgroup_tasks_total, wsgroup_steals_total, ...) and the current number
// of workers as the gauge wsgroup_workers. The collector keeps no state:
// the statistics are process-wide, so one collector per registry is all
// there is to register (a second one in the same registry is refused as a
// duplicate).
//
// This package is an example. It lives in a module of its own
// (github.com/go-steal/steal/examples/prometheus) so that the library's
// module does not depend on Prometheus. That module reaches the library
// through a replace directive, which applies only when building inside the
// library's repository: a service elsewhere should copy this file.
package wsgroupprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-steal/steal/wsgroup"
)

// namespace is the prefix of every metric name the collector reports.
const namespace = "wsgroup"

// metric is one metric of the collector: its descriptor, its type, and the
// field of wsgroup.Stats that it reports.
type metric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(s *wsgroup.Stats) float64
}

func counter(name, help string, value func(s *wsgroup.Stats) uint64) metric {
	return metric{
		desc:  prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name+"_total"), help, nil, nil),
		typ:   prometheus.CounterValue,
		value: func(s *wsgroup.Stats) float64 { return float64(value(s)) },
	}
}

// metrics has one entry per field of wsgroup.Stats, in the order of the
// fields. The help strings are the fields' documentation, shortened.
var metrics = []metric{
	counter("tasks",
		"Tasks (functions passed to Go or TryGo, and the tasks of loops) that have finished running.",
		func(s *wsgroup.Stats) uint64 { return s.Tasks }),
	counter("steals",
		"Tasks taken from the deque of another worker, and ranges of a loop taken from another task of the loop.",
		func(s *wsgroup.Stats) uint64 { return s.Steals }),
	counter("failed_steals",
		"Searches of other workers' deques that took nothing; grows with idleness, not with work.",
		func(s *wsgroup.Stats) uint64 { return s.FailedSteals }),
	counter("injector_pops",
		"Tasks that workers took from the injector, the queue of the tasks given by Go calls outside tasks.",
		func(s *wsgroup.Stats) uint64 { return s.InjectorPops }),
	counter("local_pops",
		"Tasks that workers took from their own deques.",
		func(s *wsgroup.Stats) uint64 { return s.LocalPops }),
	counter("sleeps",
		"Times a worker went to sleep after searching for work in vain.",
		func(s *wsgroup.Stats) uint64 { return s.Sleeps }),
	counter("wakes",
		"Sleeps that another goroutine ended because there was work for the worker.",
		func(s *wsgroup.Stats) uint64 { return s.Wakes }),
	counter("workers_started",
		"Workers started, including those started beyond GOMAXPROCS (compensations).",
		func(s *wsgroup.Stats) uint64 { return s.WorkersStarted }),
	counter("workers_retired",
		"Workers that stopped: after a linger without work, when no longer needed, or because a task called runtime.Goexit.",
		func(s *wsgroup.Stats) uint64 { return s.WorkersRetired }),
	counter("compensations",
		"Workers started beyond GOMAXPROCS, in place of workers blocked in a Wait or in a task.",
		func(s *wsgroup.Stats) uint64 { return s.Compensations }),
	{
		desc:  prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "workers"), "Worker goroutines of the scheduler now.", nil, nil),
		typ:   prometheus.GaugeValue,
		value: func(s *wsgroup.Stats) float64 { return float64(s.Workers) },
	},
}

// collector is the prometheus.Collector that NewCollector returns. It has
// no state: each Collect reads wsgroup.ReadStats afresh.
type collector struct{}

// NewCollector returns a prometheus.Collector that reports wsgroup.ReadStats:
// one counter per count of wsgroup.Stats (wsgroup_tasks_total,
// wsgroup_steals_total, wsgroup_failed_steals_total,
// wsgroup_injector_pops_total, wsgroup_local_pops_total,
// wsgroup_sleeps_total, wsgroup_wakes_total, wsgroup_workers_started_total,
// wsgroup_workers_retired_total, wsgroup_compensations_total) and the gauge
// wsgroup_workers. The metrics have no labels. Each Collect calls
// wsgroup.ReadStats once, so the values of one scrape come from one
// reading; see wsgroup.ReadStats for how far they lag while tasks run.
func NewCollector() prometheus.Collector { return collector{} }

// Describe sends the descriptors of the metrics that Collect reports.
func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics {
		ch <- m.desc
	}
}

// Collect reads wsgroup.ReadStats once and sends one constant metric per
// field of the reading.
func (collector) Collect(ch chan<- prometheus.Metric) {
	s := wsgroup.ReadStats()
	for _, m := range metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(&s))
	}
}
