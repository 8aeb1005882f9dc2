package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The HTTP service: a net/http front end and a net/http back end, both on
// loopback, in the benchmark's own process. The front end has two
// endpoints:
//
//   - /io makes a new group with SetLimit(HTTPIOLimit) and fans out
//     HTTPIOFanout keep-alive GETs to the back end in it, one per Go call;
//     the back end sleeps HTTPBackendDelay per GET and returns a small
//     body, and the front end returns the bodies in order;
//   - /cpu makes a new group with no limit and runs HTTPCPUTasks subtasks
//     of about HTTPCPUWork of Spin each in it, and returns their checksum.
//
// Clients issue requests back to back over one shared http.Client. Every
// response is checked (status 200 and the exact body), and so is the
// number of GETs the back end served: HTTPIOFanout per /io request.

const (
	HTTPIOClients    = 16                    // clients of /io
	HTTPIOFanout     = 8                     // back-end GETs per /io request
	HTTPIOLimit      = 4                     // SetLimit of an /io request's group
	HTTPBackendDelay = 5 * time.Millisecond  // the back end's sleep per GET
	HTTPCPUClients   = 4                     // clients of /cpu
	HTTPCPUTasks     = 8                     // subtasks per /cpu request
	HTTPCPUWork      = 20 * time.Microsecond // CPU work of one /cpu subtask
	HTTPMaxIdle      = 64                    // MaxIdleConnsPerHost of both http.Clients
)

// httpModes are the modes of the HTTP service benchmark, in the order they
// run: only /io clients, only /cpu clients, and both kinds at once.
var httpModes = []string{"io", "cpu", "mixed"}

// httpCPURounds returns the Spin rounds of one /cpu subtask (HTTPCPUWork),
// calibrated on first use as the other CPU work is, with the subtask's
// body (its Spin and the checksum's atomic add).
var httpCPURounds = sync.OnceValue(func() int {
	var sum atomic.Uint64
	r := Rounds(HTTPCPUWork, 100, func(i, rounds int) { sum.Add(serviceSpin(i%HTTPCPUTasks, rounds)) })
	Sink.Add(sum.Load())
	return r
})

// An HTTPImpl is a row of the HTTP service benchmark: its name (the
// sub-benchmark is "impl=Name") and fanOut, which runs task(0), ...,
// task(n-1), one Go call each, in a new group made with limit (0: no
// limit) and returns what the group's Wait returns.
type HTTPImpl struct {
	Name   string
	fanOut func(limit, n int, task func(k int) error) error
}

// HTTPImplOf is the row named name whose requests run on the groups
// newGroup makes (NewGroup[errgroup.Group], say), as ServiceImplOf's do:
// the same handler code for every implementation.
func HTTPImplOf[G Group](name string, newGroup func(limit int) G) HTTPImpl {
	return HTTPImpl{name, func(limit, n int, task func(k int) error) error {
		g := newGroup(limit)
		for k := range n {
			g.Go(func() error { return task(k) })
		}
		return g.Wait()
	}}
}

// BenchHTTPService runs the HTTP service in each mode, as sub-benchmarks
// "mode=NAME", and within each on every row of impls, as sub-benchmarks
// "impl=NAME":
//
//   - mode=io: HTTPIOClients clients of /io; one op is one /io request;
//   - mode=cpu: HTTPCPUClients clients of /cpu; one op is one /cpu
//     request;
//   - mode=mixed: both sets of clients at once; one op is one /io
//     request, and the /cpu clients keep issuing theirs meanwhile.
//
// It reports, for each kind of request the mode has:
//
//   - io-req/s, cpu-req/s: requests of the kind completed per second of
//     the timed interval;
//   - io-p50-µs, io-p99-µs, cpu-p50-µs, cpu-p99-µs: the median and 99th
//     percentile of a request's latency as its client sees it (from
//     sending the request to reading the whole response), in µs;
//
// and for the process as a whole (every thread: the clients, both
// servers and the groups), over the timed interval:
//
//   - cpu-ns/req: its CPU time (user and system), divided by the requests
//     of both kinds completed; not reported where getrusage is not
//     available;
//   - os-runq-ms/s: the time its threads spent runnable but waiting for a
//     CPU in the operating system's run queues, in ms per second: a
//     thread that the OS stacked behind another on one CPU while its
//     goroutine's request waits;
//   - os-wakeups/req: its threads' wake-ups (voluntary context switches),
//     divided by the requests completed: threads the scheduler put to
//     sleep and woke again.
//
// The last two are read from /proc (Linux only).
//
// The servers start, and each client sends one request (checked, not
// timed) to open its connections, before the timed part; the servers shut
// down after it. The benchmark fails if any response, the warm-up ones
// included, is wrong, or the back end served other than HTTPIOFanout GETs
// per /io request.
func BenchHTTPService(b *testing.B, impls ...HTTPImpl) {
	for _, mode := range httpModes {
		b.Run("mode="+mode, func(b *testing.B) {
			for _, im := range impls {
				b.Run("impl="+im.Name, func(b *testing.B) { benchHTTP(b, mode, im) })
			}
		})
	}
}

