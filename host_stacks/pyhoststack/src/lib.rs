//! `ratelab_hoststack`: Python binding of ratelab's rate-based host
//! (crate ratelab-rbcc-host, host_stacks/rbcc).
//!
//! The classes keep the API of the Python state machines they replace
//! (`ratelab_hosts.rbcc_sender`, `ratelab_hosts.rbcc_receiver`,
//! `ratelab_hosts.pacing`, which re-export them): `RbccSender(config,
//! now_us)`, `SenderConfig(...)` (ValueError with a one-line message on bad
//! values), `RbccReceiver(flow_id)`, `RbccListener()`, `Pacer(rate)`, time in
//! integer microseconds, datagrams as `bytes`. `metrics` are live views of
//! the machine's counters; `state` is a `SenderState` / `ReceiverState`
//! member (one object per member, so `is` comparisons work).

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use rbcc_host::receiver::{self, EchoSample as CoreEcho};
use rbcc_host::sender::RateSample as CoreRateSample;
use rbcc_host::wire::{RATE_UNLIMITED, RBCC_OVERHEAD};
use rbcc_host::{pacer, Receiver, Sender, TimeWentBackwards};

mod rbcc_io;
mod sys;
mod tcp;
mod udp;

const SECOND_US: f64 = 1e6;

fn backwards(e: TimeWentBackwards) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An int in lo..=hi, or ValueError(message).
fn int_in(value: &Bound<'_, PyAny>, lo: i128, hi: i128, message: &str) -> PyResult<i128> {
    match value.extract::<i128>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(PyValueError::new_err(message.to_string())),
    }
}

// ---------------------------------------------------------------- states

#[pyclass(module = "ratelab_hoststack", eq)]
#[derive(Clone, Copy, PartialEq, Eq)]
enum SenderState {
    #[pyo3(name = "SYN_SENT")]
    SynSent,
    #[pyo3(name = "ESTABLISHED")]
    Established,
    #[pyo3(name = "FIN_SENT")]
    FinSent,
    #[pyo3(name = "CLOSED")]
    Closed,
    #[pyo3(name = "FAILED")]
    Failed,
}

#[pymethods]
impl SenderState {
    /// The state's name as summaries report it ("syn_sent", ...).
    #[getter]
    fn value(&self) -> &'static str {
        self.core().name()
    }
}

impl SenderState {
    fn core(self) -> rbcc_host::SenderState {
        use rbcc_host::SenderState as S;
        match self {
            SenderState::SynSent => S::SynSent,
            SenderState::Established => S::Established,
            SenderState::FinSent => S::FinSent,
            SenderState::Closed => S::Closed,
            SenderState::Failed => S::Failed,
        }
    }

    /// The class attribute for `state` (the same object every time).
    fn member(py: Python<'_>, state: rbcc_host::SenderState) -> PyResult<Bound<'_, PyAny>> {
        use rbcc_host::SenderState as S;
        let name = match state {
            S::SynSent => "SYN_SENT",
            S::Established => "ESTABLISHED",
            S::FinSent => "FIN_SENT",
            S::Closed => "CLOSED",
            S::Failed => "FAILED",
        };
        py.get_type::<SenderState>().getattr(name)
    }
}

#[pyclass(module = "ratelab_hoststack", eq)]
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReceiverState {
    #[pyo3(name = "LISTEN")]
    Listen,
    #[pyo3(name = "ESTABLISHED")]
    Established,
    #[pyo3(name = "CLOSED")]
    Closed,
}

#[pymethods]
impl ReceiverState {
    #[getter]
    fn value(&self) -> &'static str {
        match self {
            ReceiverState::Listen => "listen",
            ReceiverState::Established => "established",
            ReceiverState::Closed => "closed",
        }
    }
}

impl ReceiverState {
    fn member(py: Python<'_>, state: rbcc_host::ReceiverState) -> PyResult<Bound<'_, PyAny>> {
        use rbcc_host::ReceiverState as S;
        let name = match state {
            S::Listen => "LISTEN",
            S::Established => "ESTABLISHED",
            S::Closed => "CLOSED",
        };
        py.get_type::<ReceiverState>().getattr(name)
    }
}

// ---------------------------------------------------------------- pacer

/// Exact integer-microsecond pacing at `size / rate` (see the crate's `pacer`).
#[pyclass(module = "ratelab_hoststack")]
struct Pacer {
    core: pacer::Pacer,
}

#[pymethods]
impl Pacer {
    #[new]
    #[pyo3(signature = (rate, max_lateness_us = 1_000))]
    fn new(rate: &Bound<'_, PyAny>, max_lateness_us: u64) -> PyResult<Self> {
        let rate = int_in(
            rate,
            1,
            i128::from(u64::MAX),
            "pacing rate must be >= 1 B/s",
        )?;
        let core = pacer::Pacer::new(rate as u64, max_lateness_us)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Pacer { core })
    }

