//! Parser states and the deparser.

use super::*;

impl Ld {
    // ------------------------------------------------------------ parser
    pub(super) fn parser(&mut self, root: &J) -> R<()> {
        let parsers = root.get("parsers")?.arr()?;
        let Some(pj) = parsers
            .iter()
            .find(|p| p.opt("name").and_then(|n| n.v.as_str()) == Some("parser"))
            .or(parsers.first())
        else {
            return root.get("parsers")?.err("no parser");
        };
        let states = pj.get("parse_states")?.arr()?;
        let mut by_name: HashMap<String, u32> = HashMap::new();
        for (i, s) in states.iter().enumerate() {
            unique(&mut by_name, s.name()?, i as u32, s)?;
        }
        let next = |j: Option<J>| -> R<Option<u32>> {
            match j {
                None => Ok(None),
                Some(j) => {
                    let n = j.str()?;
                    match by_name.get(n) {
                        Some(&i) => Ok(Some(i)),
                        None => j.err(format!("unknown parse state {n:?}")),
                    }
                }
            }
        };
        self.p.parser_init = next(pj.opt("init_state"))?;
        for s in &states {
            let mut ops = Vec::new();
            for o in s.get("parser_ops")?.arr()? {
                let opj = o.get("op")?;
                let params = o.get("parameters")?.arr()?;
                let want = |k: usize| -> R<()> {
                    if params.len() != k {
                        o.get("parameters")?.err(format!(
                            "{} takes {k} parameters, got {}",
                            opj.str()?,
                            params.len()
                        ))
                    } else {
                        Ok(())
                    }
                };
                ops.push(match opj.str()? {
                    "extract" => {
                        want(1)?;
                        let x = self.extract_target(&params[0])?;
                        if let Extract::Header(h) = x {
                            if self.p.headers[h as usize].varbit.is_some() {
                                return params[0]
                                    .err("a header with a variable-length field needs extract_VL");
                            }
                        }
                        ParserOp::Extract(x)
                    }
                    "extract_VL" => {
                        want(2)?;
                        ParserOp::ExtractVL(
                            self.extract_target(&params[0])?,
                            self.expr(&params[1], 0)?.into(),
                        )
                    }
                    "set" => {
                        want(2)?;
                        ParserOp::Set(self.lfield(&params[0], 0)?, self.src(&params[1])?)
                    }
                    "verify" => {
                        want(2)?;
                        ParserOp::Verify(
                            self.expr(&params[0], 0)?.into(),
                            self.expr(&params[1], 0)?.into(),
                        )
                    }
                    "shift" => {
                        want(1)?;
                        let bytes = self.expr(&params[0], 0)?;
                        ParserOp::Advance(
                            Expr::Bin(BinOp::Mul, Box::new(bytes), Box::new(Expr::Const(8))).into(),
                        )
                    }
                    "advance" => {
                        want(1)?;
                        ParserOp::Advance(self.expr(&params[0], 0)?.into())
                    }
                    "primitive" => {
                        want(1)?;
                        ParserOp::Primitive(self.primitive(&params[0], 0, 0)?)
                    }
                    other => return opj.err(format!("unknown parser op {other:?}")),
                });
            }
            let mut key = Vec::new();
            let mut total_bits = 0u32;
            for k in s.opt_arr("transition_key")? {
                let src = self.src(&k)?;
                let w = match &src {
                    Src::Lookahead(_, w) => *w,
                    Src::Expr(e) => match e.tree() {
                        Expr::Field(f) | Expr::SField(f, _) => self.p.fields[*f as usize].width,
                        Expr::FieldRef(r) => match r {
                            FieldRef::StackLast { stack, off }
                            | FieldRef::Dyn { stack, off, .. } => {
                                let h0 = self.p.stacks[*stack as usize].headers[0];
                                self.p.fields
                                    [(self.p.headers[h0 as usize].first_field + off) as usize]
                                    .width
                            }
                            FieldRef::Static(f) => self.p.fields[*f as usize].width,
                        },
                        Expr::Valid(_) => 1,
                        _ => return k.err("unsupported transition key component"),
                    },
                };
                let padded = w.div_ceil(8) * 8;
                total_bits += padded;
                key.push((src, w, padded));
            }
            if total_bits > 128 {
                return s
                    .get("transition_key")?
                    .err("transition key wider than 128 bits");
            }
            let kmask = mask(total_bits);
            let mut transitions = Vec::new();
            for t in s.get("transitions")?.arr()? {
                let ty = t
                    .opt("type")
                    .map(|x| x.str())
                    .transpose()?
                    .unwrap_or("hexstr");
                let nx = next(t.opt("next_state"))?;
                let m = match t.opt("mask") {
                    Some(m) => m.hexstr()? as u128,
                    None => kmask,
                };
                transitions.push(match ty {
                    "default" => Transition::Default(nx),
                    "hexstr" => {
                        let v = t.get("value")?;
                        if v.v.as_str() == Some("default") {
                            Transition::Default(nx)
                        } else {
                            let value = v.hexstr()? as u128;
                            Transition::Value {
                                value: value & m,
                                mask: m,
                                next: nx,
                            }
                        }
                    }
                    "parse_vset" => {
                        let vj = t.get("value")?;
                        let n = vj.str()?;
                        let Some(&vs) = self.vset_by_name.get(n) else {
                            return vj.err(format!("unknown parse value set {n:?}"));
                        };
                        Transition::Vset {
                            vset: vs,
                            mask: m,
                            next: nx,
                        }
                    }
                    other => {
                        return t
                            .get("type")?
                            .err(format!("unknown transition type {other:?}"))
                    }
                });
            }
            self.p.states.push(ParseState {
                ops,
                key,
                transitions,
            });
        }
        Ok(())
    }

