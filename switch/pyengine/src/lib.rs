//! `ratelab_engine`: Python binding of ratelab's BMv2-JSON engine.
//!
//! A thin layer: one `Switch` class whose methods mirror
//! `ratelab_engine::Switch`. Packet processing (`process`, `poll`) runs with
//! the GIL released, so port I/O threads and the gRPC server run alongside.
//! Control errors raise `EngineError(kind, message)`, `kind` naming the
//! `ControlError` variant in snake case (`not_found`, `bad_handle`,
//! `out_of_range`, `invalid_argument`, `duplicate`, `immutable`, `full`) or
//! `load` for a refused program.
//!
//! `Dataplane` runs the packet thread of `ratelab_dataplane` (AF_PACKET
//! ports driving a `Switch`) without ever holding the GIL; Python starts and
//! stops it, injects PacketOuts and drains controller events from a thread
//! blocked in `next_events` (GIL released).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use dataplane::engine;
use engine::{ControlError, LoadError, MatchValue, Rate};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

create_exception!(
    ratelab_engine,
    EngineError,
    PyException,
    "A refused engine operation."
);

fn control_err(e: ControlError) -> PyErr {
    let kind = match &e {
        ControlError::NotFound(..) => "not_found",
        ControlError::BadHandle(..) => "bad_handle",
        ControlError::OutOfRange(..) => "out_of_range",
        ControlError::InvalidArgument(..) => "invalid_argument",
        ControlError::Duplicate(..) => "duplicate",
        ControlError::Immutable(..) => "immutable",
        ControlError::Full(..) => "full",
    };
    EngineError::new_err((kind, e.to_string()))
}

fn load_err(e: LoadError) -> PyErr {
    EngineError::new_err(("load", e.to_string()))
}

fn invalid(msg: String) -> PyErr {
    EngineError::new_err(("invalid_argument", msg))
}

/// A match key component from Python: (kind, a, b) with kind one of exact
/// (a), lpm (a = value, b = prefix length), ternary (a = value, b = mask),
/// range (a = low, b = high), optional (a = value, b = 0 for a wildcard,
/// anything else for an exact value).
fn match_value(kind: &str, a: u128, b: u128) -> PyResult<MatchValue> {
    Ok(match kind {
        "exact" => MatchValue::Exact(a),
        "lpm" => MatchValue::Lpm(
            a,
            u32::try_from(b).map_err(|_| invalid(format!("prefix length {b}")))?,
        ),
        "ternary" => MatchValue::Ternary(a, b),
        "range" => MatchValue::Range(a, b),
        "optional" => MatchValue::Optional(if b == 0 { None } else { Some(a) }),
        other => return Err(invalid(format!("unknown match kind {other:?}"))),
    })
}

fn keys(key: &[(String, u128, u128)]) -> PyResult<Vec<MatchValue>> {
    key.iter().map(|(k, a, b)| match_value(k, *a, *b)).collect()
}

/// The inverse of `match_value`.
fn key_tuple(v: &MatchValue) -> (&'static str, u128, u128) {
    match *v {
        MatchValue::Exact(a) => ("exact", a, 0),
        MatchValue::Lpm(a, len) => ("lpm", a, u128::from(len)),
        MatchValue::Ternary(a, m) => ("ternary", a, m),
        MatchValue::Range(lo, hi) => ("range", lo, hi),
        MatchValue::Optional(Some(a)) => ("optional", a, 1),
        MatchValue::Optional(None) => ("optional", 0, 0),
        MatchValue::Valid(b) => ("valid", u128::from(b), 0),
    }
}

fn json_text(json: &[u8]) -> PyResult<&str> {
    std::str::from_utf8(json).map_err(|e| EngineError::new_err(("load", format!("not UTF-8: {e}"))))
}

/// Checks a BMv2 JSON program without building a switch.
#[pyfunction]
fn validate(py: Python<'_>, json: &[u8]) -> PyResult<()> {
    let text = json_text(json)?;
    py.detach(|| engine::validate(text)).map_err(load_err)
}

/// One v1model switch running one BMv2 JSON program.
#[pyclass(frozen, module = "ratelab_engine")]
struct Switch {
    // Shared with the data-plane thread, which locks it once per batch.
    inner: Arc<Mutex<engine::Switch>>,
}