    #[getter]
    fn rate(&self) -> u64 {
        self.core.rate()
    }

    #[getter]
    fn max_lateness_us(&self) -> u64 {
        self.core.max_lateness_us()
    }

    #[getter]
    fn restarts(&self) -> u64 {
        self.core.restarts()
    }

    #[getter]
    fn lost_us(&self) -> u64 {
        self.core.lost_us()
    }

    fn next_at(&self) -> Option<u64> {
        self.core.next_at()
    }

    fn ready(&self, now_us: u64) -> bool {
        self.core.ready(now_us)
    }

    fn on_send(&mut self, now_us: u64, size: u64) {
        self.core.on_send(now_us, size);
    }

    /// At least 1 B/s.
    fn set_rate(&mut self, rate: i128) {
        self.core
            .set_rate(rate.clamp(1, i128::from(u64::MAX)) as u64);
    }
}

// ---------------------------------------------------------------- sender

#[pyclass(module = "ratelab_hoststack", frozen)]
struct SenderConfig {
    core: rbcc_host::SenderConfig,
}

#[pymethods]
impl SenderConfig {
    #[new]
    #[pyo3(signature = (desired_rate, initial_rate, size = None, segments = None,
        duration_us = None, flow_id = None, adopt_synack_rate = false,
        syn_interval_us = None, give_up_us = None, max_lateness_us = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        desired_rate: &Bound<'_, PyAny>,
        initial_rate: &Bound<'_, PyAny>,
        size: Option<&Bound<'_, PyAny>>,
        segments: Option<&Bound<'_, PyAny>>,
        duration_us: Option<&Bound<'_, PyAny>>,
        flow_id: Option<&Bound<'_, PyAny>>,
        adopt_synack_rate: bool,
        syn_interval_us: Option<&Bound<'_, PyAny>>,
        give_up_us: Option<&Bound<'_, PyAny>>,
        max_lateness_us: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // Checked in the order (and with the messages) of the Python dataclass it replaces.
        let u32_max = i128::from(u32::MAX);
        let time_max = i128::from(u64::MAX >> 2);
        let desired = int_in(
            desired_rate,
            1,
            u32_max,
            "desired_rate must be 1..0xFFFFFFFF B/s",
        )?;
        let initial = int_in(
            initial_rate,
            1,
            u32_max - 1,
            "initial_rate must be 1..0xFFFFFFFE B/s",
        )?;
        let size_msg = format!("size must be {RBCC_OVERHEAD}..65535 bytes (IPv4 total length)");
        let size = match size {
            Some(v) => int_in(v, RBCC_OVERHEAD as i128, 65_535, &size_msg)?,
            None => 1000,
        };
        if segments.is_none() && duration_us.is_none() {
            return Err(PyValueError::new_err(
                "give segments or duration_us (or both)",
            ));
        }
        let segments = segments
            .map(|v| int_in(v, 0, u32_max, "segments must be >= 0 (and below 2^32)"))
            .transpose()?;
        let duration_us = duration_us
            .map(|v| int_in(v, 0, time_max, "duration_us must be >= 0"))
            .transpose()?;
        let flow_id = match flow_id {
            Some(v) => int_in(v, 0, 0xFFFF, "flow_id must fit 16 bits")?,
            None => 1,
        };
        let mut core = rbcc_host::SenderConfig::new(
            desired as u32,
            initial as u32,
            segments.map(|v| v as u64),
            duration_us.map(|v| v as u64),
        );
        core.size = size as u16;
        core.flow_id = flow_id as u16;
        core.adopt_synack_rate = adopt_synack_rate;
        if let Some(v) = syn_interval_us {
            core.syn_interval_us = int_in(v, 1, time_max, "syn_interval_us must be >= 1")? as u64;
        }
        if let Some(v) = give_up_us {
            core.give_up_us = int_in(v, 0, time_max, "give_up_us must be >= 0")? as u64;
        }
        if let Some(v) = max_lateness_us {
            core.max_lateness_us = int_in(v, 0, time_max, "max_lateness_us must be >= 0")? as u64;
        }
        core.validate().map_err(PyValueError::new_err)?;
        Ok(SenderConfig { core })
    }

    #[getter]
    fn desired_rate(&self) -> u32 {
        self.core.desired_rate
    }
    #[getter]
    fn initial_rate(&self) -> u32 {
        self.core.initial_rate
    }
    #[getter]
    fn size(&self) -> u16 {
        self.core.size
    }
    #[getter]
    fn segments(&self) -> Option<u64> {
        self.core.segments
    }
    #[getter]
    fn duration_us(&self) -> Option<u64> {
        self.core.duration_us
    }
    #[getter]
    fn flow_id(&self) -> u16 {
        self.core.flow_id
    }
    #[getter]
    fn adopt_synack_rate(&self) -> bool {
        self.core.adopt_synack_rate
    }
    #[getter]
    fn syn_interval_us(&self) -> u64 {
        self.core.syn_interval_us
    }
    #[getter]
    fn give_up_us(&self) -> u64 {
        self.core.give_up_us
    }
    #[getter]
    fn max_lateness_us(&self) -> u64 {
        self.core.max_lateness_us
    }
    /// Payload bytes of each data packet.
    #[getter]
    fn payload_len(&self) -> usize {
        self.core.payload_len()
    }

    fn __repr__(&self) -> String {
        let c = &self.core;
        let opt = |v: Option<u64>| v.map_or("None".to_string(), |v| v.to_string());
        format!(
            "SenderConfig(desired_rate={}, initial_rate={}, size={}, segments={}, duration_us={}, \
             flow_id={}, adopt_synack_rate={}, syn_interval_us={}, give_up_us={}, max_lateness_us={})",
            c.desired_rate,
            c.initial_rate,
            c.size,
            opt(c.segments),
            opt(c.duration_us),
            c.flow_id,
            if c.adopt_synack_rate { "True" } else { "False" },
            c.syn_interval_us,
            c.give_up_us,
            c.max_lateness_us
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<SenderConfig>()
            .is_ok_and(|o| o.get().core == self.core)
    }
}

