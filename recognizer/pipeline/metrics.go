package pipeline

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/earshot-dev/earshot/recognizer/remote"
)

// engineMetrics are the remote engines' series; Engines.Collectors hands
// them to the daemon's registry.
type engineMetrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	fallbacks *prometheus.CounterVec
}

func newEngineMetrics() engineMetrics {
	return engineMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_remote_requests_total",
			Help: "Requests to remote engines (retries included) by engine, action (transcribe, partial, translate) and outcome (ok, unavailable, timeout, bad_response, circuit_open, cancelled).",
		}, []string{"engine", "action", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "earshot_remote_request_seconds",
			Help:    "Time of remote engine requests that reached the server, retries included, by engine and action.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120},
		}, []string{"engine", "action"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_engine_fallbacks_total",
			Help: "Jobs moved from a failing remote engine to the embedded one, by remote engine and kind (pre-recorded, live).",
		}, []string{"engine", "kind"}),
	}
}

// observe is the remote engines' request observer.
func (m engineMetrics) observe(s remote.RequestStat) {
	m.requests.WithLabelValues(s.Engine, s.Action, s.Outcome).Inc()
	if s.Attempts > 0 {
		m.latency.WithLabelValues(s.Engine, s.Action).Observe(s.Elapsed.Seconds())
	}
}

// countFallback counts a pre-recorded job re-run on the embedded engine.
func (e *Engines) countFallback(from string) {
	e.metrics.fallbacks.WithLabelValues(from, "pre-recorded").Inc()
}

// Collectors are the engines' series for the daemon's registry: the
// request counter and latency, the fallbacks, and each remote engine's
// breaker state, read at scrape time.
func (e *Engines) Collectors() []prometheus.Collector {
	return []prometheus.Collector{e.metrics.requests, e.metrics.latency, e.metrics.fallbacks, breakerCollector{e.remotes}}
}

// breakerCollector reports earshot_remote_breaker_state{engine,state}: 1
// for each remote engine's current state, 0 for the others.
type breakerCollector struct{ remotes []*remote.Engine }

var descBreaker = prometheus.NewDesc("earshot_remote_breaker_state",
	"Circuit breaker state of each remote engine: 1 for the current state (closed, open, half-open), 0 for the others.",
	[]string{"engine", "state"}, nil)

func (c breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descBreaker }

func (c breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.remotes {
		cur := r.BreakerState()
		for _, st := range []string{"closed", "open", "half-open"} {
			v := 0.0
			if st == cur {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, v, r.Name(), st)
		}
	}
}
