package wsgroupprom_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/go-steal/steal/examples/prometheus/wsgroupprom"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestMain checks that the tests leak no goroutine, once the scheduler's
// workers have retired (testkit.Settled waits for that).
func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// family is a metric family the collector must report: its name, its type,
// and the field of wsgroup.Stats it reports.
type family struct {
	name  string
	typ   dto.MetricType
	field string
}

var families = []family{
	{"wsgroup_tasks_total", dto.MetricType_COUNTER, "Tasks"},
	{"wsgroup_steals_total", dto.MetricType_COUNTER, "Steals"},
	{"wsgroup_failed_steals_total", dto.MetricType_COUNTER, "FailedSteals"},
	{"wsgroup_injector_pops_total", dto.MetricType_COUNTER, "InjectorPops"},
	{"wsgroup_local_pops_total", dto.MetricType_COUNTER, "LocalPops"},
	{"wsgroup_sleeps_total", dto.MetricType_COUNTER, "Sleeps"},
	{"wsgroup_wakes_total", dto.MetricType_COUNTER, "Wakes"},
	{"wsgroup_workers_started_total", dto.MetricType_COUNTER, "WorkersStarted"},
	{"wsgroup_workers_retired_total", dto.MetricType_COUNTER, "WorkersRetired"},
	{"wsgroup_compensations_total", dto.MetricType_COUNTER, "Compensations"},
	{"wsgroup_workers", dto.MetricType_GAUGE, "Workers"},
}

// TestFamiliesCoverStats checks that the table above has one family per
// field of wsgroup.Stats, so that a field added to Stats fails the tests
// until the collector reports it.
func TestFamiliesCoverStats(t *testing.T) {
	st := reflect.TypeFor[wsgroup.Stats]()
	seen := map[string]bool{}
	for _, f := range families {
		if _, ok := st.FieldByName(f.field); !ok {
			t.Errorf("%s: wsgroup.Stats has no field %s", f.name, f.field)
		}
		seen[f.field] = true
	}
	for i := range st.NumField() {
		if name := st.Field(i).Name; !seen[name] {
			t.Errorf("wsgroup.Stats.%s has no metric family", name)
		}
	}
}

// field returns the value of the field named name of s, as a float64.
func field(s wsgroup.Stats, name string) float64 {
	v := reflect.ValueOf(s).FieldByName(name)
	if v.CanUint() {
		return float64(v.Uint())
	}
	return float64(v.Int())
}

// scraper GETs /metrics from a loopback server that serves a fresh registry
// holding only the collector.
type scraper struct {
	srv    *httptest.Server
	client *http.Client
}

func newScraper(t *testing.T) *scraper {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(wsgroupprom.NewCollector())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	s := &scraper{srv: srv, client: srv.Client()}
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		srv.Close()
	})
	return s
}

// scrape GETs /metrics and parses the text exposition. It fails t if the
// request, the response or the parse fails, or if a family has other than
// one sample without labels.
func (s *scraper) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := s.client.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: Content-Type %q, want text/plain", ct)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	for name, mf := range mfs {
		if len(mf.GetMetric()) != 1 || len(mf.GetMetric()[0].GetLabel()) != 0 {
			t.Fatalf("%s: %d samples, want one without labels:\n%s", name, len(mf.GetMetric()), body)
		}
	}
	return mfs
}

// value returns the value of the one sample of the family f in mfs, and
// fails t if the family is missing or not of f's type.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, f family) float64 {
	t.Helper()
	mf, ok := mfs[f.name]
	if !ok {
		t.Fatalf("%s: missing from the scrape", f.name)
	}
	if mf.GetType() != f.typ {
		t.Fatalf("%s: type %v, want %v", f.name, mf.GetType(), f.typ)
	}
	m := mf.GetMetric()[0]
	if f.typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestScrape scrapes the collector over HTTP: every family is there, with
