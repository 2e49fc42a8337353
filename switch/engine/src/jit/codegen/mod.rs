//! LLVM IR for the pipeline (see the module docs of `jit`): one submodule
//! per part (`parser`, `checksum`, `control`, `deparser`); here the
//! generator itself, the frame each function works in, and the pieces all
//! parts share (field access, expressions, callbacks).
//!
//! Values are `i128` throughout, with the interpreter's rules
//! (`program::apply_bin`): wrapping arithmetic, signed comparisons, 0 / 1
//! booleans, shifts defined for every amount. The fields live in an array of
//! `i128` (the packet's `u128` values) and the validity bits in an array of
//! bytes; both pointers are the generated function's first two arguments.

mod checksum;
mod control;
mod deparser;
mod parser;

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
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue, IntValue, PointerValue};
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

    fn bswap(&self) -> Result<FunctionValue<'ctx>, String> {
        let i64t = self.ctx.i64_type();
        inkwell::intrinsics::Intrinsic::find("llvm.bswap")
            .and_then(|i| i.get_declaration(self.module, &[i64t.into()]))
            .ok_or_else(|| "no llvm.bswap".to_string())
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

    fn i32(&self, v: u32) -> IntValue<'ctx> {
        self.ctx.i32_type().const_int(v as u64, false)
    }

    fn current_function(&self) -> Result<FunctionValue<'ctx>, String> {
        self.b
            .get_insert_block()
            .and_then(|b| b.get_parent())
            .ok_or_else(|| "builder outside a function".to_string())
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

    /// Calls `f` (a callback or an intrinsic that returns an integer) and
    /// gives its value.
    fn call_int(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
        name: &str,
    ) -> Result<IntValue<'ctx>, String> {
        self.b
            .build_call(f, args, name)
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .ok_or_else(|| format!("the call {name} returns no value"))
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
    fn slot_arg(&self, fr: &Frame<'ctx>) -> Result<BasicMetadataValueEnum<'ctx>, String> {
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