/// A change of the rate paced at (`rate`) or of what the network echoed.
#[pyclass(module = "ratelab_hoststack", frozen, get_all, eq)]
#[derive(Clone, PartialEq)]
struct RateSample {
    t_us: u64,
    rate: u32,
    return_rate: u32,
    return_bottle_node: u32,
}

#[pymethods]
impl RateSample {
    fn __repr__(&self) -> String {
        format!(
            "RateSample(t_us={}, rate={}, return_rate={}, return_bottle_node={})",
            self.t_us, self.rate, self.return_rate, self.return_bottle_node
        )
    }
}

impl From<&CoreRateSample> for RateSample {
    fn from(s: &CoreRateSample) -> Self {
        RateSample {
            t_us: s.t_us,
            rate: s.rate,
            return_rate: s.return_rate,
            return_bottle_node: s.return_bottle_node,
        }
    }
}

/// The rate-based sender; see the crate's `sender` module.
#[pyclass(module = "ratelab_hoststack")]
struct RbccSender {
    core: Sender,
    config: Py<SenderConfig>,
}

#[pymethods]
impl RbccSender {
    #[new]
    fn new(config: Bound<'_, SenderConfig>, now_us: u64) -> PyResult<Self> {
        let core = Sender::new(config.get().core.clone(), now_us).map_err(PyValueError::new_err)?;
        Ok(RbccSender {
            core,
            config: config.unbind(),
        })
    }

