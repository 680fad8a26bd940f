// connect-load drives an HTTPS origin, directly or through an HTTP proxy's CONNECT, with
// a fixed number of connections for a bounded time, and prints one machine-readable line.
//
//	connect-load -url https://bench.example.test:28500/100b -proxy http://127.0.0.1:28501 \
//	    -ca proxy-ca.pem -map bench.example.test=127.0.0.1 -c 16 -d 5s -warmup 1s [-new] \
//	    [-cpu-pid PID] [-hz 100]
//
// Each connection is its own goroutine with its own http.Transport (MaxConnsPerHost 1), so
// connections are never shared; with -new every request opens a new tunnel and a new TLS
// session (DisableKeepAlives, no session cache). TLS 1.3 only, ALPN http/1.1 only.
//
// The measured window starts after -warmup: counters restart there, and -cpu-pid's
// utime+stime (its whole process tree, plus children already reaped into cutime+cstime)
// is read from /proc at both ends of the window, so the proxy's CPU matches the requests
// counted. Requests still in flight when the window closes are cancelled and not counted.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type worker struct {
	requests, bytes, non2xx, transportErrors, shortBodies int64
	latencies                                             []time.Duration
}

func main() {
	target := flag.String("url", "", "https:// URL to GET")
	proxy := flag.String("proxy", "", "http:// proxy URL (empty: straight to the origin)")
	cas := flag.String("ca", "", "comma-separated PEM files the client trusts (nothing else)")
	maps := flag.String("map", "", "comma-separated NAME=IP: dial IP for NAME (like curl --resolve, any port)")
	conns := flag.Int("c", 16, "connections (one goroutine and one Transport each)")
	duration := flag.Duration("d", 5*time.Second, "measured window")
	warmup := flag.Duration("warmup", time.Second, "warm-up before the window (not counted)")
	newConn := flag.Bool("new", false, "a new connection (tunnel + TLS handshake) per request")
	resume := flag.Bool("resume", false, "with -new: resume TLS sessions (a session cache per connection)")
	timeout := flag.Duration("timeout", 10*time.Second, "per request, dial to last body byte")
	cpuPid := flag.Int("cpu-pid", 0, "process whose CPU (with descendants) is measured over the window")
	originPid := flag.Int("origin-pid", 0, "the origin server's process (with workers): its CPU is not counted as foreign")
	hz := flag.Int("hz", 100, "clock ticks per second (getconf CLK_TCK)")
	label := flag.String("label", "", "echoed as label= in the output")
	flag.Parse()
	if *target == "" || *conns < 1 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "connect-load: -url, -c >= 1 and -d > 0 are required")
		os.Exit(2)
	}
	// Whatever happens, this process ends: every loop below is bounded by the window and the
	// per-request timeout, and this is the last resort.
	hardStop := *warmup + *duration + *timeout + 10*time.Second
	time.AfterFunc(hardStop, func() {
		fmt.Fprintf(os.Stderr, "connect-load: still running after %v, exiting\n", hardStop)
		os.Exit(3)
	})

	pool := x509.NewCertPool()
	for _, file := range strings.Split(*cas, ",") {
		if file == "" {
			continue
		}
		pem, err := os.ReadFile(file)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintf(os.Stderr, "connect-load: no certificate from %s (%v)\n", file, err)
			os.Exit(2)
		}
	}
	hosts := map[string]string{}
	for _, m := range strings.Split(*maps, ",") {
		if name, ip, ok := strings.Cut(m, "="); ok {
			hosts[name] = ip
		}
	}
	var proxyURL *url.URL
	if *proxy != "" {
		u, err := url.Parse(*proxy)
		if err != nil {
			fmt.Fprintf(os.Stderr, "connect-load: bad -proxy: %v\n", err)
			os.Exit(2)
		}
		proxyURL = u
	}

	var dials int64
	dialer := &net.Dialer{Timeout: *timeout}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if ip, ok := hosts[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
		}
		atomic.AddInt64(&dials, 1)
		return dialer.DialContext(ctx, network, addr)
	}
	newTransport := func() *http.Transport {
		tlsConfig := &tls.Config{
			RootCAs:    pool,
			MinVersion: tls.VersionTLS13,
			MaxVersion: tls.VersionTLS13,
			NextProtos: []string{"http/1.1"},
		}
		if *resume {
			tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		}
		t := &http.Transport{
			DialContext:           dial,
			TLSClientConfig:       tlsConfig,
			ForceAttemptHTTP2:     false,
			TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
			MaxConnsPerHost:       1,
			MaxIdleConnsPerHost:   1,
			MaxIdleConns:          1,
			DisableKeepAlives:     *newConn,
			DisableCompression:    true,
			TLSHandshakeTimeout:   *timeout,
			ResponseHeaderTimeout: *timeout,
			IdleConnTimeout:       time.Minute,
		}
		if proxyURL != nil {
			t.Proxy = http.ProxyURL(proxyURL)
		}
		return t
	}

	// phase: 0 warm-up, 1 measuring, 2 done. Workers count only requests that end in phase 1.
	var phase int32
	ctx, cancel := context.WithCancel(context.Background())
	workers := make([]*worker, *conns)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{latencies: make([]time.Duration, 0, 1<<14)}
		workers[i] = w
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			transport := newTransport()
			defer transport.CloseIdleConnections()
			client := &http.Client{Transport: transport, Timeout: *timeout,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
				start := time.Now()
				resp, err := client.Do(req)
				var n int64
				if err == nil {
					n, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				elapsed := time.Since(start)
				p := atomic.LoadInt32(&phase)
				if p == 2 || ctx.Err() != nil {
					return // cut off by the end of the window: not counted either way
				}
				if p == 0 {
					if err != nil {
						firstErr.CompareAndSwap(nil, "warm-up: "+err.Error())
						time.Sleep(10 * time.Millisecond) // a refusing proxy must not turn this into a spin
					}
					continue
				}
				switch {
				case err != nil:
					w.transportErrors++
					firstErr.CompareAndSwap(nil, err.Error())
					time.Sleep(10 * time.Millisecond)
				case resp.StatusCode < 200 || resp.StatusCode > 299:
					w.non2xx++
					firstErr.CompareAndSwap(nil, "status "+resp.Status)
				case resp.ContentLength >= 0 && n != resp.ContentLength:
					w.shortBodies++
					firstErr.CompareAndSwap(nil, fmt.Sprintf("body %d of %d bytes", n, resp.ContentLength))
				default:
					w.requests++
					w.bytes += n
					w.latencies = append(w.latencies, elapsed)
				}
			}
		}(w)
	}

	time.Sleep(*warmup)
	dialsBefore := atomic.LoadInt64(&dials)
	cpuBefore, selfBefore, originBefore := treeTicks(*cpuPid), treeTicks(os.Getpid()), treeTicks(*originPid)
	busyBefore, stealBefore := systemTicks()
	windowStart := time.Now()
	atomic.StoreInt32(&phase, 1)
	time.Sleep(*duration)
	atomic.StoreInt32(&phase, 2)
	window := time.Since(windowStart)
	cpuAfter, selfAfter, originAfter := treeTicks(*cpuPid), treeTicks(os.Getpid()), treeTicks(*originPid)
	busyAfter, stealAfter := systemTicks()
	dialsInWindow := atomic.LoadInt64(&dials) - dialsBefore
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(*timeout + 2*time.Second):
		fmt.Fprintln(os.Stderr, "connect-load: workers did not stop in time")
	}

	var total worker
	var all []time.Duration
	for _, w := range workers {
		total.requests += w.requests
		total.bytes += w.bytes
		total.non2xx += w.non2xx
		total.transportErrors += w.transportErrors
		total.shortBodies += w.shortBodies
		all = append(all, w.latencies...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(q float64) string {
		if len(all) == 0 {
			return ""
		}
		i := int(q*float64(len(all))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(all) {
			i = len(all) - 1
		}
		return strconv.FormatFloat(float64(all[i].Microseconds())/1000, 'f', 3, 64)
	}
	seconds := window.Seconds()
	perRequest := func(ticks int64) string {
		if ticks < 0 || total.requests == 0 {
			return ""
		}
		return strconv.FormatFloat(float64(ticks)*1e6/float64(*hz)/float64(total.requests), 'f', 2, 64)
	}
	proxyCPU := ""
	if *cpuPid > 0 {
		if cpuBefore < 0 || cpuAfter < 0 {
			proxyCPU = ""
			firstErr.CompareAndSwap(nil, fmt.Sprintf("cannot read /proc/%d/stat", *cpuPid))
		} else {
			proxyCPU = perRequest(cpuAfter - cpuBefore)
		}
	}
	// CPU that neither the proxy, this client nor the origin used during the window (other
	// work on the machine: a disturbed run), and time the hypervisor took, in cores.
	cores := func(ticks int64) float64 { return float64(ticks) / float64(*hz) / seconds }
	foreign := (busyAfter - busyBefore) - (cpuAfter - cpuBefore) - (selfAfter - selfBefore) - (originAfter - originBefore)
	if foreign < 0 {
		foreign = 0
	}
	errorsTotal := total.non2xx + total.transportErrors + total.shortBodies
	first, _ := firstErr.Load().(string)
	fmt.Printf("label=%s requests=%d window_s=%.3f rps=%.1f bytes=%d mib_s=%.2f p50_ms=%s p99_ms=%s "+
		"errors=%d non2xx=%d transport_errors=%d short_bodies=%d dials=%d proxy_cpu_us_per_req=%s "+
		"proxy_cpu_ticks=%d client_cpu_us_per_req=%s other_cpu_cores=%.2f steal_cores=%.2f first_error=%q\n",
		*label, total.requests, seconds, float64(total.requests)/seconds, total.bytes,
		float64(total.bytes)/seconds/(1<<20), pct(0.50), pct(0.99), errorsTotal, total.non2xx,
		total.transportErrors, total.shortBodies, dialsInWindow, proxyCPU, cpuAfter-cpuBefore,
		perRequest(selfAfter-selfBefore), cores(foreign), cores(stealAfter-stealBefore), first)
	if total.requests == 0 {
		os.Exit(1)
	}
}

// treeTicks: utime+stime+cutime+cstime of pid and every live descendant, in clock ticks.
// A helper that exits during the window moves from its own utime/stime into its parent's
// cutime/cstime once reaped, so the sum stays continuous. -1 when pid is unreadable.
func treeTicks(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	children := map[int][]int{}
	ticks := map[int]int64{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, t, err := readStat(p)
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], p)
		ticks[p] = t
	}
	if _, ok := ticks[pid]; !ok {
		return -1
	}
	var total int64
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		total += ticks[p]
		queue = append(queue, children[p]...)
	}
	return total
}

// systemTicks: busy (user+nice+system+irq+softirq) and steal ticks of all CPUs, /proc/stat.
func systemTicks() (busy, steal int64) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal guest guest_nice
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	v := func(i int) int64 { n, _ := strconv.ParseInt(f[i], 10, 64); return n }
	return v(1) + v(2) + v(3) + v(6) + v(7), v(8)
}

func readStat(pid int) (ppid int, ticks int64, err error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')') // comm may contain spaces and parentheses
	if i < 0 {
		return 0, 0, errors.New("bad stat")
	}
	f := strings.Fields(s[i+1:])
	// After comm: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	if len(f) < 15 {
		return 0, 0, errors.New("short stat")
	}
	ppid, _ = strconv.Atoi(f[1])
	for _, k := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += v
	}
	return ppid, ticks, nil
}