impl Switch {
    fn sw(&self) -> MutexGuard<'_, engine::Switch> {
        // A panic while holding the lock leaves the state as it was; keep serving.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

type FrameTuple = (u32, Py<PyBytes>, u64);

fn frames_to_py(py: Python<'_>, frames: Vec<engine::Frame>) -> Vec<FrameTuple> {
    frames
        .into_iter()
        .map(|f| (f.port, PyBytes::new(py, &f.data).unbind(), f.time_us))
        .collect()
}

#[pymethods]
impl Switch {
    #[new]
    #[pyo3(signature = (json, seed = 0))]
    fn new(py: Python<'_>, json: &[u8], seed: u64) -> PyResult<Self> {
        let text = json_text(json)?;
        let sw = py
            .detach(|| engine::Switch::new(text, seed))
            .map_err(load_err)?;
        Ok(Switch {
            inner: Arc::new(Mutex::new(sw)),
        })
    }

    /// Replaces the program (tables, externs and queued packets start afresh).
    fn reload(&self, py: Python<'_>, json: &[u8]) -> PyResult<()> {
        let text = json_text(json)?;
        py.detach(|| self.sw().reload(text)).map_err(load_err)
    }

    /// Whether the ingress and egress controls run as native code (the
    /// default; compiled with LLVM when the program loads) or interpreted.
    fn compiled(&self) -> bool {
        self.sw().compiled()
    }

    /// Compiles the controls (True) or interprets them (False, the
    /// reference); returns whether they are compiled now.
    fn set_compiled(&self, py: Python<'_>, on: bool) -> bool {
        py.detach(|| self.sw().set_compiled(on))
    }

    /// Why the controls are interpreted although compiling was asked for.
    fn compile_error(&self) -> Option<String> {
        self.sw().compile_error().map(str::to_string)
    }

    // ------------------------------------------------------------ packets

    /// Injects packets `[(port, bytes), ...]` arriving at `now_us`, then
    /// returns the frames due by then: `[(port, bytes, time_us), ...]`.
    fn process(
        &self,
        py: Python<'_>,
        packets: Vec<(u32, Vec<u8>)>,
        now_us: u64,
    ) -> Vec<FrameTuple> {
        let frames = py.detach(|| {
            let mut sw = self.sw();
            for (port, data) in &packets {
                sw.inject(*port, data, now_us);
            }
            sw.poll(now_us)
        });
        frames_to_py(py, frames)
    }

    /// Frames due by `now_us`.
    fn poll(&self, py: Python<'_>, now_us: u64) -> Vec<FrameTuple> {
        let frames = py.detach(|| self.sw().poll(now_us));
        frames_to_py(py, frames)
    }

    /// When `poll` next has something to return (µs), if ever.
    fn next_event_time(&self) -> Option<u64> {
        self.sw().next_event_time()
    }

    /// Digests produced since the last call: `[(list_name, [values])]`.
    fn take_digests(&self) -> Vec<(String, Vec<u128>)> {
        self.sw()
            .take_digests()
            .into_iter()
            .map(|d| (d.list_name, d.values))
            .collect()
    }

    // ------------------------------------------------------------ ports

    fn set_queue_depth(&self, port: u32, packets: usize) -> PyResult<()> {
        self.sw()
            .set_queue_depth(port, packets)
            .map_err(control_err)
    }

    /// `n` (1..=8) strict-priority queues on a port, simple_switch's
    /// `--priority-queues` (refused while packets are queued there).
    fn set_priority_queues(&self, port: u32, n: usize) -> PyResult<()> {
        self.sw().set_priority_queues(port, n).map_err(control_err)
    }

    /// `unit` is "bps" or "pps"; 0 means unlimited.
    fn set_port_rate(&self, port: u32, unit: &str, value: u64) -> PyResult<()> {
        let rate = match (unit, value) {
            (_, 0) => Rate::Unlimited,
            ("bps", v) => Rate::Bps(v),
            ("pps", v) => Rate::Pps(v),
            (u, _) => return Err(invalid(format!("unknown rate unit {u:?}"))),
        };
        self.sw().set_port_rate(port, rate).map_err(control_err)
    }

