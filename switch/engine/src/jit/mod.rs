//! The pipeline compiled to native code when a program loads: parser,
//! checksum controls, ingress and egress controls, deparser.
//!
//! The interpreter (`exec`) pays for every parser op, node of the control
//! graph and primitive: a `match`, a closure call, bounds checks. The
//! router runs about 30 nodes and 40 primitives a packet, most of them p4c's
//! one-action tables and copies between temporaries. Here each part becomes
//! one function, built with LLVM: a conditional is a branch on its
//! expression, an action of a one-action table is its assignments with the
//! action data as constants, the next node is a jump, a header is extracted
//! and emitted a word at a time.
//!
//! What the generated code does itself: expressions over fields, action
//! data, constants and validity bits (everything but division, modulo and
//! the rarer forms, which call back into the interpreter's evaluator),
//! assignments, `mark_to_drop`, running the action a table selected, the
//! IPv4-style `csum16`, and the parser and deparser when every header they
//! touch is whole bytes. Everything else calls back into the interpreter:
//! table lookups, externs (registers and counters through short callbacks;
//! meters, hashes and the rest through the primitive's step), header
//! operations, and actions with control flow (`exit`, `assert`); a parser or
//! deparser the generator cannot handle completely is interpreted whole.
//! The interpreter stays the reference: `tests/compiled.rs` runs the same
//! packets through both and compares every frame, counter and register
//! (engine README, "Native code").

mod codegen;
mod helpers;

use crate::exec::{Pkt, State};
use crate::program::{Node, Program};
use helpers::Env;
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::targets::{CodeModel, RelocMode, Target, TargetMachine};
use std::sync::Once;

/// A compiled pipeline: field values, validity bytes, the callback context.
type PipelineFn = unsafe extern "C" fn(vals: *mut u128, valid: *mut u8, env: *mut Env);

/// The compiled parser: parses the `len` bytes at `data`, stores
/// `parser_error`, returns the cursor in bits.
type ParseFn = unsafe extern "C" fn(
    vals: *mut u128,
    valid: *mut u8,
    env: *mut Env,
    data: *const u8,
    len: u64,
) -> u64;

/// The compiled deparser: writes the valid headers to `out`, returns their
/// length in bytes.
type DeparseFn =
    unsafe extern "C" fn(vals: *mut u128, valid: *mut u8, env: *mut Env, out: *mut u8) -> u64;

self_cell::self_cell!(
    /// The LLVM context and the execution engine that owns the code made in it.
    struct Code {
        owner: Context,
        #[not_covariant]
        dependent: ExecutionEngine,
    }
);

/// Native code for a program's ingress and egress controls.
pub(crate) struct Jit {
    ingress: Option<PipelineFn>,
    egress: Option<PipelineFn>,
    verify: Option<PipelineFn>,
    update: Option<PipelineFn>,
    parse: Option<ParseFn>,
    deparse: Option<DeparseFn>,
    /// Bytes of every deparsed header's fixed part, plus the 8 the
    /// deparser may write past the last one.
    header_room: usize,
    /// The variable-length field slot of each deparser entry that has one
    /// (an entry listed twice is written twice).
    deparsed_varbits: Vec<u32>,
    /// Expressions the code hands back to the evaluator; it holds their
    /// addresses, so they live (boxed, never moved) as long as the code.
    _fallbacks: codegen::Fallbacks,
    _code: Code,
}

// SAFETY: the LLVM context and engine are only touched when the code is
// built and when it is dropped, never concurrently; running the generated
// functions uses only the `&mut` state passed in.
unsafe impl Send for Jit {}
// SAFETY: shared (`LoadedProgram`) between switches that may run on other
// threads: `run` only reads the function pointers and the fallbacks, which
// nothing changes after the code is built; each call works on the state and
// packet passed in, so calls from several threads do not touch one another.
unsafe impl Sync for Jit {}

/// Which control to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pipeline {
    Ingress,
    Egress,
    /// `verify_checksum` (after the parser).
    Verify,
    /// `update_checksum` (before the deparser).
    Update,
}

static LLVM_INIT: Once = Once::new();