    pub(super) fn extract_target(&self, j: &J) -> R<Extract> {
        let tj = j.get("type")?;
        match tj.str()? {
            "regular" => Ok(Extract::Header(self.header(&j.get("value")?)?)),
            "stack" => Ok(Extract::Stack(self.stack(&j.get("value")?)?)),
            "union_stack" => {
                // The member's stack: its element `next` is the member of the
                // union stack's next element.
                let v = j.get("value")?;
                let a = v.arr()?;
                if a.len() != 2 {
                    return v.err("a union_stack extract target is [union stack, member]");
                }
                let us = self.union_stack(&a[0])?;
                Ok(Extract::Stack(self.union_stack_member(us, &a[1])?))
            }
            t => tj.err(format!("unsupported extract target type {t:?}")),
        }
    }

    pub(super) fn src(&self, j: &J) -> R<Src> {
        if j.get("type")?.str()? == "lookahead" {
            let a = j.get("value")?.arr()?;
            if a.len() != 2 {
                return j.get("value")?.err("lookahead is [offset, width]");
            }
            let w = a[1].u64()? as u32;
            if w == 0 || w > 128 {
                return a[1].err("lookahead width must be 1..=128");
            }
            return Ok(Src::Lookahead(a[0].u64()? as u32, w));
        }
        Ok(Src::Expr(self.expr(j, 0)?.into()))
    }

    pub(super) fn deparser(&mut self, root: &J) -> R<()> {
        let ds = root.get("deparsers")?.arr()?;
        let Some(d) = ds
            .iter()
            .find(|p| p.opt("name").and_then(|n| n.v.as_str()) == Some("deparser"))
            .or(ds.first())
        else {
            return root.get("deparsers")?.err("no deparser");
        };
        for h in d.get("order")?.arr()? {
            let hi = self.header(&h)?;
            if self.p.headers[hi as usize].metadata {
                return h.err("metadata cannot be emitted");
            }
            self.p.deparser.push(hi);
        }
        Ok(())
    }
}
