package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/earshot-dev/earshot/metrics"
)

// jobMetrics are the job service's own series, on the registry of package
// metrics (which also reads its state gauges); the API serves them at
// /metrics and adds its request counters to the same registry.
type jobMetrics struct {
	reg          *prometheus.Registry
	jobsFinished *prometheus.CounterVec
	rtf          prometheus.Histogram
}

func newMetrics(d *Daemon) *jobMetrics {
	m := &jobMetrics{
		reg: metrics.NewRegistry(metrics.Sources{Store: d.db, Live: d.live, Decoders: d.pl}),
		jobsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_jobs_finished_total", Help: "Jobs that reached done or error since start, by kind and status.",
		}, []string{"kind", "status"}),
		rtf: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "earshot_real_time_factor",
			Help:    "Processing time divided by audio duration of finished pre-recorded jobs.",
			Buckets: []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 5},
		}),
	}
	m.reg.MustRegister(m.jobsFinished, m.rtf)
	m.reg.MustRegister(d.live.Collectors()...)
	m.reg.MustRegister(d.outbox.Collectors()...)
	m.reg.MustRegister(d.audit.Collectors()...)
	// Remote engines: requests by outcome, latency, fallbacks, breaker state.
	m.reg.MustRegister(d.pl.Engines.Collectors()...)
	return m
}

// Metrics returns the registry the daemon's series live on.
func (d *Daemon) Metrics() *prometheus.Registry { return d.metrics.reg }