func benchHTTP(b *testing.B, mode string, im HTTPImpl) {
	r, err := runHTTP(b.N, mode, im, b.ResetTimer, b.StopTimer)
	if err != nil {
		b.Fatal(err)
	}
	secs := r.elapsed.Seconds()
	for _, k := range []struct {
		name string
		run  httpKindRun
	}{{"io", r.io}, {"cpu", r.cpu}} {
		if k.run.clients == 0 {
			continue
		}
		b.ReportMetric(float64(k.run.done)/secs, k.name+"-req/s")
		if k.run.done > 0 {
			b.ReportMetric(float64(k.run.p50.Nanoseconds())/1e3, k.name+"-p50-µs")
			b.ReportMetric(float64(k.run.p99.Nanoseconds())/1e3, k.name+"-p99-µs")
		}
	}
	done := r.io.done + r.cpu.done
	if r.cpuTimeOK && done > 0 {
		b.ReportMetric(float64(r.cpuTime.Nanoseconds())/float64(done), "cpu-ns/req")
	}
	if r.threadsOK && done > 0 {
		b.ReportMetric(float64(r.runWait)/1e6/secs, "os-runq-ms/s")
		b.ReportMetric(float64(r.wakeups)/float64(done), "os-wakeups/req")
	}
	ReportCrossCPU(b)
}

// httpRun is what runHTTP measured.
type httpRun struct {
	elapsed   time.Duration // the timed interval
	cpuTime   time.Duration // the process's CPU time over it
	cpuTimeOK bool          // cpuTime was measured
	runWait   time.Duration // its threads' OS run-queue wait over it
	wakeups   int64         // its threads' wake-ups over it
	threadsOK bool          // runWait and wakeups were measured
	io, cpu   httpKindRun
}

// httpKindRun is what runHTTP measured of one kind of request.
type httpKindRun struct {
	clients  int
	issued   int64 // requests sent, the warm-up ones and those after the timed interval included
	done     int64 // requests completed within the timed interval
	p50, p99 time.Duration
}

// httpClient is a client of the HTTP service: the URL it requests, the
// body it expects, and what it saw. Only its own goroutine touches it
// until runHTTP has waited for it.
type httpClient struct {
	url       string
	want      []byte
	issued    int64
	latencies []time.Duration // of the requests completed within the timed interval
	failed    int64           // wrong responses
	err       error           // the first of them
}

// do sends one request, checks its response and returns its latency.
func (c *httpClient) do(hc *http.Client) time.Duration {
	start := time.Now()
	body, err := httpGet(context.Background(), hc, c.url)
	d := time.Since(start)
	c.issued++
	if err == nil && !bytes.Equal(body, c.want) {
		err = fmt.Errorf("GET %s: body %q, want %q", c.url, body, c.want)
	}
	if err != nil {
		c.failed++
		if c.err == nil {
			c.err = err
		}
	}
	return d
}

