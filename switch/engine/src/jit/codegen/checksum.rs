//! The verify_checksum and update_checksum controls.

use super::*;

impl<'ctx, 'a> Gen<'ctx, 'a> {
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
            let len = self.call_int(self.h_varbit_len, &args, "len")?;
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
        self.call_int(self.h_calc, &args, "calc")
    }
}