    #[getter]
    fn config(&self, py: Python<'_>) -> Py<SenderConfig> {
        self.config.clone_ref(py)
    }

    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        SenderState::member(py, self.core.state())
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.core.error()
    }

    /// r: what the sender paces at now.
    #[getter]
    fn rate(&self) -> u32 {
        self.core.rate()
    }

    #[getter]
    fn return_rate(&self) -> u32 {
        self.core.return_rate()
    }

    #[getter]
    fn return_bottle_node(&self) -> u32 {
        self.core.return_bottle_node()
    }

    #[getter]
    fn done(&self) -> bool {
        self.core.done()
    }

    /// Live view of the counters.
    #[getter]
    fn metrics(slf: &Bound<'_, Self>) -> SenderMetrics {
        SenderMetrics {
            owner: slf.clone().unbind(),
        }
    }

    /// When `on_timer` must next be called (None: never, the sender is done).
    fn poll_at(&self) -> Option<u64> {
        self.core.poll_at()
    }

    /// Timers and pacing: the datagrams (IPv4 payloads) to send now.
    fn on_timer<'py>(&mut self, py: Python<'py>, now_us: u64) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let mut failed = Ok(());
        self.core
            .on_timer(now_us, |d| {
                if failed.is_ok() {
                    failed = list.append(PyBytes::new(py, d));
                }
            })
            .map_err(backwards)?;
        failed.map(|()| list)
    }

    /// An ACK from the receiver (IPv4 payload); anything else is ignored.
    /// Returns no datagrams (sending happens in `on_timer`).
    fn on_datagram<'py>(
        &mut self,
        py: Python<'py>,
        now_us: u64,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        self.core.on_datagram(now_us, data).map_err(backwards)?;
        Ok(PyList::empty(py))
    }

    /// Per-flow results (a JSON-ready dict).
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.core.summary();
        let d = PyDict::new(py);
        d.set_item("role", "rbcc-send")?;
        d.set_item("flow_id", s.flow_id)?;
        d.set_item("state", s.state.name())?;
        d.set_item("error", s.error)?;
        d.set_item("desired_rate", s.desired_rate)?;
        d.set_item("initial_rate", s.initial_rate)?;
        d.set_item("size", s.size)?;
        d.set_item("syn_sent", s.syn_sent)?;
        d.set_item("fin_sent", s.fin_sent)?;
        d.set_item("fin_acked", s.fin_acked)?;
        d.set_item("packets_sent", s.packets_sent)?;
        d.set_item("bytes_sent", s.bytes_sent)?;
        d.set_item("segments", s.segments)?;
        d.set_item("segments_acked", s.segments_acked)?;
        d.set_item("retransmissions", s.retransmissions)?;
        d.set_item("rto_expiries", s.rto_expiries)?;
        d.set_item("acks_received", s.acks_received)?;
        d.set_item("srtt_us", s.srtt_us)?;
        d.set_item("established_s", s.established_s)?;
        d.set_item("goodput_bps", s.goodput_bps)?;
        d.set_item("send_span_s", s.send_span_s)?;
        d.set_item("pacing_restarts", s.pacing_restarts)?;
        d.set_item("pacing_lost_s", s.pacing_lost_s)?;
        d.set_item(
            "pacing_lateness",
            rbcc_io::lateness_dict(py, self.core.pacer().lateness())?,
        )?;
        d.set_item("rate", s.rate)?;
        let rates = PyList::empty(py);
        for r in &self.core.metrics().rates {
            let item = PyDict::new(py);
            item.set_item("t_s", r.t_us as f64 / SECOND_US)?;
            item.set_item("rate", r.rate)?;
            item.set_item("return_rate", r.return_rate)?;
            item.set_item("return_bottle_node", r.return_bottle_node)?;
            rates.append(item)?;
        }
        d.set_item("rates", rates)?;
        Ok(d)
    }
}

/// Getters of a live metrics view: `field => type` read from the owner's core metrics.
macro_rules! metric_getters {
    ($view:ident, { $($extra:item)* }, $( $field:ident : $ty:ty ),* $(,)?) => {
        #[pymethods]
        impl $view {
            $($extra)*
            $(
                #[getter]
                fn $field(&self, py: Python<'_>) -> $ty {
                    self.owner.borrow(py).core.metrics().$field.clone()
                }
            )*
        }
    };
}

/// The sender's counters (live: reads the sender at each access).
#[pyclass(module = "ratelab_hoststack", frozen)]
struct SenderMetrics {
    owner: Py<RbccSender>,
}

metric_getters!(SenderMetrics, {
    /// Every change of (rate, return_rate, return_bottle_node), as `RateSample`s.
    #[getter]
    fn rates(&self, py: Python<'_>) -> Vec<RateSample> {
        let owner = self.owner.borrow(py);
        owner
            .core
            .metrics()
            .rates
            .iter()
            .map(RateSample::from)
            .collect()
    }
},
    syn_sent: u64, fin_sent: u64, data_packets_sent: u64, data_bytes_sent: u64,
    retransmissions: u64, rto_expiries: u64, acks_received: u64, segments_acked: u64,
    acked_while_queued: u64, malformed: u64, srtt_us: Option<u64>, established_us: Option<u64>,
    last_ack_us: Option<u64>, fin_acked: bool, first_data_us: Option<u64>,
    last_data_us: Option<u64>,
);

