//! UDP traffic for Python: `UdpSourceConfig`, `UdpSource`, `UdpSink`, the
//! crate ratelab-stack's sans-IO UDP machines (host_stacks/stack/src/udp.rs)
//! with the API of the Python classes they replace (`ratelab_hosts.udp`
//! re-exports them). Python speaks integer microseconds, bytes per second
//! and IPv4 total lengths; the crate nanoseconds, bits per second and UDP
//! payload lengths: this module converts. Datagrams are UDP payloads (the
//! kernel's socket adds the header), starting with the crate's 20-byte
//! probe header (flow id, sequence number, send time in ns).

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use ratelab_stack::tcp::Endpoint;
use ratelab_stack::udp::{self as core, OnOff, Pattern, Probe, OVERHEAD, PROBE_HEADER};

use crate::int_in;

const NS_PER_US: u64 = 1_000;
/// Times (and durations) in us that still fit u64 nanoseconds with room to add.
const TIME_MAX_US: u64 = u64::MAX / NS_PER_US / 4;
/// The crate's highest rate, 1 Tb/s, in bytes per second.
const RATE_MAX: u64 = 125_000_000_000;

/// Unused by payload-only sources and sinks (the socket has the addresses).
const NOWHERE: Endpoint = Endpoint {
    addr: [0; 4],
    port: 0,
};

fn to_ns(now_us: u64) -> PyResult<u64> {
    if now_us > TIME_MAX_US {
        return Err(PyValueError::new_err(format!(
            "time {now_us} us is out of range (at most {TIME_MAX_US})"
        )));
    }
    Ok(now_us * NS_PER_US)
}

// ---------------------------------------------------------------- source

#[pyclass(module = "ratelab_hoststack", frozen)]
#[derive(Clone)]
pub struct UdpSourceConfig {
    /// B/s of IPv4 datagrams while on.
    #[pyo3(get)]
    rate: u64,
    /// IPv4 total length.
    #[pyo3(get)]
    size: usize,
    #[pyo3(get)]
    duration_us: u64,
    #[pyo3(get)]
    poisson: bool,
    #[pyo3(get)]
    seed: u64,
    #[pyo3(get)]
    on_us: Option<u64>,
    #[pyo3(get)]
    off_us: Option<u64>,
    #[pyo3(get)]
    flow_id: u32,
}

impl UdpSourceConfig {
    /// The crate's settings for a source that starts at `now`.
    fn core(&self) -> core::SourceConfig {
        let rate_bps = self.rate * 8;
        core::SourceConfig {
            local: NOWHERE,
            remote: NOWHERE,
            flow_id: self.flow_id,
            size: self.size - OVERHEAD,
            pattern: if self.poisson {
                Pattern::Poisson {
                    rate_bps,
                    seed: self.seed,
                }
            } else {
                Pattern::Cbr { rate_bps }
            },
            on_off: self.on_us.zip(self.off_us).map(|(on, off)| OnOff {
                on: on * NS_PER_US,
                off: off * NS_PER_US,
            }),
            count: None,
            duration: Some(self.duration_us * NS_PER_US),
        }
    }
}

