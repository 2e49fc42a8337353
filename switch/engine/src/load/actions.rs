//! Actions and their primitives.

use super::*;

impl Ld {
    // ------------------------------------------------------------ actions
    pub(super) fn actions(&mut self, root: &J) -> R<()> {
        let list = root.get("actions")?.arr()?;
        // Names and ids first (primitives do not refer to actions, but tables do).
        let mut defs = Vec::new();
        for a in &list {
            let name = a.name()?.to_string();
            let id = a.get("id")?.u64()?;
            let mut params = Vec::new();
            for p in a.opt_arr("runtime_data")? {
                let w = p.get("bitwidth")?.u64()?;
                if w == 0 || w > 128 {
                    return p.get("bitwidth")?.err("parameter width must be 1..=128");
                }
                params.push((p.name()?.to_string(), w as u32));
            }
            let idx = defs.len() as u32;
            if self.action_by_id.insert(id, idx).is_some() {
                return a.get("id")?.err(format!("duplicate action id {id}"));
            }
            // Names need not be unique in BMv2 JSON (same P4 action in two
            // controls); the first wins for lookups by name.
            self.p.action_by_name.entry(name.clone()).or_insert(idx);
            defs.push((name, id, params));
        }
        for (a, (name, id, params)) in list.iter().zip(defs) {
            let np = params.len();
            let mut prims = Vec::new();
            let pj = a.get("primitives")?;
            let plist = pj.arr()?;
            for p in &plist {
                prims.push(self.primitive(p, np, plist.len())?);
            }
            self.p.actions.push(Action::new(name, id, params, prims));
        }
        Ok(())
    }

