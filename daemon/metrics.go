package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/earshot-dev/earshot/store"
)

// metrics are the daemon's Prometheus series, on a registry of its own (no
// global state); the API serves them at /metrics and adds its request
// counters to the same registry.
type metrics struct {
	reg          *prometheus.Registry
	jobsFinished *prometheus.CounterVec
	rtf          prometheus.Histogram
}

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		jobsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_jobs_finished_total", Help: "Jobs that reached done or error since start, by kind and status.",
		}, []string{"kind", "status"}),
		rtf: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "earshot_real_time_factor",
			Help:    "Processing time divided by audio duration of finished pre-recorded jobs.",
			Buckets: []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 5},
		}),
	}
	m.reg.MustRegister(m.jobsFinished, m.rtf, d.live.Created(), &stateCollector{d: d},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(d.outbox.Collectors()...)
	// Remote engines: requests by outcome, latency, fallbacks, breaker state.
	m.reg.MustRegister(d.pl.Engines.Collectors()...)
	return m
}

// Metrics returns the registry the daemon's series live on.
func (d *Daemon) Metrics() *prometheus.Registry { return d.metrics.reg }

// stateCollector reads gauges from the daemon's state at scrape time.
type stateCollector struct{ d *Daemon }

var (
	descJobs     = prometheus.NewDesc("earshot_jobs", "Jobs in the store by kind and status.", []string{"kind", "status"}, nil)
	descQueue    = prometheus.NewDesc("earshot_queue_depth", "Pre-recorded jobs waiting for a worker.", nil, nil)
	descLive     = prometheus.NewDesc("earshot_live_sessions", "Live sessions open (created and not ended).", nil, nil)
	descDecoders = prometheus.NewDesc("earshot_decoders", "Decoders in the engine pool, by state.", []string{"state"}, nil)
	descOutbox   = prometheus.NewDesc("earshot_callback_outbox_depth", "Callbacks waiting for delivery.", nil, nil)
	descBatch    = prometheus.NewDesc("earshot_batch_passes_pending", "Ended live sessions whose batch pass is queued or running.", nil, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descQueue, descLive, descDecoders, descOutbox, descBatch} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	for _, k := range []store.Kind{store.KindPreRecorded, store.KindLive} {
		for _, s := range []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone, store.StatusError} {
			if n, err := d.db.CountJobs(k, s); err == nil {
				ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), string(k), string(s))
				if k == store.KindPreRecorded && s == store.StatusQueued {
					ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(n))
				}
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(d.live.Sessions()))
	total, busy := d.pl.Stats()
	ch <- prometheus.MustNewConstMetric(descDecoders, prometheus.GaugeValue, float64(busy), "busy")
	ch <- prometheus.MustNewConstMetric(descDecoders, prometheus.GaugeValue, float64(total-busy), "idle")
	if n, err := d.db.PendingDeliveries(); err == nil {
		ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n))
	}
	if n, err := d.db.PendingBatchPasses(); err == nil {
		ch <- prometheus.MustNewConstMetric(descBatch, prometheus.GaugeValue, float64(n))
	}
}