// ---------------------------------------------------------------- receiver

/// A change of the rate fields the network left in data packets.
#[pyclass(module = "ratelab_hoststack", frozen, get_all, eq)]
#[derive(Clone, PartialEq)]
struct EchoSample {
    t_us: u64,
    rate: u32,
    bottle_node: u32,
}

#[pymethods]
impl EchoSample {
    fn __repr__(&self) -> String {
        format!(
            "EchoSample(t_us={}, rate={}, bottle_node={})",
            self.t_us, self.rate, self.bottle_node
        )
    }
}

impl From<&CoreEcho> for EchoSample {
    fn from(s: &CoreEcho) -> Self {
        EchoSample {
            t_us: s.t_us,
            rate: s.rate,
            bottle_node: s.bottle_node,
        }
    }
}

/// One receiving connection; see the crate's `receiver` module.
#[pyclass(module = "ratelab_hoststack")]
struct RbccReceiver {
    core: Receiver,
}

impl RbccReceiver {
    fn answer<'py>(
        &mut self,
        py: Python<'py>,
        now_us: u64,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        match self.core.on_datagram(now_us, data) {
            Some(ack) => PyList::new(py, [PyBytes::new(py, ack)]),
            None => Ok(PyList::empty(py)),
        }
    }

    fn delivered_into(&mut self, py: Python<'_>, out: &Bound<'_, PyList>) -> PyResult<()> {
        let mut failed = Ok(());
        self.core.take_delivered(|seq, payload| {
            if failed.is_ok() {
                failed = (seq, PyBytes::new(py, payload))
                    .into_pyobject(py)
                    .and_then(|t| out.append(t));
            }
        });
        failed
    }
}

#[pymethods]
impl RbccReceiver {
    #[new]
    fn new(flow_id: u16) -> Self {
        RbccReceiver {
            core: Receiver::new(flow_id),
        }
    }

    #[getter]
    fn flow_id(&self) -> u16 {
        self.core.flow_id()
    }

    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        ReceiverState::member(py, self.core.state())
    }

    /// Live view of the counters.
    #[getter]
    fn metrics(slf: &Bound<'_, Self>) -> ReceiverMetrics {
        ReceiverMetrics {
            owner: slf.clone().unbind(),
        }
    }

    /// Data transmissions lost on the way.
    #[getter]
    fn lost(&self) -> u64 {
        self.core.lost()
    }

    /// FIN seen and every segment before it delivered.
    #[getter]
    fn complete(&self) -> bool {
        self.core.complete()
    }

    /// The receiver only ever answers.
    fn poll_at(&self) -> Option<u64> {
        None
    }

    fn on_timer<'py>(&self, py: Python<'py>, now_us: u64) -> Bound<'py, PyList> {
        let _ = now_us;
        PyList::empty(py)
    }

    /// In-order (segment, payload) pairs delivered since the last call.
    fn take_delivered<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        self.delivered_into(py, &out)?;
        Ok(out)
    }

    /// A datagram (IPv4 payload) from the sender: the ACK to send, if any.
    fn on_datagram<'py>(
        &mut self,
        py: Python<'py>,
        now_us: u64,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        self.answer(py, now_us, data)
    }

    /// (high, ranges): the gaps below the highest segment held (at most 16)
    /// and where that report ends.
    fn missing<'py>(&self, py: Python<'py>) -> PyResult<(u64, Bound<'py, PyTuple>)> {
        let (high, ranges) = self.core.missing();
        Ok((high, PyTuple::new(py, ranges)?))
    }

    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.core.summary();
        let d = PyDict::new(py);
        d.set_item("role", "rbcc-recv")?;
        d.set_item("flow_id", s.flow_id)?;
        d.set_item("state", s.state.name())?;
        d.set_item("complete", s.complete)?;
        d.set_item("packets_received", s.packets_received)?;
        d.set_item("bytes_received", s.bytes_received)?;
        d.set_item("duplicates", s.duplicates)?;
        d.set_item("lost", s.lost)?;
        d.set_item("segments_delivered", s.segments_delivered)?;
        d.set_item("bytes_delivered", s.bytes_delivered)?;
        d.set_item("acks_sent", s.acks_sent)?;
        d.set_item("sender_packets", s.sender_packets)?;
        d.set_item("goodput_bps", s.goodput_bps)?;
        let rates = PyList::empty(py);
        for r in &self.core.metrics().rates {
            let item = PyDict::new(py);
            item.set_item("t_s", r.t_us as f64 / SECOND_US)?;
            item.set_item("rate", r.rate)?;
            item.set_item("bottle_node", r.bottle_node)?;
            rates.append(item)?;
        }
        d.set_item("rates", rates)?;
        Ok(d)
    }
}