    /// Makes a port's capacity follow a mahimahi trace (`text`, the file's
    /// contents; `name` names it in errors), its time 0 at engine time
    /// `start_us`; None: back to the port's rate. A bad trace raises
    /// EngineError("invalid_argument", "NAME:LINE: ...") and changes nothing.
    #[pyo3(signature = (port, text, name, start_us))]
    fn set_port_trace(
        &self,
        port: u32,
        text: Option<&str>,
        name: &str,
        start_us: u64,
    ) -> PyResult<()> {
        let trace = match text {
            Some(t) => Some(Arc::new(parse_trace(t, name)?)),
            None => None,
        };
        self.sw()
            .set_port_trace(port, trace, start_us)
            .map_err(control_err)
    }

    /// The (opportunities per period, period in ms) of the trace a port follows.
    fn port_trace(&self, port: u32) -> Option<(usize, u64)> {
        self.sw()
            .port_trace(port)
            .map(|t| (t.opportunities(), t.period_ms()))
    }

    /// Link propagation delay of a port in µs (0 removes it).
    fn set_link_delay(&self, port: u32, delay_us: u64) -> PyResult<()> {
        self.sw()
            .set_link_delay(port, delay_us)
            .map_err(control_err)
    }

    fn link_delay(&self, port: u32) -> u64 {
        self.sw().link_delay(port)
    }

    /// Largest random extra delay of a port's link in µs, uniform per frame,
    /// never reordering (0 removes it).
    fn set_link_jitter(&self, port: u32, jitter_us: u64) -> PyResult<()> {
        self.sw()
            .set_link_jitter(port, jitter_us)
            .map_err(control_err)
    }

    fn link_jitter(&self, port: u32) -> u64 {
        self.sw().link_jitter(port)
    }

    /// Frames on a port's delayed link, not yet at its far end.
    fn in_flight(&self, port: u32) -> usize {
        self.sw().in_flight(port)
    }

    /// (rx_packets, rx_bytes, tx_packets, tx_bytes, queue_drops, mtu_drops)
    fn port_stats(&self, port: u32) -> (u64, u64, u64, u64, u64, u64) {
        let s = self.sw().port_stats(port);
        (
            s.rx_packets,
            s.rx_bytes,
            s.tx_packets,
            s.tx_bytes,
            s.queue_drops,
            s.mtu_drops,
        )
    }

    fn queue_len(&self, port: u32) -> usize {
        self.sw().queue_len(port)
    }

    // ------------------------------------------------------------ tables

    /// Adds an entry: key `[(kind, a, b), ...]` (see `match_value`), BMv2
    /// priority (lower wins). Returns the entry handle.
    fn table_add(
        &self,
        table: &str,
        key: Vec<(String, u128, u128)>,
        action: &str,
        params: Vec<u128>,
        priority: i32,
    ) -> PyResult<u32> {
        let key = keys(&key)?;
        self.sw()
            .table_add(table, key, action, &params, priority)
            .map_err(control_err)
    }

    /// Adds an entry to an indirect table running action profile `member`.
    fn table_add_member(
        &self,
        table: &str,
        key: Vec<(String, u128, u128)>,
        member: u32,
        priority: i32,
    ) -> PyResult<u32> {
        let key = keys(&key)?;
        self.sw()
            .table_add_member(table, key, member, priority)
            .map_err(control_err)
    }

    /// Adds an entry to an indirect table with a selector running `group`.
    fn table_add_group(
        &self,
        table: &str,
        key: Vec<(String, u128, u128)>,
        group: u32,
        priority: i32,
    ) -> PyResult<u32> {
        let key = keys(&key)?;
        self.sw()
            .table_add_group(table, key, group, priority)
            .map_err(control_err)
    }

    fn table_modify_member(&self, table: &str, handle: u32, member: u32) -> PyResult<()> {
        self.sw()
            .table_modify_member(table, handle, member)
            .map_err(control_err)
    }

    fn table_modify_group(&self, table: &str, handle: u32, group: u32) -> PyResult<()> {
        self.sw()
            .table_modify_group(table, handle, group)
            .map_err(control_err)
    }

    // ------------------------------------------------------------ action profiles

    /// Adds a member (action and parameters) to an action profile; returns its handle.
    fn ap_member_add(&self, profile: &str, action: &str, params: Vec<u128>) -> PyResult<u32> {
        self.sw()
            .ap_member_add(profile, action, &params)
            .map_err(control_err)
    }