impl Jit {
    /// Compiles the program's controls, or says why it could not.
    pub fn compile(p: &Program) -> Result<Jit, String> {
        if cfg!(target_endian = "big") {
            // The code loads and stores packet words little-endian, then swaps.
            return Err("native code is built for little-endian machines only".into());
        }
        let mut init = Ok(());
        LLVM_INIT.call_once(|| {
            init = inkwell::targets::Target::initialize_native(
                &inkwell::targets::InitializationConfig::default(),
            );
        });
        init?;
        let mut fallbacks = Vec::new();
        let mut fns = [None; 4];
        let mut deparse = None;
        let mut parse = None;
        let code = Code::try_new(Context::create(), |ctx| {
            let module = ctx.create_module("ratelab_pipeline");
            // The host's layout before the passes run (MCJIT would set it
            // only when it takes the module).
            let triple = TargetMachine::get_default_triple();
            let machine = Target::from_triple(&triple)
                .map_err(|e| e.to_string())?
                .create_target_machine(
                    &triple,
                    "generic",
                    "",
                    inkwell::OptimizationLevel::Default,
                    RelocMode::Default,
                    CodeModel::JITDefault,
                )
                .ok_or("LLVM has no target machine for this host")?;
            module.set_triple(&triple);
            module.set_data_layout(&machine.get_target_data().get_data_layout());
            let mut g = codegen::Gen::new(ctx, &module, p, &mut fallbacks);
            let names = [
                p.ingress.map(|n| g.pipeline("ingress", n)).transpose()?,
                p.egress.map(|n| g.pipeline("egress", n)).transpose()?,
                (p.checksums.iter().any(|c| c.verify))
                    .then(|| g.checksums("verify", true))
                    .transpose()?,
                (p.checksums.iter().any(|c| c.update))
                    .then(|| g.checksums("update", false))
                    .transpose()?,
            ];
            let deparser = g.deparser("deparse")?;
            let parser = g.parser("parse")?;
            g.optimize();
            let ee = module
                .create_jit_execution_engine(inkwell::OptimizationLevel::Default)
                .map_err(|e| e.to_string())?;
            g.map_helpers(&ee);
            let address = |name: Option<&'static str>| -> Result<Option<PipelineFn>, String> {
                let Some(name) = name else { return Ok(None) };
                let a = ee.get_function_address(name).map_err(|e| e.to_string())?;
                // SAFETY: `name` was built with exactly this signature.
                Ok(Some(unsafe { std::mem::transmute::<usize, PipelineFn>(a) }))
            };
            for (f, name) in fns.iter_mut().zip(names) {
                *f = address(name)?;
            }
            if let Some(name) = deparser {
                let a = ee.get_function_address(name).map_err(|e| e.to_string())?;
                // SAFETY: `name` was built with exactly this signature.
                deparse = Some(unsafe { std::mem::transmute::<usize, DeparseFn>(a) });
            }
            if let Some(name) = parser {
                let a = ee.get_function_address(name).map_err(|e| e.to_string())?;
                // SAFETY: `name` was built with exactly this signature.
                parse = Some(unsafe { std::mem::transmute::<usize, ParseFn>(a) });
            }
            Ok::<_, String>(ee)
        })?;
        let [ingress, egress, verify, update] = fns;
        let deparsed_varbits = (p.deparser.iter())
            .filter_map(|&h| p.headers[h as usize].varbit.as_ref().map(|v| v.slot))
            .collect();
        let header_room = 8
            + (p.deparser.iter())
                .map(|&h| p.headers[h as usize].bits as usize / 8)
                .sum::<usize>();
        Ok(Jit {
            ingress,
            egress,
            verify,
            update,
            parse,
            deparse,
            header_room,
            deparsed_varbits,
            _fallbacks: fallbacks,
            _code: code,
        })
    }

    /// Runs a control on `pkt`, as `exec::run_control` does from the
    /// program's start node.
    pub fn run(&self, which: Pipeline, p: &Program, st: &mut State, pkt: &mut Pkt) {
        let f = match which {
            Pipeline::Ingress => self.ingress,
            Pipeline::Egress => self.egress,
            Pipeline::Verify => self.verify,
            Pipeline::Update => self.update,
        };
        // None: the program has no such control, or no such checksum.
        let Some(f) = f else { return };
        pkt.flags.exit = false;
        let pkt: *mut Pkt = pkt;
        // SAFETY: the field and validity arrays have the lengths the program
        // was validated against, and nothing resizes them while a packet
        // runs; the code reads and writes them only between callbacks, and
        // each callback reborrows the packet from `env` alone.
        unsafe {
            let vals = (*pkt).phv.vals.as_mut_ptr();
            let valid = (*pkt).phv.valid.as_mut_ptr().cast::<u8>();
            let mut env = Env { prog: p, st, pkt };
            f(vals, valid, &mut env);
            (*pkt).flags.exit = false;
        }
    }
}