/// The receiver's counters (live: reads the receiver at each access).
#[pyclass(module = "ratelab_hoststack", frozen)]
struct ReceiverMetrics {
    owner: Py<RbccReceiver>,
}

metric_getters!(ReceiverMetrics, {
    /// Every change of (rate, bottle_node) seen on data packets, as `EchoSample`s.
    #[getter]
    fn rates(&self, py: Python<'_>) -> Vec<EchoSample> {
        let owner = self.owner.borrow(py);
        owner
            .core
            .metrics()
            .rates
            .iter()
            .map(EchoSample::from)
            .collect()
    }
},
    packets_received: u64, bytes_received: u64, duplicates: u64, segments_delivered: u64,
    bytes_delivered: u64, acks_sent: u64, malformed: u64, max_pn: i64, fin_pn: Option<u64>,
    fin_seq: Option<u64>, first_data_us: Option<u64>, last_delivery_us: Option<u64>,
);

/// Accepts connections: one `RbccReceiver` per (source address, flow id),
/// created by a SYN. Addresses are opaque strings (the driver's).
#[pyclass(module = "ratelab_hoststack")]
struct RbccListener {
    index: HashMap<(String, u16), usize>,
    flows: Vec<((String, u16), Py<RbccReceiver>)>,
    malformed: u64,
}

#[pymethods]
impl RbccListener {
    #[new]
    fn new() -> Self {
        RbccListener {
            index: HashMap::new(),
            flows: Vec::new(),
            malformed: 0,
        }
    }

    /// Datagrams that are not RBCC v1 carrying a whole TRUMP header (ignored).
    #[getter]
    fn malformed(&self) -> u64 {
        self.malformed
    }

    /// {(source, flow_id): RbccReceiver} in the order the connections opened.
    #[getter]
    fn flows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for ((src, flow_id), receiver) in &self.flows {
            d.set_item((src, flow_id), receiver.clone_ref(py))?;
        }
        Ok(d)
    }

    fn on_datagram<'py>(
        &mut self,
        py: Python<'py>,
        now_us: u64,
        src: String,
        data: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        let Some((flow_id, opens)) = receiver::demux(data) else {
            self.malformed += 1;
            return Ok(PyList::empty(py));
        };
        let key = (src, flow_id);
        let at = match self.index.get(&key) {
            Some(&at) => at,
            None if opens => {
                let receiver = Py::new(py, RbccReceiver::new(flow_id))?;
                self.flows.push((key.clone(), receiver));
                self.index.insert(key, self.flows.len() - 1);
                self.flows.len() - 1
            }
            None => return Ok(PyList::empty(py)),
        };
        self.flows[at].1.borrow_mut(py).answer(py, now_us, data)
    }

    /// In-order (segment, payload) pairs of every connection since the last call.
    fn take_delivered<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (_, receiver) in &self.flows {
            receiver.borrow_mut(py).delivered_into(py, &out)?;
        }
        Ok(out)
    }
}

#[pymodule]
fn ratelab_hoststack(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pacer>()?;
    m.add_class::<SenderConfig>()?;
    m.add_class::<SenderState>()?;
    m.add_class::<SenderMetrics>()?;
    m.add_class::<RateSample>()?;
    m.add_class::<RbccSender>()?;
    m.add_class::<ReceiverState>()?;
    m.add_class::<ReceiverMetrics>()?;
    m.add_class::<EchoSample>()?;
    m.add_class::<RbccReceiver>()?;
    m.add_class::<RbccListener>()?;
    m.add_class::<tcp::TcpConfig>()?;
    m.add_class::<tcp::TcpConnection>()?;
    udp::register(m)?;
    rbcc_io::register(m)?;
    m.add("RATE_UNLIMITED", RATE_UNLIMITED)?;
    m.add("RBCC_OVERHEAD", RBCC_OVERHEAD)?;
    Ok(())
}