    fn ap_member_modify(
        &self,
        profile: &str,
        member: u32,
        action: &str,
        params: Vec<u128>,
    ) -> PyResult<()> {
        self.sw()
            .ap_member_modify(profile, member, action, &params)
            .map_err(control_err)
    }

    fn ap_member_delete(&self, profile: &str, member: u32) -> PyResult<()> {
        self.sw()
            .ap_member_delete(profile, member)
            .map_err(control_err)
    }

    /// Creates an empty group in an action selector; returns its handle.
    fn ap_group_create(&self, profile: &str) -> PyResult<u32> {
        self.sw().ap_group_create(profile).map_err(control_err)
    }

    fn ap_group_set_members(&self, profile: &str, group: u32, members: Vec<u32>) -> PyResult<()> {
        self.sw()
            .ap_group_set_members(profile, group, &members)
            .map_err(control_err)
    }

    fn ap_group_delete(&self, profile: &str, group: u32) -> PyResult<()> {
        self.sw()
            .ap_group_delete(profile, group)
            .map_err(control_err)
    }

    fn table_modify(
        &self,
        table: &str,
        handle: u32,
        action: &str,
        params: Vec<u128>,
    ) -> PyResult<()> {
        self.sw()
            .table_modify(table, handle, action, &params)
            .map_err(control_err)
    }