impl Jit {
    /// The parts of the pipeline that run as native code, in packet order.
    pub fn stages(&self) -> Vec<&'static str> {
        [
            ("parser", self.parse.is_some()),
            ("verify_checksum", self.verify.is_some()),
            ("ingress", self.ingress.is_some()),
            ("egress", self.egress.is_some()),
            ("update_checksum", self.update.is_some()),
            ("deparser", self.deparse.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect()
    }

    /// Parses `data` into `pkt` as `exec::parse` does: where the payload
    /// starts; `None` (and nothing done) when the program's parser is not
    /// compiled.
    pub fn parse(&self, p: &Program, st: &mut State, pkt: &mut Pkt, data: &[u8]) -> Option<usize> {
        let f = self.parse?;
        let pkt: *mut Pkt = pkt;
        // SAFETY: as in `run`; the code reads `data` only below its length.
        unsafe {
            let vals = (*pkt).phv.vals.as_mut_ptr();
            let valid = (*pkt).phv.valid.as_mut_ptr().cast::<u8>();
            let mut env = Env { prog: p, st, pkt };
            let cur = f(vals, valid, &mut env, data.as_ptr(), data.len() as u64) as usize;
            Some((cur / 8).min(data.len()))
        }
    }

    /// Deparses `pkt` into `out` as `exec::deparse` does; `false` (and
    /// nothing written) when the program's deparser is not compiled.
    pub fn deparse(&self, p: &Program, st: &mut State, pkt: &mut Pkt, out: &mut Vec<u8>) -> bool {
        let Some(f) = self.deparse else {
            return false;
        };
        let varbits: usize = (self.deparsed_varbits.iter())
            .map(|&slot| pkt.phv.varbits[slot as usize].1.len())
            .sum();
        let room = self.header_room + varbits;
        out.clear();
        out.reserve(room + pkt.payload().len());
        let pkt: *mut Pkt = pkt;
        // SAFETY: as in `run`; `out` has room for every deparser entry's
        // fixed part and variable-length field, and the 8 bytes the last word may
        // write past its end, and the code reports how many it wrote.
        unsafe {
            let vals = (*pkt).phv.vals.as_mut_ptr();
            let valid = (*pkt).phv.valid.as_mut_ptr().cast::<u8>();
            let mut env = Env { prog: p, st, pkt };
            let n = f(vals, valid, &mut env, out.as_mut_ptr()) as usize;
            debug_assert!(n + 8 <= room, "the deparser wrote past its room");
            out.set_len(n);
            (*pkt).finish_deparse(out, n);
        }
        true
    }
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Jit")
    }
}

/// A node as the table callback reports it to the generated code.
pub(crate) fn node_code(n: Option<Node>) -> i64 {
    match n {
        None => -1,
        Some(Node::Table(t)) => t as i64,
        Some(Node::Cond(c)) => (1 << 32) | c as i64,
        Some(Node::Call(c)) => (2 << 32) | c as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{update_checksums, verify_checksums, Flags};
    use crate::phv::Phv;
    use crate::rng::Rng;

    const BASIC: &str = include_str!("../../tests/fixtures/basic.json");

    /// The compiled checksum controls against `exec`'s on random header
    /// vectors, the IPv4 header valid or not. The conditions are removed, so
    /// that the compiled sum must itself fall back when the header is
    /// invalid (its fields then drop out of the input).
    #[test]
    fn checksums_match_the_interpreter_with_and_without_their_header() {
        let mut json: serde_json::Value = serde_json::from_str(BASIC).unwrap();
        for ck in json["checksums"].as_array_mut().unwrap() {
            ck["if_cond"] = serde_json::Value::Null;
        }
        let p = crate::load::load(&json.to_string()).unwrap();
        let jit = Jit::compile(&p).unwrap();
        let mut rng = Rng::new(9);
        let (mut invalid, mut bad) = (0, 0);
        for _ in 0..2000 {
            let mut phv = Phv::new(p.fields.len(), &p.valid_init, p.stacks.len(), p.n_varbits);
            for (v, &m) in phv.vals.iter_mut().zip(&p.field_masks) {
                *v = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & m;
            }
            for v in phv.valid.iter_mut() {
                *v = !rng.next_u64().is_multiple_of(4);
            }
            let pkt = Pkt {
                phv,
                frame: vec![1, 2, 3],
                payload_at: 0,
                len: 64,
                flags: Flags::default(),
            };
            for which in [Pipeline::Verify, Pipeline::Update] {
                let (mut want, mut got) = (pkt.clone(), pkt.clone());
                let mut st = State::new(&p, 1);
                match which {
                    Pipeline::Verify => verify_checksums(&p, &mut st, &mut want),
                    _ => update_checksums(&p, &mut st, &mut want),
                }
                jit.run(which, &p, &mut State::new(&p, 1), &mut got);
                assert_eq!(got.phv.vals, want.phv.vals, "{which:?}");
                bad += (want.phv.vals != pkt.phv.vals) as u32;
            }
            invalid += pkt.phv.valid.iter().any(|v| !v) as u32;
        }
        assert!(invalid > 500 && bad > 500, "{invalid} {bad}");
    }
}
