//! The control pipelines compiled to native code when a program loads.
//!
//! The interpreter (`exec::run_control`) pays for every node of the control
//! graph and every primitive: a `match`, a closure call, bounds checks. The
//! router runs about 30 nodes and 40 primitives a packet, most of them p4c's
//! one-action tables and copies between temporaries. Here each pipeline
//! becomes one function, built with LLVM: a conditional is a branch on its
//! expression, an action of a one-action table is its assignments with the
//! action data as constants, and the next node is a jump.
//!
//! What the generated code does itself: expressions over fields, action
//! data, constants and validity bits (everything but division, modulo and
//! the rarer forms, which call back into the interpreter's evaluator),
//! assignments to fields, `mark_to_drop`. Everything else calls back into
//! the interpreter: table lookups and the actions they select, externs
//! (registers, counters, meters, hashes), header operations, and actions
//! with control flow (`exit`, `assert`). The interpreter stays the
//! reference: `tests/compiled.rs` runs the same packets through both and
//! compares every frame, counter and register.

mod codegen;
mod helpers;

use crate::exec::{Pkt, State};
use crate::program::{Node, Program};
use helpers::Env;
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use std::sync::Once;

/// A compiled pipeline: field values, validity bytes, the callback context.
type PipelineFn = unsafe extern "C" fn(vals: *mut u128, valid: *mut u8, env: *mut Env);

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
    /// Expressions the code hands back to the evaluator; it holds their
    /// addresses, so they live (boxed, never moved) as long as the code.
    _fallbacks: codegen::Fallbacks,
    _code: Code,
}

// SAFETY: the LLVM context and engine are only touched when the code is
// built and when it is dropped, never concurrently; running the generated
// functions uses only the `&mut` state passed in.
unsafe impl Send for Jit {}

/// Which control to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pipeline {
    Ingress,
    Egress,
}

static LLVM_INIT: Once = Once::new();

impl Jit {
    /// Compiles the program's controls, or says why it could not.
    pub fn compile(p: &Program) -> Result<Jit, String> {
        let mut init = Ok(());
        LLVM_INIT.call_once(|| {
            init = inkwell::targets::Target::initialize_native(
                &inkwell::targets::InitializationConfig::default(),
            );
        });
        init?;
        let mut fallbacks = Vec::new();
        let mut fns = (None, None);
        let code = Code::try_new(Context::create(), |ctx| {
            let module = ctx.create_module("ratelab_pipeline");
            let mut g = codegen::Gen::new(ctx, &module, p, &mut fallbacks);
            let names = (
                p.ingress.map(|n| g.pipeline("ingress", n)).transpose()?,
                p.egress.map(|n| g.pipeline("egress", n)).transpose()?,
            );
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
            fns = (address(names.0)?, address(names.1)?);
            Ok::<_, String>(ee)
        })?;
        Ok(Jit {
            ingress: fns.0,
            egress: fns.1,
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
        };
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