#[pymethods]
impl UdpSourceConfig {
    #[new]
    #[pyo3(signature = (rate, size = None, duration_us = None, poisson = false, seed = None,
        on_us = None, off_us = None, flow_id = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rate: &Bound<'_, PyAny>,
        size: Option<&Bound<'_, PyAny>>,
        duration_us: Option<&Bound<'_, PyAny>>,
        poisson: bool,
        seed: Option<&Bound<'_, PyAny>>,
        on_us: Option<&Bound<'_, PyAny>>,
        off_us: Option<&Bound<'_, PyAny>>,
        flow_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // Checked in the order (and with the messages) of the Python dataclass it replaces.
        let rate = int_in(
            rate,
            1,
            RATE_MAX.into(),
            &format!("rate must be 1..{RATE_MAX} B/s (1 Tb/s)"),
        )? as u64;
        let min_size = OVERHEAD + PROBE_HEADER;
        let size = match size {
            Some(v) => int_in(
                v,
                min_size as i128,
                65_535,
                &format!("size must be {min_size}..65535 bytes (IPv4 total length)"),
            )? as usize,
            None => 1000,
        };
        let duration_us = match duration_us {
            Some(v) => int_in(v, 0, TIME_MAX_US.into(), "duration must be >= 0")? as u64,
            None => 1_000_000,
        };
        let seed = match seed {
            Some(v) => int_in(v, 0, u64::MAX.into(), "seed must be 0..2^64-1")? as u64,
            None => 1,
        };
        if on_us.is_some() != off_us.is_some() {
            return Err(PyValueError::new_err("give both on and off, or neither"));
        }
        let on_off_msg = "on must be > 0 and off >= 0";
        let on_us = on_us
            .map(|v| int_in(v, 1, TIME_MAX_US.into(), on_off_msg))
            .transpose()?
            .map(|v| v as u64);
        let off_us = off_us
            .map(|v| int_in(v, 0, TIME_MAX_US.into(), on_off_msg))
            .transpose()?
            .map(|v| v as u64);
        let flow_id = match flow_id {
            Some(v) => int_in(v, 0, u32::MAX.into(), "flow_id must fit 32 bits")? as u32,
            None => 1,
        };
        let config = UdpSourceConfig {
            rate,
            size,
            duration_us,
            poisson,
            seed,
            on_us,
            off_us,
            flow_id,
        };
        // The crate's own checks (none should remain after the ones above).
        core::UdpSource::new(config.core(), 0).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(config)
    }

    fn __repr__(&self) -> String {
        let opt = |v: Option<u64>| v.map_or("None".to_string(), |x| x.to_string());
        let py_bool = |b: bool| if b { "True" } else { "False" };
        format!(
            "UdpSourceConfig(rate={}, size={}, duration_us={}, poisson={}, seed={}, \
             on_us={}, off_us={}, flow_id={})",
            self.rate,
            self.size,
            self.duration_us,
            py_bool(self.poisson),
            self.seed,
            opt(self.on_us),
            opt(self.off_us),
            self.flow_id
        )
    }
}

/// A CBR or Poisson source (optionally on-off) sending probe payloads.
#[pyclass(module = "ratelab_hoststack")]
pub struct UdpSource {
    config: UdpSourceConfig,
    core: core::UdpSource,
    buf: Vec<u8>,
}

#[pymethods]
impl UdpSource {
    #[new]
    fn new(config: &UdpSourceConfig, now_us: u64) -> PyResult<Self> {
        let core = core::UdpSource::new(config.core(), to_ns(now_us)?)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(UdpSource {
            buf: vec![0; config.size - OVERHEAD],
            config: config.clone(),
            core,
        })
    }

    #[getter]
    fn config(&self) -> UdpSourceConfig {
        self.config.clone()
    }

    /// Finished: the duration is over.
    #[getter]
    fn done(&self) -> bool {
        self.core.poll_at().is_none()
    }

    #[getter]
    fn packets_sent(&self) -> u64 {
        self.core.sent().0
    }

    /// IPv4 bytes (the payloads plus 28 bytes of headers each).
    #[getter]
    fn bytes_sent(&self) -> u64 {
        let (packets, payload) = self.core.sent();
        payload + packets * OVERHEAD as u64
    }

    /// When to call `on_timer` next, in us (None: done).
    fn poll_at(&self) -> Option<u64> {
        self.core.poll_at().map(|ns| ns.div_ceil(NS_PER_US))
    }

    /// The UDP payloads due by `now_us`, each stamped with `now_us`.
    fn on_timer<'py>(&mut self, py: Python<'py>, now_us: u64) -> PyResult<Bound<'py, PyList>> {
        let now = to_ns(now_us)?;
        let out = PyList::empty(py);
        while let Some(len) = self.core.poll_payload(now, &mut self.buf) {
            out.append(PyBytes::new(py, &self.buf[..len]))?;
        }
        Ok(out)
    }

    /// The flow's settings and counts (a JSON-ready dict).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.config;
        let d = PyDict::new(py);
        d.set_item("role", "udp-send")?;
        d.set_item("flow_id", c.flow_id)?;
        d.set_item("rate", c.rate)?;
        d.set_item("size", c.size)?;
        d.set_item("poisson", c.poisson)?;
        d.set_item("seed", c.poisson.then_some(c.seed))?;
        let seconds = |us: Option<u64>| us.map(|v| v as f64 / 1e6);
        d.set_item("on_s", seconds(c.on_us))?;
        d.set_item("off_s", seconds(c.off_us))?;
        d.set_item("packets_sent", self.packets_sent())?;
        d.set_item("bytes_sent", self.bytes_sent())?;
        Ok(d)
    }
}