    /// Every entry of a table: `[(handle, key, priority, action, params)]`, the key
    /// as `[(kind, a, b)]` like `table_add` takes it (plus `("valid", 0|1, 0)`),
    /// the priority in BMv2's sense (lower wins; 0 without priorities).
    #[allow(clippy::type_complexity)]
    fn table_entries(
        &self,
        table: &str,
    ) -> PyResult<Vec<(u32, Vec<(&'static str, u128, u128)>, i32, String, Vec<u128>)>> {
        let entries = self.sw().table_entries(table).map_err(control_err)?;
        Ok(entries
            .into_iter()
            .map(|e| {
                let key = e.key.iter().map(key_tuple).collect();
                (e.handle, key, e.priority, e.action, e.params)
            })
            .collect())
    }

    fn table_delete(&self, table: &str, handle: u32) -> PyResult<()> {
        self.sw().table_delete(table, handle).map_err(control_err)
    }

    /// The default action in force: (name, params), or None.
    fn table_get_default(&self, table: &str) -> PyResult<Option<(String, Vec<u128>)>> {
        self.sw().table_get_default(table).map_err(control_err)
    }

    fn table_set_default(&self, table: &str, action: &str, params: Vec<u128>) -> PyResult<()> {
        self.sw()
            .table_set_default(table, action, &params)
            .map_err(control_err)
    }

    fn table_reset_default(&self, table: &str) -> PyResult<()> {
        self.sw().table_reset_default(table).map_err(control_err)
    }

    /// Makes action profile member `member` the default of an indirect table.
    fn table_set_default_member(&self, table: &str, member: u32) -> PyResult<()> {
        self.sw()
            .table_set_default_member(table, member)
            .map_err(control_err)
    }

    /// Custom parameters of a CRC calculation (BMv2's crc16_custom / crc32_custom).
    #[allow(clippy::too_many_arguments)]
    fn set_crc_params(
        &self,
        calculation: &str,
        width: u32,
        poly: u32,
        init: u32,
        xor_out: u32,
        reflect_in: bool,
        reflect_out: bool,
    ) -> PyResult<()> {
        let params = engine::CrcParams {
            width,
            poly,
            init,
            xor_out,
            reflect_in,
            reflect_out,
        };
        self.sw()
            .set_crc_params(calculation, params)
            .map_err(control_err)
    }

    /// Direct counter of an entry: (packets, bytes).
    fn table_entry_counter(&self, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        self.sw()
            .table_entry_counter(table, handle)
            .map_err(control_err)
    }

    fn table_set_entry_counter(
        &self,
        table: &str,
        handle: u32,
        packets: u64,
        bytes: u64,
    ) -> PyResult<()> {
        self.sw()
            .table_set_entry_counter(table, handle, packets, bytes)
            .map_err(control_err)
    }

    fn table_set_entry_meter(
        &self,
        table: &str,
        handle: u32,
        cir: u64,
        cburst: u64,
        pir: u64,
        pburst: u64,
    ) -> PyResult<()> {
        self.sw()
            .table_set_entry_meter(table, handle, [(cir, cburst), (pir, pburst)])
            .map_err(control_err)
    }

    // ------------------------------------------------------------ externs

    fn counter_read(&self, name: &str, index: usize) -> PyResult<(u64, u64)> {
        self.sw().counter_read(name, index).map_err(control_err)
    }

    fn counter_write(&self, name: &str, index: usize, packets: u64, bytes: u64) -> PyResult<()> {
        self.sw()
            .counter_write(name, index, packets, bytes)
            .map_err(control_err)
    }

    fn register_read(&self, name: &str, index: usize) -> PyResult<u128> {
        self.sw().register_read(name, index).map_err(control_err)
    }

    fn register_write(&self, name: &str, index: usize, value: u128) -> PyResult<()> {
        self.sw()
            .register_write(name, index, value)
            .map_err(control_err)
    }

    fn meter_set_rates(
        &self,
        name: &str,
        index: usize,
        cir: u64,
        cburst: u64,
        pir: u64,
        pburst: u64,
    ) -> PyResult<()> {
        self.sw()
            .meter_set_rates(name, index, [(cir, cburst), (pir, pburst)])
            .map_err(control_err)
    }

    fn meter_reset(&self, name: &str, index: usize) -> PyResult<()> {
        self.sw().meter_reset(name, index).map_err(control_err)
    }

    // ------------------------------------------------------------ value sets

    /// Adds a value to a parser value set (no-op if present).
    fn value_set_add(&self, name: &str, value: u128) -> PyResult<()> {
        self.sw().value_set_add(name, value).map_err(control_err)
    }

    fn value_set_remove(&self, name: &str, value: u128) -> PyResult<()> {
        self.sw().value_set_remove(name, value).map_err(control_err)
    }

    fn value_set_values(&self, name: &str) -> PyResult<Vec<u128>> {
        self.sw().value_set_values(name).map_err(control_err)
    }

    // ------------------------------------------------------------ replication

    /// Creates or replaces a multicast group: replicas `[(port, rid), ...]`.
    fn mc_group_set(&self, group: u32, replicas: Vec<(u32, u32)>) -> PyResult<()> {
        let replicas = replicas
            .into_iter()
            .map(|(port, rid)| engine::Replica { port, rid })
            .collect();
        self.sw().mc_group_set(group, replicas).map_err(control_err)
    }

    fn mc_group_delete(&self, group: u32) -> PyResult<()> {
        self.sw().mc_group_delete(group).map_err(control_err)
    }

    /// Creates or replaces a clone session; `truncate` 0 keeps whole packets.
    fn clone_session_set(
        &self,
        session: u32,
        replicas: Vec<(u32, u32)>,
        truncate: usize,
    ) -> PyResult<()> {
        let s = engine::CloneSession {
            replicas: replicas
                .into_iter()
                .map(|(port, rid)| engine::Replica { port, rid })
                .collect(),
            truncate: (truncate > 0).then_some(truncate),
        };
        self.sw().clone_session_set(session, s).map_err(control_err)
    }

    fn clone_session_delete(&self, session: u32) -> PyResult<()> {
        self.sw().clone_session_delete(session).map_err(control_err)
    }
}

/// The data-plane thread over AF_PACKET ports (see `ratelab_dataplane`).
#[pyclass(frozen, module = "ratelab_engine")]
struct Dataplane {
    inner: Mutex<dataplane::Dataplane>,
}

type EventTuple = (String, Py<PyAny>);

impl Dataplane {
    fn dp(&self) -> MutexGuard<'_, dataplane::Dataplane> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl Dataplane {
    /// Opens `ports` `[(number, iface), ...]` and starts the thread. Frames to
    /// `cpu_port` become PacketIn events; `pcap_dir` turns on capture;
    /// `use_files` (seconds to wait) makes each port the pcap files
    /// `IFACE_in.pcap` / `IFACE_out.pcap` instead of an interface. Raises
    /// OSError naming the interface or file that cannot be opened.
    #[new]
    #[pyo3(signature = (ports, cpu_port = None, pcap_dir = None, use_files = None))]
    fn new(
        py: Python<'_>,
        ports: Vec<(u32, String)>,
        cpu_port: Option<u32>,
        pcap_dir: Option<std::path::PathBuf>,
        use_files: Option<u32>,
    ) -> PyResult<Self> {
        let config = dataplane::Config {
            ports: ports
                .into_iter()
                .map(|(number, iface)| dataplane::PortSpec { number, iface })
                .collect(),
            cpu_port,
            pcap_dir,
            use_files: use_files.map(|s| Duration::from_secs(s.into())),
        };
        let dp = py.detach(|| dataplane::Dataplane::start(config, None))?;
        Ok(Dataplane {
            inner: Mutex::new(dp),
        })
    }

