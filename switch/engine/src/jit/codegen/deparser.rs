//! The deparser: valid headers written in deparser order.

use super::*;

impl<'ctx, 'a> Gen<'ctx, 'a> {
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
                let v = self.call_int(bswap, &[v.into()], "be")?;
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
                let n = self.call_int(self.h_varbit_copy, &args, "varbit")?;
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
}
