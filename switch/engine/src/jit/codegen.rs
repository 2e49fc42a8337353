//! LLVM IR for a control pipeline (see the module docs of `jit`).
//!
//! Values are `i128` throughout, with the interpreter's rules
//! (`program::apply_bin`): wrapping arithmetic, signed comparisons, 0 / 1
//! booleans, shifts defined for every amount. The fields live in an array of
//! `i128` (the packet's `u128` values) and the validity bits in an array of
//! bytes; both pointers are the generated function's first two arguments.

use super::helpers::{self, NO_DATA, SELECTED};
use super::node_code;
use crate::compile::CExpr;
use crate::phv::Val;
use crate::program::{
    BinOp, Expr, Extract, HdrRef, LField, Node, ParserOp, Prim, Program, Src, Transition,
};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::types::IntType;
use inkwell::values::{BasicValue, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use std::collections::HashMap;

/// An expression handed back to the evaluator, with the action data of its
/// call site: constant, or the data the table selected (`selected`).
pub(crate) struct Fallback {
    pub expr: CExpr,
    pub data: Box<[Val]>,
    pub selected: bool,
}

/// The fallbacks of one compilation. Boxed: the code holds their
/// addresses, which must not move when the vector grows.
#[allow(clippy::vec_box)]
pub(crate) type Fallbacks = Vec<Box<Fallback>>;

/// The action data of the action being built.
#[derive(Clone, Copy)]
enum Data<'a, 'ctx> {
    /// Known when the program loads (one-action tables, calls).
    Const(&'a [Val]),
    /// Chosen by a table lookup: `nparams` values at `ptr`.
    Selected {
        ptr: PointerValue<'ctx>,
        nparams: usize,
    },
}

/// Builds the pipelines of one module.
pub(super) struct Gen<'ctx, 'a> {
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    p: &'a Program,
    fallbacks: &'a mut Fallbacks,
    i128t: IntType<'ctx>,
    h_select: FunctionValue<'ctx>,
    h_action: FunctionValue<'ctx>,
    h_step: FunctionValue<'ctx>,
    h_eval: FunctionValue<'ctx>,
    h_reg_read: FunctionValue<'ctx>,
    h_reg_write: FunctionValue<'ctx>,
    h_count: FunctionValue<'ctx>,
    h_calc: FunctionValue<'ctx>,
    h_varbit_len: FunctionValue<'ctx>,
    h_varbit_copy: FunctionValue<'ctx>,
    h_varbit_set: FunctionValue<'ctx>,
    functions: Vec<FunctionValue<'ctx>>,
}

/// The function being built.
struct Frame<'ctx> {
    vals: PointerValue<'ctx>,
    valid: PointerValue<'ctx>,
    env: PointerValue<'ctx>,
    /// Where the evaluator callback writes its result.
    slot: PointerValue<'ctx>,
    /// Where the table callback writes the action, its data and their count.
    sel_action: PointerValue<'ctx>,
    sel_data: PointerValue<'ctx>,
    sel_len: PointerValue<'ctx>,
    blocks: HashMap<Node, BasicBlock<'ctx>>,
    end: BasicBlock<'ctx>,
}

fn err(e: BuilderError) -> String {
    format!("LLVM builder: {e}")
}

impl<'ctx, 'a> Gen<'ctx, 'a> {
    pub fn new(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        p: &'a Program,
        fallbacks: &'a mut Fallbacks,
    ) -> Gen<'ctx, 'a> {
        let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
        let ptr = ctx.i8_type().ptr_type(AddressSpace::default());
        let void = ctx.void_type();
        let h_select = module.add_function(
            "rl_select",
            i64t.fn_type(
                &[ptr.into(), i32t.into(), ptr.into(), ptr.into(), ptr.into()],
                false,
            ),
            None,
        );
        let h_action = module.add_function(
            "rl_action",
            i32t.fn_type(&[ptr.into(), i32t.into(), i32t.into()], false),
            None,
        );
        let h_step = module.add_function(
            "rl_step",
            void.fn_type(&[ptr.into(), i32t.into(), i32t.into(), i32t.into()], false),
            None,
        );
        let h_eval = module.add_function(
            "rl_eval",
            void.fn_type(&[ptr.into(), ptr.into(), ptr.into()], false),
            None,
        );
        let h_reg_read = module.add_function(
            "rl_reg_read",
            void.fn_type(
                &[
                    ptr.into(),
                    i32t.into(),
                    i64t.into(),
                    i64t.into(),
                    ptr.into(),
                ],
                false,
            ),
            None,
        );
        let h_reg_write = module.add_function(
            "rl_reg_write",
            void.fn_type(
                &[
                    ptr.into(),
                    i32t.into(),
                    i64t.into(),
                    i64t.into(),
                    i64t.into(),
                    i64t.into(),
                ],
                false,
            ),
            None,
        );
        let h_count = module.add_function(
            "rl_count",
            void.fn_type(&[ptr.into(), i32t.into(), i64t.into(), i64t.into()], false),
            None,
        );
        let h_calc = module.add_function(
            "rl_calc",
            i64t.fn_type(&[ptr.into(), i32t.into()], false),
            None,
        );
        let h_varbit_len = module.add_function(
            "rl_varbit_len",
            i64t.fn_type(&[ptr.into(), i32t.into()], false),
            None,
        );
        let h_varbit_copy = module.add_function(
            "rl_varbit_copy",
            i64t.fn_type(&[ptr.into(), i32t.into(), ptr.into()], false),
            None,
        );
        let h_varbit_set = module.add_function(
            "rl_varbit_set",
            void.fn_type(&[ptr.into(), i32t.into(), ptr.into(), i64t.into()], false),
            None,
        );
        Gen {
            ctx,
            module,
            b: ctx.create_builder(),
            p,
            fallbacks,
            i128t: ctx.i128_type(),
            h_select,
            h_action,
            h_step,
            h_eval,
            h_reg_read,
            h_reg_write,
            h_count,
            h_calc,
            h_varbit_len,
            h_varbit_copy,
            h_varbit_set,
            functions: Vec::new(),
        }
    }

    /// Points the callbacks at the interpreter's entry points.
    pub fn map_helpers(&self, ee: &ExecutionEngine<'ctx>) {
        let table: [(FunctionValue<'ctx>, *const ()); 11] = [
            (self.h_select, helpers::select as *const ()),
            (self.h_action, helpers::action as *const ()),
            (self.h_step, helpers::step as *const ()),
            (self.h_eval, helpers::eval as *const ()),
            (self.h_reg_read, helpers::reg_read as *const ()),
            (self.h_reg_write, helpers::reg_write as *const ()),
            (self.h_count, helpers::count as *const ()),
            (self.h_calc, helpers::calc as *const ()),
            (self.h_varbit_len, helpers::varbit_len as *const ()),
            (self.h_varbit_copy, helpers::varbit_copy as *const ()),
            (self.h_varbit_set, helpers::varbit_set as *const ()),
        ];
        for (f, address) in table {
            ee.add_global_mapping(&f, address as usize);
        }
    }

    /// Cleans up the generated functions (folds the constant action data,
    /// merges repeated loads).
    // The legacy pass manager: LLVM 14 (the version this crate is built
    // against) supports it fully, and it needs no target machine.
    #[allow(deprecated)]
    pub fn optimize(&self) {
        let fpm = inkwell::passes::PassManager::create(self.module);
        fpm.add_promote_memory_to_register_pass();
        fpm.add_instruction_combining_pass();
        fpm.add_early_cse_pass();
        fpm.add_cfg_simplification_pass();
        fpm.initialize();
        for f in &self.functions {
            fpm.run_on(f);
        }
        fpm.finalize();
    }

    /// Starts function `name` (fields, validity, callback context): its
    /// entry block, with the slots the callbacks write, and its end block.
    fn begin(
        &mut self,
        name: &str,
        nodes: &[Node],
    ) -> Result<(Frame<'ctx>, FunctionValue<'ctx>), String> {
        let ptr = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let fty = self
            .ctx
            .void_type()
            .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
        let f = self.module.add_function(name, fty, None);
        self.functions.push(f);
        let entry = self.ctx.append_basic_block(f, "entry");
        let end = self.ctx.append_basic_block(f, "end");
        let blocks = nodes
            .iter()
            .map(|&n| (n, self.ctx.append_basic_block(f, "node")))
            .collect();
        self.b.position_at_end(entry);
        let i128p = self.i128t.ptr_type(AddressSpace::default());
        let param = |i: u32| {
            f.get_nth_param(i)
                .expect("3 parameters")
                .into_pointer_value()
        };
        let vals = self
            .b
            .build_pointer_cast(param(0), i128p, "vals")
            .map_err(err)?;
        let slot = self.b.build_alloca(self.i128t, "slot").map_err(err)?;
        let sel_action = self
            .b
            .build_alloca(self.ctx.i32_type(), "sel_action")
            .map_err(err)?;
        let sel_data = self.b.build_alloca(i128p, "sel_data").map_err(err)?;
        let sel_len = self
            .b
            .build_alloca(self.ctx.i64_type(), "sel_len")
            .map_err(err)?;
        let fr = Frame {
            vals,
            valid: param(1),
            env: param(2),
            slot,
            sel_action,
            sel_data,
            sel_len,
            blocks,
            end,
        };
        Ok((fr, f))
    }

    /// Closes function `name`: its end block returns.
    fn finish(&self, name: &str, fr: &Frame<'ctx>, f: FunctionValue<'ctx>) -> Result<(), String> {
        self.b.position_at_end(fr.end);
        self.b.build_return(None).map_err(err)?;
        if !f.verify(false) {
            return Err(format!("LLVM rejected the generated {name} function"));
        }
        Ok(())
    }

    /// Builds the function `name` running the control graph from `start`.
    pub fn pipeline(&mut self, name: &'static str, start: Node) -> Result<&'static str, String> {
        let nodes = reachable(self.p, start);
        let (fr, f) = self.begin(name, &nodes)?;
        self.goto(&fr, Some(start))?;
        for &n in &nodes {
            self.b.position_at_end(fr.blocks[&n]);
            self.node(&fr, n)?;
        }
        self.finish(name, &fr, f)?;
        Ok(name)
    }

    /// Builds the function `name` verifying (`verify`) or updating the
    /// program's checksums, as `exec::verify_checksums` and
    /// `exec::update_checksums` do. `csum16` over one header's fields (the
    /// IPv4 header checksum) is summed here; any other calculation, and one
    /// whose variable-length fields hold bytes, calls the interpreter.
    pub fn checksums(&mut self, name: &'static str, verify: bool) -> Result<&'static str, String> {
        let p = self.p;
        let (fr, f) = self.begin(name, &[])?;
        for ck in &p.checksums {
            if !(if verify { ck.verify } else { ck.update }) {
                continue;
            }
            let next = self.ctx.append_basic_block(f, "next_checksum");
            if let Some(c) = &ck.cond {
                let v = self.expr(&fr, c.tree(), Data::Const(&[]))?;
                let on = self.nonzero(v)?;
                let run = self.ctx.append_basic_block(f, "checksum");
                self.b
                    .build_conditional_branch(on, run, next)
                    .map_err(err)?;
                self.b.position_at_end(run);
            }
            let sum = self.calculation(&fr, f, ck.calc)?;
            let sum = self
                .b
                .build_int_z_extend(sum, self.i128t, "sum")
                .map_err(err)?;
            let mask = p.field_masks[ck.target as usize];
            if verify {
                let m = self.const128(mask as Val);
                let v = self.b.build_and(sum, m, "computed").map_err(err)?;
                let have = self.load_field(&fr, ck.target)?;
                let bad = self
                    .b
                    .build_int_compare(IntPredicate::NE, v, have, "bad")
                    .map_err(err)?;
                if let Some(e) = p.sm.checksum_error {
                    let flag = self.ctx.append_basic_block(f, "checksum_error");
                    self.b
                        .build_conditional_branch(bad, flag, next)
                        .map_err(err)?;
                    self.b.position_at_end(flag);
                    let one = self.const128(1);
                    self.store_field(&fr, e, one, p.field_masks[e as usize])?;
                }
            } else {
                self.store_field(&fr, ck.target, sum, mask)?;
            }
            self.b.build_unconditional_branch(next).map_err(err)?;
            self.b.position_at_end(next);
        }
        self.b.build_unconditional_branch(fr.end).map_err(err)?;
        self.finish(name, &fr, f)?;
        Ok(name)
    }

    /// Builds the function `name` writing the valid headers in deparser
    /// order to its fourth argument, as `exec::deparse` does before the
    /// payload, and returning the bytes written; `None` when a header's
    /// fields do not fall into whole-byte words (`wire::layout`), which the
    /// interpreter's bit writer handles. Each word is stored as 8 bytes:
    /// the caller leaves 8 bytes of room past the headers.
    pub fn deparser(&mut self, name: &'static str) -> Result<Option<&'static str>, String> {
        let p = self.p;
        if p.deparser
            .iter()
            .any(|&h| p.headers[h as usize].wire.is_none())
        {
            return Ok(None);
        }
        let i8t = self.ctx.i8_type();
        let i64t = self.ctx.i64_type();
        let ptr = i8t.ptr_type(AddressSpace::default());
        let fty = i64t.fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into()], false);
        let f = self.module.add_function(name, fty, None);
        self.functions.push(f);
        let entry = self.ctx.append_basic_block(f, "entry");
        self.b.position_at_end(entry);
        let param = |i: u32| {
            f.get_nth_param(i)
                .expect("4 parameters")
                .into_pointer_value()
        };
        let i128p = self.i128t.ptr_type(AddressSpace::default());
        let vals = self
            .b
            .build_pointer_cast(param(0), i128p, "vals")
            .map_err(err)?;
        let dst = param(3);
        let end = self.ctx.append_basic_block(f, "end");
        // Only the field, validity and callback pointers are used here.
        let fr = Frame {
            vals,
            valid: param(1),
            env: param(2),
            slot: vals,
            sel_action: vals,
            sel_data: vals,
            sel_len: vals,
            blocks: HashMap::new(),
            end,
        };
        let bswap = inkwell::intrinsics::Intrinsic::find("llvm.bswap")
            .and_then(|i| i.get_declaration(self.module, &[i64t.into()]))
            .ok_or("no llvm.bswap")?;
        let i64p = i64t.ptr_type(AddressSpace::default());
        let mut pos = i64t.const_zero();
        for &h in &p.deparser {
            let hi = &p.headers[h as usize];
            let valid = self.valid_bit(&fr, h)?;
            let valid = self.nonzero(valid)?;
            let emit = self.ctx.append_basic_block(f, "emit");
            let next = self.ctx.append_basic_block(f, "next_header");
            let from = self.b.get_insert_block().ok_or("no block")?;
            self.b
                .build_conditional_branch(valid, emit, next)
                .map_err(err)?;
            self.b.position_at_end(emit);
            let mut at = pos;
            for w in hi.wire.as_deref().unwrap_or_default() {
                let mut v = i64t.const_zero();
                for (k, &(shift, m)) in w.parts.iter().enumerate() {
                    let x = self.load_field(&fr, (w.first + k) as u32)?;
                    let x = self.b.build_int_truncate(x, i64t, "f").map_err(err)?;
                    let x = self
                        .b
                        .build_and(x, i64t.const_int(m, false), "m")
                        .map_err(err)?;
                    let x = self
                        .b
                        .build_left_shift(x, i64t.const_int(shift as u64, false), "s")
                        .map_err(err)?;
                    v = self.b.build_or(v, x, "word").map_err(err)?;
                }
                // The word's bytes first, big-endian: shifted to the top, swapped.
                let top = i64t.const_int(64 - 8 * w.bytes as u64, false);
                let v = self.b.build_left_shift(v, top, "top").map_err(err)?;
                let v = self
                    .b
                    .build_call(bswap, &[v.into()], "be")
                    .map_err(err)?
                    .try_as_basic_value()
                    .basic()
                    .ok_or("bswap returns a value")?
                    .into_int_value();
                // SAFETY (generated): the caller reserved room for every header.
                let out = unsafe { self.b.build_in_bounds_gep(dst, &[at], "out") }.map_err(err)?;
                let out = self.b.build_pointer_cast(out, i64p, "out64").map_err(err)?;
                let st = self.b.build_store(out, v).map_err(err)?;
                st.set_alignment(1).map_err(|e| e.to_string())?;
                let n = i64t.const_int(w.bytes as u64, false);
                at = self.b.build_int_add(at, n, "at").map_err(err)?;
            }
            if let Some(vb) = &hi.varbit {
                // SAFETY (generated): as above.
                let out = unsafe { self.b.build_in_bounds_gep(dst, &[at], "out") }.map_err(err)?;
                let args = [fr.env.into(), self.i32(vb.slot).into(), out.into()];
                let n = self
                    .b
                    .build_call(self.h_varbit_copy, &args, "varbit")
                    .map_err(err)?
                    .try_as_basic_value()
                    .basic()
                    .ok_or("rl_varbit_copy returns a value")?
                    .into_int_value();
                at = self.b.build_int_add(at, n, "at").map_err(err)?;
            }
            let emitted = self.b.get_insert_block().ok_or("no block")?;
            self.b.build_unconditional_branch(next).map_err(err)?;
            self.b.position_at_end(next);
            let phi = self.b.build_phi(i64t, "pos").map_err(err)?;
            phi.add_incoming(&[(&pos, from), (&at, emitted)]);
            pos = phi.as_basic_value().into_int_value();
        }
        self.b.build_unconditional_branch(end).map_err(err)?;
        self.b.position_at_end(end);
        self.b.build_return(Some(&pos)).map_err(err)?;
        if !f.verify(false) {
            return Err(format!("LLVM rejected the generated {name} function"));
        }
        Ok(Some(name))
    }

    /// Builds the function `name` parsing the packet at its fourth argument
    /// (its length in bytes the fifth), as `exec::parse` does up to the
    /// payload: it stores `parser_error` and returns the cursor in bits.
    /// `None` when the parser uses what only the interpreter runs (header
    /// stacks, lookahead, advance, value sets, primitives) or has a cycle.
    pub fn parser(&mut self, name: &'static str) -> Result<Option<&'static str>, String> {
        let p = self.p;
        let Some(states) = parser_states(p) else {
            return Ok(None);
        };
        let (i8t, i64t) = (self.ctx.i8_type(), self.ctx.i64_type());
        let ptr = i8t.ptr_type(AddressSpace::default());
        let fty = i64t.fn_type(
            &[ptr.into(), ptr.into(), ptr.into(), ptr.into(), i64t.into()],
            false,
        );
        let f = self.module.add_function(name, fty, None);
        self.functions.push(f);
        let entry = self.ctx.append_basic_block(f, "entry");
        self.b.position_at_end(entry);
        let param = |i: u32| f.get_nth_param(i).expect("5 parameters");
        let i128p = self.i128t.ptr_type(AddressSpace::default());
        let vals = self
            .b
            .build_pointer_cast(param(0).into_pointer_value(), i128p, "vals")
            .map_err(err)?;
        let data = param(3).into_pointer_value();
        let len = param(4).into_int_value();
        let slot = self.b.build_alloca(self.i128t, "slot").map_err(err)?;
        let fr = Frame {
            vals,
            valid: param(1).into_pointer_value(),
            env: param(2).into_pointer_value(),
            slot,
            sel_action: vals,
            sel_data: vals,
            sel_len: vals,
            blocks: HashMap::new(),
            end: self.ctx.append_basic_block(f, "end"),
        };
        // The cursor (bytes: every supported header is whole bytes) lives in
        // a slot; the error goes to `parser_error` on the way out.
        let cur = self.b.build_alloca(i64t, "cur").map_err(err)?;
        let error = self.b.build_alloca(self.i128t, "error").map_err(err)?;
        self.b.build_store(cur, i64t.const_zero()).map_err(err)?;
        let blocks: HashMap<u32, BasicBlock<'ctx>> = states
            .iter()
            .map(|&s| (s, self.ctx.append_basic_block(f, "state")))
            .collect();
        let fail = self.ctx.append_basic_block(f, "fail");
        let accept = self.ctx.append_basic_block(f, "accept");
        let go = |n: Option<u32>| n.map_or(accept, |n| blocks[&n]);
        self.b
            .build_unconditional_branch(go(p.parser_init))
            .map_err(err)?;
        // Jumps to `fail` with error `e`.
        let fail_with = |g: &Self, e: IntValue<'ctx>| -> Result<(), String> {
            g.b.build_store(error, e).map_err(err)?;
            g.b.build_unconditional_branch(fail).map_err(err)?;
            Ok(())
        };
        for &si in &states {
            let s = &p.states[si as usize];
            self.b.position_at_end(blocks[&si]);
            for op in &s.ops {
                match op {
                    ParserOp::Extract(Extract::Header(h)) => {
                        self.extract(&fr, f, *h, None, data, len, cur, error, fail)?;
                    }
                    ParserOp::ExtractVL(Extract::Header(h), e) => {
                        let bits = self.expr(&fr, e.tree(), Data::Const(&[]))?;
                        self.extract(&fr, f, *h, Some(bits), data, len, cur, error, fail)?;
                    }
                    ParserOp::Set(LField::Static { f: fi, mask }, Src::Expr(e)) => {
                        let v = self.expr(&fr, e.tree(), Data::Const(&[]))?;
                        self.store_field(&fr, *fi, v, *mask)?;
                    }
                    ParserOp::Verify(c, e) => {
                        let c = self.expr(&fr, c.tree(), Data::Const(&[]))?;
                        let e = self.expr(&fr, e.tree(), Data::Const(&[]))?;
                        let ok = self.nonzero(c)?;
                        let go_on = self.ctx.append_basic_block(f, "verified");
                        let bad = self.ctx.append_basic_block(f, "verify_failed");
                        self.b
                            .build_conditional_branch(ok, go_on, bad)
                            .map_err(err)?;
                        self.b.position_at_end(bad);
                        fail_with(self, e)?;
                        self.b.position_at_end(go_on);
                    }
                    _ => return Err("parser_states let an unsupported op through".into()),
                }
            }
            let mut key = self.i128t.const_zero();
            for (src, w, padded) in &s.key {
                let Src::Expr(e) = src else {
                    return Err("parser_states let a lookahead through".into());
                };
                let v = self.expr(&fr, e.tree(), Data::Const(&[]))?;
                let v = self
                    .b
                    .build_and(v, self.const128(crate::phv::mask(*w) as Val), "k")
                    .map_err(err)?;
                key = if *padded >= 128 {
                    v
                } else {
                    let k = self
                        .b
                        .build_left_shift(key, self.const128(*padded as Val), "key")
                        .map_err(err)?;
                    self.b.build_or(k, v, "key").map_err(err)?
                };
            }
            for t in &s.transitions {
                match t {
                    Transition::Default(n) => {
                        self.b.build_unconditional_branch(go(*n)).map_err(err)?;
                        break;
                    }
                    Transition::Value { value, mask, next } => {
                        let m = self
                            .b
                            .build_and(key, self.const128(*mask as Val), "masked")
                            .map_err(err)?;
                        let hit = self
                            .b
                            .build_int_compare(
                                IntPredicate::EQ,
                                m,
                                self.const128(*value as Val),
                                "hit",
                            )
                            .map_err(err)?;
                        let miss = self.ctx.append_basic_block(f, "next_transition");
                        self.b
                            .build_conditional_branch(hit, go(*next), miss)
                            .map_err(err)?;
                        self.b.position_at_end(miss);
                    }
                    Transition::Vset { .. } => {
                        return Err("parser_states let a value set through".into())
                    }
                }
            }
            if !s
                .transitions
                .iter()
                .any(|t| matches!(t, Transition::Default(_)))
            {
                fail_with(self, self.const128(p.err.no_match))?;
            }
        }
        self.b.position_at_end(accept);
        self.b
            .build_store(error, self.const128(p.err.no_error))
            .map_err(err)?;
        self.b.build_unconditional_branch(fail).map_err(err)?;
        self.b.position_at_end(fail);
        if let Some(pe) = p.sm.parser_error {
            let e = self
                .b
                .build_load(error, "error")
                .map_err(err)?
                .into_int_value();
            self.store_field(&fr, pe, e, p.field_masks[pe as usize])?;
        }
        let c = self.b.build_load(cur, "cur").map_err(err)?.into_int_value();
        let bits = self
            .b
            .build_left_shift(c, i64t.const_int(3, false), "bits")
            .map_err(err)?;
        self.b.build_return(Some(&bits)).map_err(err)?;
        self.b.position_at_end(fr.end);
        self.b.build_unreachable().map_err(err)?;
        if !f.verify(false) {
            return Err(format!("LLVM rejected the generated {name} function"));
        }
        Ok(Some(name))
    }

    /// Extracts header `h` (with `vl` bits of its variable-length field)
    /// at the cursor, as `exec::extract` does; on an error, stores it and
    /// jumps to `fail`.
    #[allow(clippy::too_many_arguments)]
    fn extract(
        &mut self,
        fr: &Frame<'ctx>,
        f: FunctionValue<'ctx>,
        h: u32,
        vl: Option<IntValue<'ctx>>,
        data: PointerValue<'ctx>,
        len: IntValue<'ctx>,
        cur: PointerValue<'ctx>,
        error: PointerValue<'ctx>,
        fail: BasicBlock<'ctx>,
    ) -> Result<(), String> {
        let p = self.p;
        let hi = &p.headers[h as usize];
        let i64t = self.ctx.i64_type();
        let words = hi
            .wire
            .as_deref()
            .ok_or("parser_states let a header without words through")?;
        let fail_with = |g: &Self, e: Val| -> Result<(), String> {
            g.b.build_store(error, g.const128(e)).map_err(err)?;
            g.b.build_unconditional_branch(fail).map_err(err)?;
            Ok(())
        };
        let check = |g: &Self, ok: IntValue<'ctx>, e: Val| -> Result<(), String> {
            let go_on = g.ctx.append_basic_block(f, "ok");
            let bad = g.ctx.append_basic_block(f, "bad");
            g.b.build_conditional_branch(ok, go_on, bad).map_err(err)?;
            g.b.position_at_end(bad);
            fail_with(g, e)?;
            g.b.position_at_end(go_on);
            Ok(())
        };
        // Bytes of the variable-length field, checked as the interpreter does.
        let vbytes = match vl {
            None => i64t.const_zero(),
            Some(bits) => {
                let Some(vb) = &hi.varbit else {
                    fail_with(self, p.err.invalid_arg)?;
                    // Nothing follows a jump; a fresh block keeps the builder valid.
                    let dead = self.ctx.append_basic_block(f, "dead");
                    self.b.position_at_end(dead);
                    return Ok(());
                };
                let b = &self.b;
                let neg = b
                    .build_int_compare(IntPredicate::SLT, bits, self.i128t.const_zero(), "neg")
                    .map_err(err)?;
                let rem = b.build_and(bits, self.const128(7), "rem").map_err(err)?;
                let odd = b
                    .build_int_compare(IntPredicate::NE, rem, self.i128t.const_zero(), "odd")
                    .map_err(err)?;
                let big = b
                    .build_int_compare(
                        IntPredicate::SGT,
                        bits,
                        self.const128(vb.max_bits as Val),
                        "big",
                    )
                    .map_err(err)?;
                let bad = b.build_or(neg, odd, "bad").map_err(err)?;
                let bad = b.build_or(bad, big, "bad").map_err(err)?;
                let ok = b.build_not(bad, "ok").map_err(err)?;
                check(self, ok, p.err.header_too_short)?;
                let bytes = self
                    .b
                    .build_right_shift(bits, self.const128(3), false, "vbytes")
                    .map_err(err)?;
                self.b
                    .build_int_truncate(bytes, i64t, "vbytes")
                    .map_err(err)?
            }
        };
        let fixed = i64t.const_int(hi.bits as u64 / 8, false);
        let at = self.b.build_load(cur, "at").map_err(err)?.into_int_value();
        let need = self.b.build_int_add(fixed, vbytes, "need").map_err(err)?;
        let end = self.b.build_int_add(at, need, "end").map_err(err)?;
        let fits = self
            .b
            .build_int_compare(IntPredicate::ULE, end, len, "fits")
            .map_err(err)?;
        check(self, fits, p.err.packet_too_short)?;
        // Whole 8-byte loads when 8 bytes are there past the fixed part,
        // else byte by byte (the packet's last bytes).
        let past = self
            .b
            .build_int_add(at, i64t.const_int(hi.bits as u64 / 8 + 8, false), "past")
            .map_err(err)?;
        let roomy = self
            .b
            .build_int_compare(IntPredicate::ULE, past, len, "roomy")
            .map_err(err)?;
        let (fast, slow, join) = (
            self.ctx.append_basic_block(f, "wide_loads"),
            self.ctx.append_basic_block(f, "byte_loads"),
            self.ctx.append_basic_block(f, "extracted"),
        );
        self.b
            .build_conditional_branch(roomy, fast, slow)
            .map_err(err)?;
        for (block, wide) in [(fast, true), (slow, false)] {
            self.b.position_at_end(block);
            for w in words {
                let v = self.load_word(data, at, w.at, w.bytes, wide)?;
                for (k, &(shift, m)) in w.parts.iter().enumerate() {
                    let x = self
                        .b
                        .build_right_shift(v, i64t.const_int(shift as u64, false), false, "x")
                        .map_err(err)?;
                    let x = self
                        .b
                        .build_and(x, i64t.const_int(m, false), "x")
                        .map_err(err)?;
                    let x = self.b.build_int_z_extend(x, self.i128t, "x").map_err(err)?;
                    self.store_field(fr, (w.first + k) as u32, x, u128::MAX)?;
                }
            }
            self.b.build_unconditional_branch(join).map_err(err)?;
        }
        self.b.position_at_end(join);
        if let (Some(_), Some(vb)) = (vl, &hi.varbit) {
            let start = self.b.build_int_add(at, fixed, "varbit_at").map_err(err)?;
            // SAFETY (generated): `end <= len` was checked above.
            let src =
                unsafe { self.b.build_in_bounds_gep(data, &[start], "varbit") }.map_err(err)?;
            let args = [
                fr.env.into(),
                self.i32(vb.slot).into(),
                src.into(),
                vbytes.into(),
            ];
            self.b
                .build_call(self.h_varbit_set, &args, "")
                .map_err(err)?;
        }
        // set_valid: the other members of its union become invalid.
        if let Some(u) = hi.union {
            for &o in &p.unions[u as usize].headers {
                self.store_valid(fr, o, false)?;
            }
        }
        self.store_valid(fr, h, true)?;
        self.b.build_store(cur, end).map_err(err)?;
        Ok(())
    }

    /// `bytes` bytes at `data[at + off..]` as a big-endian number: one
    /// 8-byte load (`wide`, when 8 bytes are there) or one load per byte.
    fn load_word(
        &self,
        data: PointerValue<'ctx>,
        at: IntValue<'ctx>,
        off: usize,
        bytes: usize,
        wide: bool,
    ) -> Result<IntValue<'ctx>, String> {
        let (i8t, i64t) = (self.ctx.i8_type(), self.ctx.i64_type());
        let base = self
            .b
            .build_int_add(at, i64t.const_int(off as u64, false), "word_at")
            .map_err(err)?;
        if wide {
            // SAFETY (generated): the caller checked that 8 bytes are there.
            let ptr = unsafe { self.b.build_in_bounds_gep(data, &[base], "word") }.map_err(err)?;
            let ptr = self
                .b
                .build_pointer_cast(ptr, i64t.ptr_type(AddressSpace::default()), "word64")
                .map_err(err)?;
            let v = self.b.build_load(ptr, "raw").map_err(err)?;
            if let Some(i) = v.as_instruction_value() {
                i.set_alignment(1).map_err(|e| e.to_string())?;
            }
            let v = self
                .b
                .build_call(self.bswap()?, &[v.into()], "be")
                .map_err(err)?
                .try_as_basic_value()
                .basic()
                .ok_or("bswap returns a value")?
                .into_int_value();
            return self
                .b
                .build_right_shift(
                    v,
                    i64t.const_int(64 - 8 * bytes as u64, false),
                    false,
                    "word",
                )
                .map_err(err);
        }
        let mut v = i64t.const_zero();
        for k in 0..bytes {
            let idx = self
                .b
                .build_int_add(base, i64t.const_int(k as u64, false), "byte_at")
                .map_err(err)?;
            // SAFETY (generated): the caller checked that the header is there.
            let ptr = unsafe { self.b.build_in_bounds_gep(data, &[idx], "byte") }.map_err(err)?;
            let x = self
                .b
                .build_load(ptr, "byte")
                .map_err(err)?
                .into_int_value();
            let x = self.b.build_int_z_extend(x, i64t, "byte").map_err(err)?;
            let _ = i8t;
            let s = self
                .b
                .build_left_shift(v, i64t.const_int(8, false), "shifted")
                .map_err(err)?;
            v = self.b.build_or(s, x, "word").map_err(err)?;
        }
        Ok(v)
    }

    /// Sets or clears header `h`'s validity byte.
    fn store_valid(&self, fr: &Frame<'ctx>, h: u32, on: bool) -> Result<(), String> {
        let idx = self.ctx.i64_type().const_int(h as u64, false);
        // SAFETY (generated): header indices are below the validity array's length.
        let ptr = unsafe { self.b.build_in_bounds_gep(fr.valid, &[idx], "valid") }.map_err(err)?;
        self.b
            .build_store(ptr, self.ctx.i8_type().const_int(on as u64, false))
            .map_err(err)?;
        Ok(())
    }

    fn bswap(&self) -> Result<FunctionValue<'ctx>, String> {
        let i64t = self.ctx.i64_type();
        inkwell::intrinsics::Intrinsic::find("llvm.bswap")
            .and_then(|i| i.get_declaration(self.module, &[i64t.into()]))
            .ok_or_else(|| "no llvm.bswap".to_string())
    }

    /// The value of calculation `calc` (an `i64`), as `exec::calculate`
    /// gives it.
    fn calculation(
        &mut self,
        fr: &Frame<'ctx>,
        f: FunctionValue<'ctx>,
        calc: u32,
    ) -> Result<IntValue<'ctx>, String> {
        let p = self.p;
        let i64t = self.ctx.i64_type();
        let c = &p.calcs[calc as usize];
        let plan = match (&c.algo, &c.csum_plan) {
            (crate::calc::Algo::Csum16, Some(plan)) if plan.wide.is_empty() => plan,
            _ => return self.calc_call(fr, calc),
        };
        let summed = self.ctx.append_basic_block(f, "csum_plan");
        let general = self.ctx.append_basic_block(f, "csum_general");
        let done = self.ctx.append_basic_block(f, "csum_done");
        // The plan holds while its header is valid and its variable-length
        // fields are empty (see `CsumPlan::run`).
        if let Some(h) = plan.header {
            let v = self.valid_bit(fr, h)?;
            let ok = self.nonzero(v)?;
            let go_on = self.ctx.append_basic_block(f, "csum_valid");
            self.b
                .build_conditional_branch(ok, go_on, general)
                .map_err(err)?;
            self.b.position_at_end(go_on);
        }
        for &(h, slot) in &plan.varbits {
            let v = self.valid_bit(fr, h)?;
            let valid = self.nonzero(v)?;
            let look = self.ctx.append_basic_block(f, "csum_varbit");
            let go_on = self.ctx.append_basic_block(f, "csum_varbit_empty");
            self.b
                .build_conditional_branch(valid, look, go_on)
                .map_err(err)?;
            self.b.position_at_end(look);
            let args = [fr.env.into(), self.i32(slot).into()];
            let len = self
                .b
                .build_call(self.h_varbit_len, &args, "len")
                .map_err(err)?
                .try_as_basic_value()
                .basic()
                .ok_or("rl_varbit_len returns a value")?
                .into_int_value();
            let empty = self
                .b
                .build_int_compare(IntPredicate::EQ, len, i64t.const_zero(), "empty")
                .map_err(err)?;
            self.b
                .build_conditional_branch(empty, go_on, general)
                .map_err(err)?;
            self.b.position_at_end(go_on);
        }
        self.b.build_unconditional_branch(summed).map_err(err)?;
        self.b.position_at_end(summed);
        let mut sum = i64t.const_int(plan.consts, false);
        for &(fi, m, shift) in &plan.narrow {
            let v = self.load_field(fr, fi)?;
            let v = self.b.build_int_truncate(v, i64t, "f").map_err(err)?;
            let v = self
                .b
                .build_and(v, i64t.const_int(m, false), "m")
                .map_err(err)?;
            let v = self
                .b
                .build_left_shift(v, i64t.const_int(shift as u64, false), "s")
                .map_err(err)?;
            sum = self.b.build_int_add(sum, v, "sum").map_err(err)?;
        }
        // fold_csum: five folds bring any u64 below 2^16 (a fold leaves a
        // value below 2^16 as it is), then the 16-bit complement.
        for _ in 0..5 {
            let lo = self
                .b
                .build_and(sum, i64t.const_int(0xFFFF, false), "lo")
                .map_err(err)?;
            let hi = self
                .b
                .build_right_shift(sum, i64t.const_int(16, false), false, "hi")
                .map_err(err)?;
            sum = self.b.build_int_add(lo, hi, "fold").map_err(err)?;
        }
        let inv = self
            .b
            .build_xor(sum, i64t.const_int(0xFFFF, false), "csum")
            .map_err(err)?;
        let from_plan = self.b.get_insert_block().ok_or("no block")?;
        self.b.build_unconditional_branch(done).map_err(err)?;
        self.b.position_at_end(general);
        let called = self.calc_call(fr, calc)?;
        let from_call = self.b.get_insert_block().ok_or("no block")?;
        self.b.build_unconditional_branch(done).map_err(err)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(i64t, "calculation").map_err(err)?;
        phi.add_incoming(&[(&inv, from_plan), (&called, from_call)]);
        Ok(phi.as_basic_value().into_int_value())
    }

    fn calc_call(&self, fr: &Frame<'ctx>, calc: u32) -> Result<IntValue<'ctx>, String> {
        let args = [fr.env.into(), self.i32(calc).into()];
        Ok(self
            .b
            .build_call(self.h_calc, &args, "calc")
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or("rl_calc returns a value")?
            .into_int_value())
    }

    /// Header `h`'s validity as a 0 / 1 `i128`.
    fn valid_bit(&self, fr: &Frame<'ctx>, h: u32) -> Result<IntValue<'ctx>, String> {
        let b = &self.b;
        let idx = self.ctx.i64_type().const_int(h as u64, false);
        // SAFETY (generated): header indices are below the validity array's length.
        let ptr = unsafe { b.build_in_bounds_gep(fr.valid, &[idx], "valid") }.map_err(err)?;
        let v = b.build_load(ptr, "valid").map_err(err)?.into_int_value();
        let bit = b
            .build_and(v, self.ctx.i8_type().const_int(1, false), "bit")
            .map_err(err)?;
        b.build_int_z_extend(bit, self.i128t, "valid128")
            .map_err(err)
    }

    fn goto(&self, fr: &Frame<'ctx>, n: Option<Node>) -> Result<(), String> {
        let target = n.map_or(fr.end, |n| fr.blocks[&n]);
        self.b.build_unconditional_branch(target).map_err(err)?;
        Ok(())
    }

    fn i32(&self, v: u32) -> IntValue<'ctx> {
        self.ctx.i32_type().const_int(v as u64, false)
    }

    fn node(&mut self, fr: &Frame<'ctx>, n: Node) -> Result<(), String> {
        let p = self.p;
        match n {
            Node::Cond(c) => {
                let c = &p.conds[c as usize];
                let v = self.expr(fr, c.expr.tree(), Data::Const(&[]))?;
                let zero = self.i128t.const_zero();
                let t = self
                    .b
                    .build_int_compare(IntPredicate::NE, v, zero, "cond")
                    .map_err(err)?;
                let bt = c.t.map_or(fr.end, |n| fr.blocks[&n]);
                let bf = c.f.map_or(fr.end, |n| fr.blocks[&n]);
                self.b.build_conditional_branch(t, bt, bf).map_err(err)?;
            }
            Node::Call(c) => {
                let c = &p.calls[c as usize];
                self.action(fr, c.action, Data::Const(&[]), NO_DATA)?;
                self.goto(fr, c.next)?;
            }
            Node::Table(t) => match &p.tables[t as usize].fixed {
                Some(f) => {
                    self.action(fr, f.action, Data::Const(&f.data), t)?;
                    self.goto(fr, f.next)?;
                }
                None => self.table(fr, t)?,
            },
        }
        Ok(())
    }

    /// A table: the callback looks it up, then the action it selected runs
    /// here when it is compiled (else through the interpreter), then the
    /// next node.
    fn table(&mut self, fr: &Frame<'ctx>, t: u32) -> Result<(), String> {
        let p = self.p;
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let cast = |ptr: PointerValue<'ctx>| self.b.build_pointer_cast(ptr, i8p, "out");
        let args = [
            fr.env.into(),
            self.i32(t).into(),
            cast(fr.sel_action).map_err(err)?.into(),
            cast(fr.sel_data).map_err(err)?.into(),
            cast(fr.sel_len).map_err(err)?.into(),
        ];
        let code = self
            .b
            .build_call(self.h_select, &args, "next")
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or("rl_select returns a value")?
            .into_int_value();
        let a = self
            .b
            .build_load(fr.sel_action, "action")
            .map_err(err)?
            .into_int_value();
        let f = self.current_function()?;
        let after = self.ctx.append_basic_block(f, "after_table");
        let other = self.ctx.append_basic_block(f, "other_action");
        let td = &p.tables[t as usize];
        let mut candidates: Vec<u32> = td.actions.clone();
        if let Some(pi) = td.profile {
            candidates.extend(&p.profiles[pi as usize].actions);
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates.retain(|&a| p.actions[a as usize].steps.is_some());
        let mut cases = Vec::new();
        for &ca in &candidates {
            let nparams = p.actions[ca as usize].params.len();
            let check = self.ctx.append_basic_block(f, "compiled_action");
            let body = self.ctx.append_basic_block(f, "action_body");
            cases.push((self.i32(ca), check));
            // The data the table holds has one value per parameter; anything
            // shorter goes to the interpreter, which reads missing ones as 0.
            self.b.position_at_end(check);
            let len = self
                .b
                .build_load(fr.sel_len, "len")
                .map_err(err)?
                .into_int_value();
            let enough = self
                .b
                .build_int_compare(
                    IntPredicate::UGE,
                    len,
                    self.ctx.i64_type().const_int(nparams as u64, false),
                    "enough",
                )
                .map_err(err)?;
            self.b
                .build_conditional_branch(enough, body, other)
                .map_err(err)?;
            self.b.position_at_end(body);
            let ptr = self
                .b
                .build_load(fr.sel_data, "data")
                .map_err(err)?
                .into_pointer_value();
            self.action(fr, ca, Data::Selected { ptr, nparams }, SELECTED)?;
            self.b.build_unconditional_branch(after).map_err(err)?;
        }
        // Back in the block that made the call: pick the action's code.
        self.b.position_at_end(
            a.as_instruction()
                .and_then(|i| i.get_parent())
                .ok_or("the action load has a block")?,
        );
        self.b.build_switch(a, other, &cases).map_err(err)?;
        // Anything else: no action (u32::MAX), or one with control flow.
        self.b.position_at_end(other);
        let none = self
            .b
            .build_int_compare(IntPredicate::EQ, a, self.i32(u32::MAX), "none")
            .map_err(err)?;
        let run = self.ctx.append_basic_block(f, "interpreted_action");
        self.b
            .build_conditional_branch(none, after, run)
            .map_err(err)?;
        self.b.position_at_end(run);
        let exited = self
            .b
            .build_call(
                self.h_action,
                &[fr.env.into(), a.into(), self.i32(SELECTED).into()],
                "exited",
            )
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or("rl_action returns a value")?
            .into_int_value();
        let stop = self
            .b
            .build_int_compare(IntPredicate::NE, exited, self.i32(0), "stop")
            .map_err(err)?;
        self.b
            .build_conditional_branch(stop, fr.end, after)
            .map_err(err)?;
        self.b.position_at_end(after);
        let i64t = self.ctx.i64_type();
        let cases: Vec<_> = table_successors(p, t)
            .into_iter()
            .map(|n| {
                (
                    i64t.const_int(node_code(Some(n)) as u64, true),
                    fr.blocks[&n],
                )
            })
            .collect();
        self.b.build_switch(code, fr.end, &cases).map_err(err)?;
        Ok(())
    }

    fn current_function(&self) -> Result<FunctionValue<'ctx>, String> {
        self.b
            .get_insert_block()
            .and_then(|b| b.get_parent())
            .ok_or_else(|| "builder outside a function".to_string())
    }

    /// The body of action `a` with constant data `data`, called from `site`
    /// (a table index, or `u32::MAX`). Leaves the builder where the code
    /// after the action goes.
    fn action(
        &mut self,
        fr: &Frame<'ctx>,
        a: u32,
        data: Data<'_, 'ctx>,
        site: u32,
    ) -> Result<(), String> {
        let p = self.p;
        let action = &p.actions[a as usize];
        if action.steps.is_none() {
            // Control flow (exit, assert, conditional primitives): the interpreter.
            let exited = self
                .b
                .build_call(
                    self.h_action,
                    &[fr.env.into(), self.i32(a).into(), self.i32(site).into()],
                    "exited",
                )
                .map_err(err)?
                .try_as_basic_value()
                .basic()
                .ok_or("rl_action returns a value")?
                .into_int_value();
            let f = self.current_function()?;
            let go_on = self.ctx.append_basic_block(f, "after_action");
            let stop = self
                .b
                .build_int_compare(IntPredicate::NE, exited, self.i32(0), "stop")
                .map_err(err)?;
            self.b
                .build_conditional_branch(stop, fr.end, go_on)
                .map_err(err)?;
            self.b.position_at_end(go_on);
            return Ok(());
        }
        for (i, prim) in action.prims.iter().enumerate() {
            match prim {
                Prim::Assign(LField::Static { f, mask }, e) => {
                    let v = self.expr(fr, e.tree(), data)?;
                    self.store_field(fr, *f, v, *mask)?;
                }
                Prim::RegRead(LField::Static { f, mask }, r, i) => {
                    let i_val = self.expr(fr, i.tree(), data)?;
                    let (lo, hi) = self.halves(i_val)?;
                    let out = self.slot_arg(fr)?;
                    let args = [
                        fr.env.into(),
                        self.i32(*r).into(),
                        lo.into(),
                        hi.into(),
                        out,
                    ];
                    self.b.build_call(self.h_reg_read, &args, "").map_err(err)?;
                    let v = self
                        .b
                        .build_load(fr.slot, "reg")
                        .map_err(err)?
                        .into_int_value();
                    self.store_field(fr, *f, v, *mask)?;
                }
                Prim::RegWrite(r, i, v) => {
                    let i_val = self.expr(fr, i.tree(), data)?;
                    let (lo, hi) = self.halves(i_val)?;
                    let v_val = self.expr(fr, v.tree(), data)?;
                    let (vlo, vhi) = self.halves(v_val)?;
                    let args = [
                        fr.env.into(),
                        self.i32(*r).into(),
                        lo.into(),
                        hi.into(),
                        vlo.into(),
                        vhi.into(),
                    ];
                    self.b
                        .build_call(self.h_reg_write, &args, "")
                        .map_err(err)?;
                }
                Prim::Count(c, i) => {
                    let i_val = self.expr(fr, i.tree(), data)?;
                    let (lo, hi) = self.halves(i_val)?;
                    let args = [fr.env.into(), self.i32(*c).into(), lo.into(), hi.into()];
                    self.b.build_call(self.h_count, &args, "").map_err(err)?;
                }
                Prim::MarkToDrop => {
                    if let Some(f) = p.sm.egress_spec {
                        let v = self.const128(511);
                        self.store_field(fr, f, v, p.field_masks[f as usize])?;
                    }
                    if let Some(f) = p.sm.mcast_grp {
                        let v = self.const128(0);
                        self.store_field(fr, f, v, u128::MAX)?;
                    }
                }
                _ => {
                    self.b
                        .build_call(
                            self.h_step,
                            &[
                                fr.env.into(),
                                self.i32(a).into(),
                                self.i32(i as u32).into(),
                                self.i32(site).into(),
                            ],
                            "",
                        )
                        .map_err(err)?;
                }
            }
        }
        Ok(())
    }

    /// Action parameter `i`: a constant, or loaded from the selected data
    /// (0 past the action's parameters, as the interpreter reads it).
    fn local(&self, i: usize, data: Data<'_, 'ctx>) -> Result<IntValue<'ctx>, String> {
        match data {
            Data::Const(d) => Ok(self.const128(d.get(i).copied().unwrap_or(0))),
            Data::Selected { nparams, .. } if i >= nparams => Ok(self.const128(0)),
            Data::Selected { ptr, .. } => {
                let idx = self.ctx.i64_type().const_int(i as u64, false);
                // SAFETY (generated): the code checked that the data has
                // `nparams` values before running the action.
                let at =
                    unsafe { self.b.build_in_bounds_gep(ptr, &[idx], "param") }.map_err(err)?;
                let v = self.b.build_load(at, "param").map_err(err)?;
                if let Some(i) = v.as_instruction_value() {
                    i.set_alignment(8).map_err(|e| e.to_string())?;
                }
                Ok(v.into_int_value())
            }
        }
    }

    /// The low and high 64 bits of `v`, to pass to a callback.
    fn halves(&self, v: IntValue<'ctx>) -> Result<(IntValue<'ctx>, IntValue<'ctx>), String> {
        let i64t = self.ctx.i64_type();
        let lo = self.b.build_int_truncate(v, i64t, "lo").map_err(err)?;
        let up = self
            .b
            .build_right_shift(v, self.const128(64), false, "up")
            .map_err(err)?;
        let hi = self.b.build_int_truncate(up, i64t, "hi").map_err(err)?;
        Ok((lo, hi))
    }

    /// The evaluator slot as a callback's out pointer.
    fn slot_arg(
        &self,
        fr: &Frame<'ctx>,
    ) -> Result<inkwell::values::BasicMetadataValueEnum<'ctx>, String> {
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        Ok(self
            .b
            .build_pointer_cast(fr.slot, i8p, "out")
            .map_err(err)?
            .into())
    }

    fn const128(&self, v: Val) -> IntValue<'ctx> {
        let u = v as u128;
        self.i128t
            .const_int_arbitrary_precision(&[u as u64, (u >> 64) as u64])
    }

    fn field_ptr(&self, fr: &Frame<'ctx>, f: u32) -> Result<PointerValue<'ctx>, String> {
        let idx = self.ctx.i64_type().const_int(f as u64, false);
        // SAFETY (of the generated access): field indices come from the
        // validated program and are below the length of the field array.
        unsafe { self.b.build_in_bounds_gep(fr.vals, &[idx], "field") }.map_err(err)
    }

    fn load_field(&self, fr: &Frame<'ctx>, f: u32) -> Result<IntValue<'ctx>, String> {
        let ptr = self.field_ptr(fr, f)?;
        let v = self.b.build_load(ptr, "v").map_err(err)?;
        if let Some(i) = v.as_instruction_value() {
            i.set_alignment(8).map_err(|e| e.to_string())?;
        }
        Ok(v.into_int_value())
    }

    fn store_field(
        &self,
        fr: &Frame<'ctx>,
        f: u32,
        v: IntValue<'ctx>,
        mask: u128,
    ) -> Result<(), String> {
        let ptr = self.field_ptr(fr, f)?;
        let m = self.const128(mask as Val);
        let v = self.b.build_and(v, m, "masked").map_err(err)?;
        let st = self.b.build_store(ptr, v).map_err(err)?;
        st.set_alignment(8).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// A 0 / 1 value from a comparison.
    fn bool128(&self, c: IntValue<'ctx>) -> Result<IntValue<'ctx>, String> {
        self.b.build_int_z_extend(c, self.i128t, "b").map_err(err)
    }

    fn nonzero(&self, v: IntValue<'ctx>) -> Result<IntValue<'ctx>, String> {
        self.b
            .build_int_compare(IntPredicate::NE, v, self.i128t.const_zero(), "nz")
            .map_err(err)
    }

    /// The value of `e`, as `Expr::eval` computes it with action data `data`.
    fn expr(
        &mut self,
        fr: &Frame<'ctx>,
        e: &Expr,
        data: Data<'_, 'ctx>,
    ) -> Result<IntValue<'ctx>, String> {
        let b = &self.b;
        Ok(match e {
            Expr::Const(v) => self.const128(*v),
            Expr::Local(i) => self.local(*i as usize, data)?,
            Expr::Field(f) => self.load_field(fr, *f)?,
            Expr::SField(f, w) if (1..128).contains(w) => {
                let v = self.load_field(fr, *f)?;
                let s = self.const128((128 - w) as Val);
                let up = b.build_left_shift(v, s, "up").map_err(err)?;
                b.build_right_shift(up, s, true, "sext").map_err(err)?
            }
            Expr::SField(f, _) => self.load_field(fr, *f)?,
            Expr::Valid(HdrRef::Static(h)) => self.valid_bit(fr, *h)?,
            Expr::Not(x) => {
                let v = self.expr(fr, x, data)?;
                let z = self
                    .b
                    .build_int_compare(IntPredicate::EQ, v, self.i128t.const_zero(), "not")
                    .map_err(err)?;
                self.bool128(z)?
            }
            Expr::D2B(x) => {
                let v = self.expr(fr, x, data)?;
                let nz = self.nonzero(v)?;
                self.bool128(nz)?
            }
            Expr::BitNot(x) => {
                let v = self.expr(fr, x, data)?;
                self.b.build_not(v, "bitnot").map_err(err)?
            }
            Expr::Neg(x) => {
                let v = self.expr(fr, x, data)?;
                self.b.build_int_neg(v, "neg").map_err(err)?
            }
            Expr::Cond(k, t, f) => {
                // Expressions have no side effects: both sides may be computed.
                let k = self.expr(fr, k, data)?;
                let t = self.expr(fr, t, data)?;
                let f = self.expr(fr, f, data)?;
                let c = self.nonzero(k)?;
                self.b
                    .build_select(c, t, f, "sel")
                    .map_err(err)?
                    .into_int_value()
            }
            Expr::Bin(op, l, r) if !matches!(op, BinOp::Div | BinOp::Mod) => {
                let a = self.expr(fr, l, data)?;
                let z = self.expr(fr, r, data)?;
                self.binary(*op, a, z)?
            }
            other => self.fallback(fr, other, data)?,
        })
    }

    /// `apply_bin(op, a, z)` for every operator but division and modulo.
    fn binary(
        &self,
        op: BinOp,
        a: IntValue<'ctx>,
        z: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, String> {
        let b = &self.b;
        let cmp = |pred| -> Result<IntValue<'ctx>, String> {
            let c = b.build_int_compare(pred, a, z, "cmp").map_err(err)?;
            self.bool128(c)
        };
        Ok(match op {
            BinOp::Add => b.build_int_add(a, z, "add").map_err(err)?,
            BinOp::Sub => b.build_int_sub(a, z, "sub").map_err(err)?,
            BinOp::Mul => b.build_int_mul(a, z, "mul").map_err(err)?,
            BinOp::And => b.build_and(a, z, "and").map_err(err)?,
            BinOp::Or => b.build_or(a, z, "or").map_err(err)?,
            BinOp::Xor => b.build_xor(a, z, "xor").map_err(err)?,
            BinOp::Eq => cmp(IntPredicate::EQ)?,
            BinOp::Ne => cmp(IntPredicate::NE)?,
            BinOp::Lt => cmp(IntPredicate::SLT)?,
            BinOp::Gt => cmp(IntPredicate::SGT)?,
            BinOp::Le => cmp(IntPredicate::SLE)?,
            BinOp::Ge => cmp(IntPredicate::SGE)?,
            BinOp::LAnd | BinOp::LOr => {
                let (x, y) = (self.nonzero(a)?, self.nonzero(z)?);
                let v = if op == BinOp::LAnd {
                    b.build_and(x, y, "land")
                } else {
                    b.build_or(x, y, "lor")
                }
                .map_err(err)?;
                self.bool128(v)?
            }
            BinOp::Shl => {
                // 0 unless 0 <= z < 128 (a negative z is a huge unsigned one).
                let in_range = b
                    .build_int_compare(IntPredicate::ULT, z, self.const128(128), "inrange")
                    .map_err(err)?;
                let amount = b.build_and(z, self.const128(127), "amount").map_err(err)?;
                let shifted = b.build_left_shift(a, amount, "shl").map_err(err)?;
                b.build_select(in_range, shifted, self.i128t.const_zero(), "shl")
                    .map_err(err)?
                    .into_int_value()
            }
            BinOp::Shr => {
                // Arithmetic; z < 0 leaves a, z >= 128 gives the sign (as 127 does).
                let neg = b
                    .build_int_compare(IntPredicate::SLT, z, self.i128t.const_zero(), "neg")
                    .map_err(err)?;
                let big = b
                    .build_int_compare(IntPredicate::SGT, z, self.const128(127), "big")
                    .map_err(err)?;
                let capped = b
                    .build_select(big, self.const128(127), z, "capped")
                    .map_err(err)?
                    .into_int_value();
                let amount = b
                    .build_select(neg, self.i128t.const_zero(), capped, "amount")
                    .map_err(err)?
                    .into_int_value();
                b.build_right_shift(a, amount, true, "shr").map_err(err)?
            }
            BinOp::Div | BinOp::Mod => return Err("division reached the inline path".into()),
        })
    }

    /// Calls the evaluator on `e` (kept alive in the `Jit`).
    fn fallback(
        &mut self,
        fr: &Frame<'ctx>,
        e: &Expr,
        data: Data<'_, 'ctx>,
    ) -> Result<IntValue<'ctx>, String> {
        let (data, selected) = match data {
            Data::Const(d) => (d.into(), false),
            Data::Selected { .. } => (Box::default(), true),
        };
        let fb = Box::new(Fallback {
            expr: CExpr::new(e.clone()),
            data,
            selected,
        });
        let addr = &*fb as *const Fallback as u64;
        self.fallbacks.push(fb);
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let addr = self
            .b
            .build_int_to_ptr(self.ctx.i64_type().const_int(addr, false), i8p, "fallback")
            .map_err(err)?;
        let out = self
            .b
            .build_pointer_cast(fr.slot, i8p, "out")
            .map_err(err)?;
        self.b
            .build_call(self.h_eval, &[fr.env.into(), addr.into(), out.into()], "")
            .map_err(err)?;
        Ok(self
            .b
            .build_load(fr.slot, "fallback")
            .map_err(err)?
            .into_int_value())
    }
}

/// The nodes a table can go on to.
fn table_successors(p: &Program, t: u32) -> Vec<Node> {
    let t = &p.tables[t as usize];
    let mut out: Vec<Node> = [t.next_hit.flatten(), t.next_miss.flatten(), t.base_next]
        .into_iter()
        .flatten()
        .chain(t.next_by_action.values().flatten().copied())
        .collect();
    out.sort_by_key(|&n| node_code(Some(n)));
    out.dedup();
    out
}

/// Every node reachable from `start`, in discovery order.
fn reachable(p: &Program, start: Node) -> Vec<Node> {
    let mut seen = std::collections::HashSet::new();
    let mut order = Vec::new();
    let mut todo = vec![start];
    while let Some(n) = todo.pop() {
        if !seen.insert(n) {
            continue;
        }
        order.push(n);
        let next: Vec<Node> = match n {
            Node::Cond(c) => {
                let c = &p.conds[c as usize];
                [c.t, c.f].into_iter().flatten().collect()
            }
            Node::Call(c) => p.calls[c as usize].next.into_iter().collect(),
            Node::Table(t) => match &p.tables[t as usize].fixed {
                Some(f) => f.next.into_iter().collect(),
                None => table_successors(p, t),
            },
        };
        todo.extend(next);
    }
    order
}

/// The parser's states in discovery order, when the generated parser can
/// run all of them: extracts of single headers in whole-byte words
/// (optionally with a variable-length field), `set` from expressions,
/// `verify`, keys from expressions, value and default transitions, and no
/// cycle (the interpreter bounds a cycle's states; the code does not).
fn parser_states(p: &Program) -> Option<Vec<u32>> {
    let start = p.parser_init?;
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![start];
    while let Some(si) = todo.pop() {
        if !seen.insert(si) {
            continue;
        }
        order.push(si);
        let s = p.states.get(si as usize)?;
        for op in &s.ops {
            let ok = match op {
                ParserOp::Extract(Extract::Header(h)) => {
                    let hi = &p.headers[*h as usize];
                    hi.wire.is_some() && hi.varbit.is_none()
                }
                ParserOp::ExtractVL(Extract::Header(h), _) => p.headers[*h as usize].wire.is_some(),
                ParserOp::Set(LField::Static { .. }, Src::Expr(_)) => true,
                ParserOp::Verify(..) => true,
                _ => false,
            };
            if !ok {
                return None;
            }
        }
        if s.key.iter().any(|(src, _, _)| !matches!(src, Src::Expr(_))) {
            return None;
        }
        for t in &s.transitions {
            match t {
                Transition::Default(n) | Transition::Value { next: n, .. } => todo.extend(*n),
                Transition::Vset { .. } => return None,
            }
        }
    }
    // The interpreter stops a packet after MAX_PARSE_STATES states; with no
    // cycle, a parser of that many states never gets there.
    if order.len() > crate::exec::MAX_PARSE_STATES {
        return None;
    }
    // A cycle: some state reaches itself.
    let reaches = |from: u32| -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut todo: Vec<u32> = next_states(p, from);
        while let Some(s) = todo.pop() {
            if s == from {
                return true;
            }
            if seen.insert(s) {
                todo.extend(next_states(p, s));
            }
        }
        false
    };
    if order.iter().any(|&s| reaches(s)) {
        return None;
    }
    Some(order)
}

fn next_states(p: &Program, s: u32) -> Vec<u32> {
    p.states[s as usize]
        .transitions
        .iter()
        .filter_map(|t| match t {
            Transition::Default(n)
            | Transition::Value { next: n, .. }
            | Transition::Vset { next: n, .. } => *n,
        })
        .collect()
}