// runHTTP starts the HTTP service on im, runs n requests of mode's
// measured kind (see BenchHTTPService) with resetTimer and stopTimer (the
// benchmark's) called around the timed part, shuts the service down and
// returns what it measured, and an error if any response was wrong, the
// back end's count of GETs is not HTTPIOFanout per /io request, or the
// service did not shut down cleanly.
func runHTTP(n int, mode string, im HTTPImpl, resetTimer, stopTimer func()) (r httpRun, err error) {
	switch mode {
	case "io":
		r.io.clients = HTTPIOClients
	case "cpu":
		r.cpu.clients = HTTPCPUClients
	case "mixed":
		r.io.clients, r.cpu.clients = HTTPIOClients, HTTPCPUClients
	default:
		return r, fmt.Errorf("HTTP service: unknown mode %q", mode)
	}
	rounds := httpCPURounds()
	s, err := startHTTPService(im, rounds)
	if err != nil {
		return r, err
	}
	hc := loopbackClient()
	defer func() { err = errors.Join(err, s.close(hc)) }()

	wantIO, wantCPU := httpIOBody(), httpCPUBody(rounds)
	clients := make([]httpClient, r.io.clients+r.cpu.clients)
	measuredIO := r.io.clients > 0           // the /io requests are the measured kind when there are any
	perClient := n/max(r.cpu.clients, 1) + 1 // measured requests per client, about
	if measuredIO {
		perClient = n/r.io.clients + 1
	}
	var next atomic.Int64 // measured requests claimed
	var stop atomic.Bool  // the measured requests are done: the other clients stop
	var warm, measured, others sync.WaitGroup
	gate := make(chan struct{})
	warm.Add(len(clients))
	for i := range clients {
		c := &clients[i]
		isIO := i < r.io.clients
		if isIO {
			c.url, c.want = s.frontURL+"/io", wantIO
		} else {
			c.url, c.want = s.frontURL+"/cpu", wantCPU
		}
		isMeasured := isIO == measuredIO
		wg := &others
		if isMeasured {
			wg = &measured
			c.latencies = make([]time.Duration, 0, perClient)
		}
		wg.Go(func() {
			c.do(hc) // the warm-up request
			warm.Done()
			<-gate
			if isMeasured {
				for next.Add(1) <= int64(n) {
					c.latencies = append(c.latencies, c.do(hc))
				}
				return
			}
			for !stop.Load() {
				if d := c.do(hc); !stop.Load() {
					c.latencies = append(c.latencies, d)
				}
			}
		})
	}
	warm.Wait()
	resetTimer()
	cpu0, cpuOK := processCPU()
	wait0, wake0, threadsOK := threadStats()
	start := time.Now()
	close(gate)
	measured.Wait()
	r.elapsed = time.Since(start)
	cpu1, _ := processCPU()
	wait1, wake1, threadsOK1 := threadStats()
	stop.Store(true)
	stopTimer()
	others.Wait()
	r.cpuTime, r.cpuTimeOK = cpu1-cpu0, cpuOK
	r.runWait, r.wakeups, r.threadsOK = wait1-wait0, wake1-wake0, threadsOK && threadsOK1

	var errs []error
	for _, k := range []struct {
		name    string
		run     *httpKindRun
		clients []httpClient
	}{{"/io", &r.io, clients[:r.io.clients]}, {"/cpu", &r.cpu, clients[r.io.clients:]}} {
		var all []time.Duration
		var failed int64
		var first error
		for i := range k.clients {
			c := &k.clients[i]
			k.run.issued += c.issued
			failed += c.failed
			if first == nil {
				first = c.err
			}
			all = append(all, c.latencies...)
		}
		if failed > 0 {
			errs = append(errs, fmt.Errorf("HTTP service, mode %s, impl %s: %d of %d %s responses wrong; the first: %w",
				mode, im.Name, failed, k.run.issued, k.name, first))
		}
		k.run.done = int64(len(all))
		if len(all) > 0 {
			slices.Sort(all)
			k.run.p50, k.run.p99 = all[len(all)/2], all[len(all)*99/100]
		}
	}
	if measuredIO && r.io.done != int64(n) || !measuredIO && r.cpu.done != int64(n) {
		errs = append(errs, fmt.Errorf("HTTP service, mode %s, impl %s: %d /io and %d /cpu requests done, want %d of the measured kind",
			mode, im.Name, r.io.done, r.cpu.done, n))
	}
	// Every /io request has returned, and the back end counts a GET before
	// it responds, so the count is final.
	if served, want := s.served.Load(), HTTPIOFanout*r.io.issued; served != want {
		errs = append(errs, fmt.Errorf("HTTP service, mode %s, impl %s: the back end served %d GETs for %d /io requests, want %d",
			mode, im.Name, served, r.io.issued, want))
	}
	return r, errors.Join(errs...)
}

// httpService is a running HTTP service: its two servers and the front
// end's client of the back end.
type httpService struct {
	fanOut      func(limit, n int, task func(k int) error) error
	rounds      int // Spin rounds of a /cpu subtask
	front, back *http.Server
	serving     sync.WaitGroup // the servers' Serve calls
	frontURL    string
	itemURLs    [HTTPIOFanout]string // the back end's URL for each GET of an /io request
	backClient  *http.Client
	served      atomic.Int64 // GETs the back end served
}

