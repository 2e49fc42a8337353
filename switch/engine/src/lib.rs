//! ratelab-engine: executes BMv2 JSON programs (v1model / simple_switch) for
//! ratelab's software switch.
//!
//! The engine never reads a clock: every packet arrives with its timestamp
//! (microseconds, `u64`), and the traffic manager's drain schedule is computed
//! from those timestamps. See `README.md` next to this crate for the full
//! description of the semantics; the short version:
//!
//! ```no_run
//! use ratelab_engine::{Switch, MatchValue, Rate};
//! let json = std::fs::read_to_string("router.json").unwrap();
//! let mut sw = Switch::new(&json, 1).unwrap();
//! sw.table_add("MyIngress.ipv4_lpm", vec![MatchValue::Lpm(0x0a000100, 24)],
//!              "MyIngress.ipv4_forward", &[0x000000000102, 2], 0).unwrap();
//! sw.set_port_rate(2, Rate::Bps(10_000_000)).unwrap();
//! sw.inject(1, &[0u8; 64], 0);
//! for f in sw.poll(10) { println!("port {} {} bytes", f.port, f.data.len()); }
//! ```
//!
//! Values: fields up to 128 bits wide; field values are `u128` bit patterns,
//! expression arithmetic is done in `i128` with BMv2's rules (exact while
//! intermediate results fit in 128 bits; results truncated to the destination
//! width when stored).

#![deny(missing_docs)]

pub mod calc;
mod compile;
mod csum_plan;
mod error;
mod exec;
mod jit;
mod json;
mod load;
mod phv;
mod program;
pub mod rng;
mod steps;
mod switch;
mod table;
pub mod trace;
mod wire;

pub use calc::CrcParams;
pub use error::{ControlError, LoadError};
pub use exec::Digest;
pub use program::MatchKind;
pub use switch::{
    instance_type, ActionInfo, CloneSession, EntryInfo, Frame, KeyInfo, LoadedProgram, PortStats,
    Rate, Replica, Switch, SwitchStats, TableInfo, DEFAULT_QUEUE_DEPTH, DROP_PORT, MAX_DESCENDANTS,
    MAX_LOOPS, MAX_PORTS, SPARE_BUFFERS,
};
pub use table::{MatchValue, GREEN, RED, YELLOW};
pub use trace::{Trace, TraceCursor, TraceError};

/// Checks a BMv2 JSON program without building a switch.
pub fn validate(json: &str) -> Result<(), LoadError> {
    load::load(json).map(|_| ())
}

#[cfg(test)]
mod send_check {
    fn is_send<T: Send>() {}
    #[test]
    fn switch_is_send() {
        is_send::<super::Switch>();
    }
}