    pub(super) fn primitive(&self, p: &J, np: usize, nprims: usize) -> R<Prim> {
        let opj = p.get("op")?;
        let op = opj.str()?;
        let params = p.get("parameters")?.arr()?;
        let n = |k: usize| -> R<()> {
            if params.len() != k {
                p.get("parameters")?
                    .err(format!("{op} takes {k} parameters, got {}", params.len()))
            } else {
                Ok(())
            }
        };
        let named = |j: &J, map: &HashMap<String, u32>, kind: &str| -> R<u32> {
            let v = j.get("value")?;
            let s = v.str()?;
            match map.get(s) {
                Some(&i) => Ok(i),
                None => v.err(format!("unknown {kind} {s:?}")),
            }
        };
        let field_list_id = |j: Option<&J>| -> R<Option<u32>> {
            let Some(j) = j else { return Ok(None) };
            let e = self.expr(j, np)?;
            match e {
                Expr::Const(v) => {
                    let id = v as u64;
                    if id == 0 {
                        return Ok(None);
                    }
                    if !self.p.field_lists.contains_key(&id) {
                        return j.err(format!("unknown field list id {id}"));
                    }
                    Ok(Some(id as u32))
                }
                _ => j.err("field list id must be a constant"),
            }
        };
        let jump_target = |j: &J| -> R<usize> {
            match self.expr(j, np)? {
                Expr::Const(v) if v >= 0 && (v as usize) <= nprims => Ok(v as usize),
                _ => j.err("jump offset must be a constant inside the action"),
            }
        };
        // `dst = f(dst_read, a)` or `dst = f(a, b)`: the arithmetic and
        // bitwise primitives of P4_14 compilers, as assignments of an
        // expression (so they compile like any assignment).
        let assign_bin = |op: BinOp, a: &J, z: &J| -> R<Prim> {
            Ok(Prim::Assign(
                self.lfield(&params[0], np)?,
                Expr::Bin(op, Box::new(self.expr(a, np)?), Box::new(self.expr(z, np)?)).into(),
            ))
        };
        Ok(match op {
            "assign" | "modify_field" => {
                if params.len() != 2 && !(op == "modify_field" && params.len() == 3) {
                    n(2)?;
                }
                if params.len() == 2 {
                    if let Some(p) = self.wide_assign(&params[0], &params[1])? {
                        return Ok(p);
                    }
                }
                let src = self.expr(&params[1], np)?;
                let value = match params.get(2) {
                    // P4_14's modify_field(dst, src, mask): only the bits of
                    // the mask change, (dst & ~mask) | (src & mask).
                    Some(mj) => {
                        let m = self.expr(mj, np)?;
                        let keep = Expr::Bin(
                            BinOp::And,
                            Box::new(self.expr(&params[0], np)?),
                            Box::new(Expr::BitNot(Box::new(m.clone()))),
                        );
                        let put = Expr::Bin(BinOp::And, Box::new(src), Box::new(m));
                        Expr::Bin(BinOp::Or, Box::new(keep), Box::new(put))
                    }
                    None => src,
                };
                Prim::Assign(self.lfield(&params[0], np)?, value.into())
            }
            "add_to_field" | "subtract_from_field" => {
                n(2)?;
                let op = if op == "add_to_field" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                assign_bin(op, &params[0], &params[1])?
            }
            "add" | "subtract" | "bit_and" | "bit_or" | "bit_xor" | "shift_left"
            | "shift_right" => {
                n(3)?;
                let op = match op {
                    "add" => BinOp::Add,
                    "subtract" => BinOp::Sub,
                    "bit_and" => BinOp::And,
                    "bit_or" => BinOp::Or,
                    "bit_xor" => BinOp::Xor,
                    "shift_left" => BinOp::Shl,
                    _ => BinOp::Shr,
                };
                assign_bin(op, &params[1], &params[2])?
            }
            "no_op" => {
                n(0)?;
                Prim::NoOp
            }
            "assign_VL" => {
                n(2)?;
                let hdr_of = |j: &J| -> R<HdrRef> {
                    let f = self.field_ref(j, np);
                    // A varbit field has no index; address it through its header.
                    match j.get("value")?.pair() {
                        Ok((h, _)) => Ok(HdrRef::Static(
                            self.p
                                .header_by_name
                                .get(h)
                                .copied()
                                .map_or_else(|| j.err(format!("unknown header {h:?}")), Ok)?,
                        )),
                        Err(_) => {
                            f?;
                            j.err("assign_VL expects fields")
                        }
                    }
                };
                Prim::AssignVL(hdr_of(&params[0])?, hdr_of(&params[1])?)
            }
            "assign_header" | "copy_header" => {
                n(2)?;
                Prim::AssignHeader(self.hdr_ref(&params[0], np)?, self.hdr_ref(&params[1], np)?)
            }
            "assign_union" => {
                n(2)?;
                Prim::AssignUnion(
                    self.union(&params[0].get("value")?)?,
                    self.union(&params[1].get("value")?)?,
                )
            }
            "assign_union_stack" => {
                n(2)?;
                let a = self.union_stack(&params[0].get("value")?)?;
                let b = self.union_stack(&params[1].get("value")?)?;
                let (ua, ub) = (
                    &self.p.union_stacks[a as usize],
                    &self.p.union_stacks[b as usize],
                );
                let len = |u: &UnionStackInfo| self.p.stacks[u.members[0] as usize].headers.len();
                if ua.members.len() != ub.members.len() || len(ua) != len(ub) {
                    return p.err("assign_union_stack between union stacks of different shapes");
                }
                Prim::AssignUnionStack(a, b)
            }
            "assign_header_stack" => {
                n(2)?;
                let a = self.stack(&params[0].get("value")?)?;
                let b = self.stack(&params[1].get("value")?)?;
                if self.p.stacks[a as usize].headers.len()
                    != self.p.stacks[b as usize].headers.len()
                {
                    return p.err("assign_header_stack between stacks of different sizes");
                }
                Prim::AssignStack(a, b)
            }
            "add_header" | "setValid" => {
                n(1)?;
                Prim::AddHeader(self.hdr_ref(&params[0], np)?, true)
            }
            "add_header_fast" => {
                n(1)?;
                Prim::AddHeader(self.hdr_ref(&params[0], np)?, false)
            }
            "remove_header" | "setInvalid" => {
                n(1)?;
                Prim::RemoveHeader(self.hdr_ref(&params[0], np)?)
            }
            "mark_to_drop" | "drop" => {
                // v1model's mark_to_drop(standard_metadata) names its argument;
                // P4_14's drop() has none.
                if params.len() > 1 {
                    n(0)?;
                }
                Prim::MarkToDrop
            }
            "register_read" => {
                n(3)?;
                Prim::RegRead(
                    self.lfield(&params[0], np)?,
                    named(&params[1], &self.reg_by_name, "register array")?,
                    self.expr(&params[2], np)?.into(),
                )
            }
            "register_write" => {
                n(3)?;
                Prim::RegWrite(
                    named(&params[0], &self.reg_by_name, "register array")?,
                    self.expr(&params[1], np)?.into(),
                    self.expr(&params[2], np)?.into(),
                )
            }
            "count" => {
                n(2)?;
                Prim::Count(
                    named(&params[0], &self.ctr_by_name, "counter array")?,
                    self.expr(&params[1], np)?.into(),
                )
            }
            "execute_meter" => {
                n(3)?;
                Prim::ExecMeter(
                    named(&params[0], &self.meter_by_name, "meter array")?,
                    self.expr(&params[1], np)?.into(),
                    self.lfield(&params[2], np)?,
                )
            }
            "modify_field_with_hash_based_offset" => {
                n(4)?;
                Prim::HashOffset(
                    self.lfield(&params[0], np)?,
                    self.expr(&params[1], np)?.into(),
                    named(&params[2], &self.p.calc_by_name, "calculation")?,
                    self.expr(&params[3], np)?.into(),
                )
            }
            "modify_field_rng_uniform" => {
                n(3)?;
                Prim::RngUniform(
                    self.lfield(&params[0], np)?,
                    self.expr(&params[1], np)?,
                    self.expr(&params[2], np)?,
                )
            }
            "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => {
                if params.is_empty() || params.len() > 2 {
                    return p
                        .get("parameters")?
                        .err(format!("{op} takes 1 or 2 parameters"));
                }
                let s = self.expr(&params[0], np)?;
                let fl = field_list_id(params.get(1))?;
                if op == "clone_ingress_pkt_to_egress" {
                    Prim::CloneI2E(s, fl)
                } else {
                    Prim::CloneE2E(s, fl)
                }
            }
            "resubmit" | "recirculate" => {
                if params.len() > 1 {
                    return p
                        .get("parameters")?
                        .err(format!("{op} takes 0 or 1 parameters"));
                }
                let fl = field_list_id(params.first())?;
                if op == "resubmit" {
                    Prim::Resubmit(fl)
                } else {
                    Prim::Recirculate(fl)
                }
            }
            "truncate" => {
                n(1)?;
                Prim::Truncate(self.expr(&params[0], np)?)
            }
            "generate_digest" => {
                n(2)?;
                let id = match self.expr(&params[1], np)? {
                    Expr::Const(v) => v as u64,
                    _ => return params[1].err("learn list id must be a constant"),
                };
                if !self.p.learn_lists.contains_key(&id) {
                    return params[1].err(format!("unknown learn list id {id}"));
                }
                Prim::Digest(self.expr(&params[0], np)?, id as u32)
            }
            "push" | "pop" => {
                n(2)?;
                let c = self.expr(&params[1], np)?;
                if params[0].get("type")?.str()? == "header_union_stack" {
                    let u = self.union_stack(&params[0].get("value")?)?;
                    return Ok(if op == "push" {
                        Prim::PushUnions(u, c)
                    } else {
                        Prim::PopUnions(u, c)
                    });
                }
                let s = self.stack(&params[0].get("value")?)?;
                if op == "push" {
                    Prim::Push(s, c)
                } else {
                    Prim::Pop(s, c)
                }
            }
            "log_msg" => {
                n(2)?;
                let fmt = params[0].get("value")?.str()?.to_string();
                let mut args = Vec::new();
                let pv = params[1].get("value")?;
                for a in pv.arr()? {
                    args.push(self.expr(&a, np)?);
                }
                Prim::Log(fmt, args)
            }
            "assert" | "assume" => {
                n(1)?;
                Prim::Assert(self.expr(&params[0], np)?.into())
            }
            "exit" => Prim::Exit,
            "_jump" => {
                n(1)?;
                Prim::Jump(jump_target(&params[0])?)
            }
            "_jump_if_zero" => {
                n(2)?;
                Prim::JumpIfZero(self.expr(&params[0], np)?.into(), jump_target(&params[1])?)
            }
            other => return opj.err(format!("unknown primitive {other:?}")),
        })
    }
}