// its type, its help and nothing else; after a batch of tasks, tasks_total
// grew by at least the tasks run and no counter went down; and once the
// scheduler is quiet, each value is the field of wsgroup.ReadStats it
// reports.
func TestScrape(t *testing.T) {
	testkit.Guard(t, func() {
		s := newScraper(t)

		before := s.scrape(t)
		if len(before) != len(families) {
			names := make([]string, 0, len(before))
			for name := range before {
				names = append(names, name)
			}
			t.Fatalf("scrape has %d families %v, want %d", len(before), names, len(families))
		}
		for _, f := range families {
			value(t, before, f)
			if before[f.name].GetHelp() == "" {
				t.Errorf("%s: no help", f.name)
			}
		}

		// A batch of tasks: 1000 Go calls on a Group, every 100th of
		// which runs a nested Group of 10 tasks and waits for it.
		const outer, every, inner = 1000, 100, 10
		const tasks = outer + outer/every*inner
		var ran atomic.Int64
		var g wsgroup.Group
		for i := range outer {
			g.Go(func() error {
				ran.Add(1)
				if i%every != 0 {
					return nil
				}
				var n wsgroup.Group
				for range inner {
					n.Go(func() error { ran.Add(1); return nil })
				}
				return n.Wait()
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if got := ran.Load(); got != tasks {
			t.Fatalf("%d tasks ran, want %d", got, tasks)
		}

		// The workers publish their counts at the end of their busy
		// spells, which may come just after Wait returns: wait for the
		// count, then scrape.
		tasksFamily := families[0]
		want := value(t, before, tasksFamily) + tasks
		testkit.WaitUntil(t, fmt.Sprintf("ReadStats().Tasks >= %v", want), func() bool {
			return float64(wsgroup.ReadStats().Tasks) >= want
		})
		after := s.scrape(t)
		if got := value(t, after, tasksFamily); got < want {
			t.Errorf("%s: %v after %d tasks, want at least %v (%v before)", tasksFamily.name, got, tasks, want, want-tasks)
		}
		for _, f := range families {
			if f.typ != dto.MetricType_COUNTER {
				continue
			}
			if b, a := value(t, before, f), value(t, after, f); a < b {
				t.Errorf("%s: went down from %v to %v", f.name, b, a)
			}
		}

		// Once every worker has exited, the counts are exact and stay
		// put: a scrape between two equal readings must report them.
		testkit.WaitRetired(t)
		s1 := wsgroup.ReadStats()
		quiet := s.scrape(t)
		if s2 := wsgroup.ReadStats(); s2 != s1 {
			t.Fatalf("ReadStats changed while the scheduler was quiet: %+v, then %+v", s1, s2)
		}
		for _, f := range families {
			if got, want := value(t, quiet, f), field(s1, f.field); got != want {
				t.Errorf("%s: %v, want wsgroup.ReadStats().%s = %v", f.name, got, f.field, want)
			}
		}
		if got := value(t, quiet, families[len(families)-1]); got != 0 {
			t.Errorf("wsgroup_workers: %v once every worker exited, want 0", got)
		}
	})
}

// TestLint checks the collector with the linter of client_golang, and that
// it reports one metric per family, consistently with its Describe (the
// pedantic registry of testutil checks that).
func TestLint(t *testing.T) {
	c := wsgroupprom.NewCollector()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatalf("CollectAndLint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(c); n != len(families) {
		t.Errorf("CollectAndCount: %d metrics, want %d", n, len(families))
	}
	var descs []string
	ch := make(chan *prometheus.Desc, len(families)+1)
	c.Describe(ch)
	close(ch)
	for d := range ch {
		descs = append(descs, d.String())
	}
	if len(descs) != len(families) {
		t.Fatalf("Describe sent %d descriptors, want %d: %v", len(descs), len(families), descs)
	}
	for _, f := range families {
		found := false
		for _, d := range descs {
			found = found || strings.Contains(d, `fqName: "`+f.name+`"`)
		}
		if !found {
			t.Errorf("Describe sent no descriptor for %s: %v", f.name, descs)
		}
	}
}