// startHTTPService starts the back end and the front end, whose groups are
// im's, on loopback.
func startHTTPService(im HTTPImpl, rounds int) (*httpService, error) {
	s := &httpService{fanOut: im.fanOut, rounds: rounds, backClient: loopbackClient()}
	back := http.NewServeMux()
	back.HandleFunc("GET /item/{k}", s.serveItem)
	var backURL string
	var err error
	if s.back, backURL, err = s.listen(back); err != nil {
		return nil, err
	}
	for k := range s.itemURLs {
		s.itemURLs[k] = backURL + "/item/" + strconv.Itoa(k)
	}
	front := http.NewServeMux()
	front.HandleFunc("GET /io", s.serveIO)
	front.HandleFunc("GET /cpu", s.serveCPU)
	if s.front, s.frontURL, err = s.listen(front); err != nil {
		return nil, errors.Join(err, s.close(nil))
	}
	return s, nil
}

// listen serves h on a new loopback port and returns the server and its
// URL.
func (s *httpService) listen(h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Addr: ln.Addr().String(), Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.serving.Go(func() { _ = srv.Serve(ln) }) // ErrServerClosed once close shuts it down
	return srv, "http://" + ln.Addr().String(), nil
}

// close shuts the service down, its clients (those of the front end, in
// hc, and the front end's own of the back end) being done: it closes each
// client's idle connections, among them any it dialed and never used, then
// shuts down the server they went to (which waits for its requests in
// flight and closes its connections), the front end first, and waits for
// the servers' Serve calls to return. hc may be nil.
func (s *httpService) close(hc *http.Client) error {
	var errs []error
	for _, p := range []struct {
		client *http.Client
		server *http.Server
	}{{hc, s.front}, {s.backClient, s.back}} {
		if p.client != nil {
			p.client.CloseIdleConnections()
		}
		if p.server != nil {
			errs = append(errs, shutdown(p.server))
		}
	}
	s.serving.Wait()
	return errors.Join(errs...)
}

// shutdown shuts srv down gracefully, and closes it at once if that has
// not finished within 10 seconds.
func shutdown(srv *http.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return errors.Join(fmt.Errorf("HTTP service: shutting down %s: %w", srv.Addr, err), srv.Close())
	}
	return nil
}

// serveItem is the back end: GET /item/{k} sleeps HTTPBackendDelay and
// returns httpItemBody(k).
func (s *httpService) serveItem(w http.ResponseWriter, r *http.Request) {
	time.Sleep(HTTPBackendDelay)
	s.served.Add(1)
	_, _ = io.WriteString(w, httpItemBody(r.PathValue("k")))
}

// serveIO is GET /io: HTTPIOFanout GETs of the back end in a new group
// with SetLimit(HTTPIOLimit); it returns their bodies in order, or status
// 502 with the group's error.
func (s *httpService) serveIO(w http.ResponseWriter, r *http.Request) {
	var parts [HTTPIOFanout][]byte
	err := s.fanOut(HTTPIOLimit, HTTPIOFanout, func(k int) error {
		body, err := httpGet(r.Context(), s.backClient, s.itemURLs[k])
		parts[k] = body
		return err
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_, _ = w.Write(bytes.Join(parts[:], nil))
}

// serveCPU is GET /cpu: HTTPCPUTasks subtasks of Spin in a new group with
// no limit; it returns the sum of their results in hex, or status 500
// with the group's error. Each subtask has its own seed, so a lost or a
// repeated one changes the sum.
func (s *httpService) serveCPU(w http.ResponseWriter, r *http.Request) {
	var sum atomic.Uint64
	err := s.fanOut(0, HTTPCPUTasks, func(k int) error {
		sum.Add(serviceSpin(k, s.rounds))
		return nil
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(strconv.AppendUint(nil, sum.Load(), 16))
}

// httpItemBody is the back end's body for item k.
func httpItemBody(k string) string { return "item " + k + "\n" }

// httpIOBody is the body of a correct /io response.
func httpIOBody() []byte {
	var b []byte
	for k := range HTTPIOFanout {
		b = append(b, httpItemBody(strconv.Itoa(k))...)
	}
	return b
}

// httpCPUBody is the body of a correct /cpu response, its subtasks
// spinning rounds each.
func httpCPUBody(rounds int) []byte {
	var sum uint64
	for k := range HTTPCPUTasks {
		sum += serviceSpin(k, rounds)
	}
	return strconv.AppendUint(nil, sum, 16)
}

// loopbackClient is an http.Client for keep-alive requests to loopback: no
// proxy, no compression, and up to HTTPMaxIdle idle connections per host,
// so that every request in flight can keep its connection.
func loopbackClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * HTTPMaxIdle,
		MaxIdleConnsPerHost: HTTPMaxIdle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// httpGet GETs url with hc and returns the whole body, or an error if the
// request failed or the status is not 200.
func httpGet(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}
