//! The parser: extracts, `set`, `verify`, transitions.

use super::*;

impl<'ctx, 'a> Gen<'ctx, 'a> {
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
        // Bytes of the variable-length field, checked as the interpreter does;
        // `room`: whether they fit the header, checked after the packet's length.
        let mut room = None;
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
                // BMv2's order, as the interpreter has it: not whole bytes,
                // negative, then (below) the packet's length, then the room.
                let b = &self.b;
                let rem = b.build_and(bits, self.const128(7), "rem").map_err(err)?;
                let whole = b
                    .build_int_compare(IntPredicate::EQ, rem, self.i128t.const_zero(), "whole")
                    .map_err(err)?;
                check(self, whole, p.err.invalid_arg)?;
                let b = &self.b;
                let pos = b
                    .build_int_compare(IntPredicate::SGE, bits, self.i128t.const_zero(), "pos")
                    .map_err(err)?;
                check(self, pos, p.err.header_too_short)?;
                let b = &self.b;
                let clamp = self.const128(crate::exec::VARBIT_LEN_CLAMP);
                let huge = b
                    .build_int_compare(IntPredicate::SGT, bits, clamp, "huge")
                    .map_err(err)?;
                let clamped = b
                    .build_select(huge, clamp, bits, "clamped")
                    .map_err(err)?
                    .into_int_value();
                room = Some(
                    b.build_int_compare(
                        IntPredicate::SLE,
                        bits,
                        self.const128(vb.max_bits as Val),
                        "room",
                    )
                    .map_err(err)?,
                );
                let bytes = self
                    .b
                    .build_right_shift(clamped, self.const128(3), false, "vbytes")
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
        if let Some(room) = room {
            check(self, room, p.err.header_too_short)?;
        }
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
            let v = self.call_int(self.bswap()?, &[v.into()], "be")?;
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