    /// The switch the loop feeds (None: frames are dropped).
    fn set_switch(&self, switch: Option<PyRef<'_, Switch>>) {
        let engine = switch.map(|s| s.inner.clone());
        self.dp().set_engine(engine);
    }

    /// `data` arrives on `port` on the loop's next turn (thread-safe).
    fn inject(&self, port: u32, data: Vec<u8>) {
        self.dp().inject(port, data);
    }

    /// Waits up to `timeout` seconds (GIL released) for controller events:
    /// `[("packet_in", bytes) | ("digest", (name, [values])) | ("warning", str)
    /// | ("fatal", str)]`; None once the loop has stopped and all were taken.
    fn next_events(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<Vec<EventTuple>>> {
        let timeout = Duration::from_secs_f64(timeout.max(0.0));
        // Not under `self.inner`: stop() must be able to take it meanwhile.
        let shared = self.dp().events_handle();
        let Some(events) = py.detach(|| shared.next_events(timeout)) else {
            return Ok(None);
        };
        events
            .into_iter()
            .map(|e| {
                Ok(match e {
                    dataplane::Event::PacketIn(data) => (
                        "packet_in".into(),
                        PyBytes::new(py, &data).into_any().unbind(),
                    ),
                    dataplane::Event::Digest(name, values) => (
                        "digest".into(),
                        (name, values).into_pyobject(py)?.into_any().unbind(),
                    ),
                    dataplane::Event::Warning(m) => {
                        ("warning".into(), m.into_pyobject(py)?.into_any().unbind())
                    }
                    dataplane::Event::Fatal(m) => {
                        ("fatal".into(), m.into_pyobject(py)?.into_any().unbind())
                    }
                })
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }

    /// Per-port counters of the loop: `{"ports": {number: {...}}, "unknown_port_drops": n,
    /// "event_drops": n, "turns": n}`.
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let s = self.dp().stats();
        let ports = pyo3::types::PyDict::new(py);
        for p in s.ports {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("iface", p.iface)?;
            d.set_item("rx_packets", p.rx_packets)?;
            d.set_item("tx_packets", p.tx_packets)?;
            d.set_item("tx_errors", p.tx_errors)?;
            d.set_item("mtu_drops", p.mtu_drops)?;
            d.set_item("rx_drops", p.rx_drops)?;
            ports.set_item(p.number, d)?;
        }
        let out = pyo3::types::PyDict::new(py);
        out.set_item("ports", ports)?;
        out.set_item("unknown_port_drops", s.unknown_port_drops)?;
        out.set_item("event_drops", s.event_drops)?;
        out.set_item("turns", s.turns)?;
        Ok(out.into_any().unbind())
    }

    fn is_running(&self) -> bool {
        self.dp().is_running()
    }

    /// Stops the thread and closes the sockets and capture files (idempotent).
    fn stop(&self, py: Python<'_>) {
        py.detach(|| self.dp().stop());
    }
}

fn parse_trace(text: &str, name: &str) -> PyResult<engine::Trace> {
    engine::Trace::parse(text, name).map_err(|e| invalid(e.to_string()))
}

/// Checks a mahimahi trace's text (`name` names it in errors): its
/// (opportunities per period, period in ms, mean rate in bit/s), or
/// EngineError("invalid_argument", "NAME:LINE: ...").
#[pyfunction]
fn check_trace(text: &str, name: &str) -> PyResult<(usize, u64, u64)> {
    let t = parse_trace(text, name)?;
    Ok((t.opportunities(), t.period_ms(), t.mean_rate_bps()))
}

#[pymodule]
fn ratelab_engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(check_trace, m)?)?;
    m.add_class::<Switch>()?;
    m.add_class::<Dataplane>()?;
    Ok(())
}