// ---------------------------------------------------------------- sink

/// One (source address, flow id) at the sink.
struct Flow {
    src: String,
    flow_id: u32,
    core: core::UdpSink,
    /// (second since the sink started, IPv4 bytes received in it).
    per_second: Vec<(u64, u64)>,
}

/// Counts probe payloads per (source address, flow id): loss, duplicates,
/// reordering, one-way delay (when source and sink share a clock).
#[pyclass(module = "ratelab_hoststack")]
pub struct UdpSink {
    start_us: u64,
    flows: Vec<Flow>,
    index: HashMap<(String, u32), usize>,
    /// Payloads shorter than the probe header.
    #[pyo3(get)]
    malformed: u64,
}

#[pymethods]
impl UdpSink {
    #[new]
    fn new(now_us: u64) -> PyResult<Self> {
        to_ns(now_us)?;
        Ok(UdpSink {
            start_us: now_us,
            flows: Vec::new(),
            index: HashMap::new(),
            malformed: 0,
        })
    }

    /// A UDP payload from `src` arrived at `now_us`.
    fn on_datagram(&mut self, now_us: u64, src: String, payload: &[u8]) -> PyResult<()> {
        let now = to_ns(now_us)?;
        let Some(probe) = Probe::parse(payload) else {
            self.malformed += 1;
            return Ok(());
        };
        let key = (src, probe.flow_id);
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.flows.push(Flow {
                    src: key.0.clone(),
                    flow_id: key.1,
                    core: core::UdpSink::new(NOWHERE),
                    per_second: Vec::new(),
                });
                self.index.insert(key, self.flows.len() - 1);
                self.flows.len() - 1
            }
        };
        let flow = &mut self.flows[i];
        let before = flow.core.received;
        flow.core.record(now, probe, payload.len());
        if flow.core.received > before {
            let second = now_us.saturating_sub(self.start_us) / 1_000_000;
            let size = (payload.len() + OVERHEAD) as u64;
            match flow.per_second.last_mut() {
                Some((s, bytes)) if *s == second => *bytes += size,
                _ => flow.per_second.push((second, size)),
            }
        }
        Ok(())
    }

    /// Per-flow results, in order of first arrival (JSON-ready dicts).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for f in &self.flows {
            let s = &f.core;
            let bytes = s.bytes + s.received * OVERHEAD as u64;
            let elapsed_us = match (s.first_at, s.last_at) {
                (Some(a), Some(b)) => (b - a) / NS_PER_US,
                _ => 0,
            };
            let d = PyDict::new(py);
            d.set_item("role", "udp-sink")?;
            d.set_item("src", &f.src)?;
            d.set_item("flow_id", f.flow_id)?;
            d.set_item("packets_received", s.received)?;
            d.set_item("bytes_received", bytes)?;
            d.set_item("lost", s.lost())?;
            d.set_item("highest_seq", s.highest().map_or(-1, |h| h as i128))?;
            d.set_item("reordered", s.reordered)?;
            d.set_item("duplicates", s.duplicates)?;
            d.set_item(
                "throughput_bps",
                (elapsed_us > 0).then(|| bytes as u128 * 8 * 1_000_000 / elapsed_us as u128),
            )?;
            let us = |ns: u64| ns / NS_PER_US;
            let mean = s.delay.sum / u128::from(s.delay.count.max(1));
            d.set_item("delay_mean_us", mean / u128::from(NS_PER_US))?;
            d.set_item("delay_min_us", us(s.delay.min))?;
            d.set_item("delay_max_us", us(s.delay.max))?;
            let samples = PyList::empty(py);
            for &(t, b) in &f.per_second {
                let item = PyDict::new(py);
                item.set_item("t_s", t)?;
                item.set_item("bytes", b)?;
                samples.append(item)?;
            }
            d.set_item("bytes_per_second", samples)?;
            out.append(d)?;
        }
        Ok(out)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<UdpSourceConfig>()?;
    m.add_class::<UdpSource>()?;
    m.add_class::<UdpSink>()?;
    m.add("UDP_OVERHEAD", OVERHEAD)?;
    m.add("UDP_PROBE_LEN", PROBE_HEADER)?;
    Ok(())
}
