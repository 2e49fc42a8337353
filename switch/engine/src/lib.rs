//! ratelab-engine: executes BMv2 JSON programs (v1model) for ratelab's software switch.
//!
//! The engine never reads a clock: every packet arrives with its timestamp.
