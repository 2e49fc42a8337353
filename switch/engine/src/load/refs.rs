//! Field and header references, expressions.

use super::*;

impl Ld {
    // ------------------------------------------------------------ references
    pub(super) fn header(&self, j: &J) -> R<u32> {
        let n = j.str()?;
        match self.p.header_by_name.get(n) {
            Some(&h) => Ok(h),
            None => j.err(format!("unknown header {n:?}")),
        }
    }

    pub(super) fn stack(&self, j: &J) -> R<u32> {
        let n = j.str()?;
        match self.stack_by_name.get(n) {
            Some(&s) => Ok(s),
            None => j.err(format!("unknown header stack {n:?}")),
        }
    }

    pub(super) fn union_stack(&self, j: &J) -> R<u32> {
        let n = j.str()?;
        match self.union_stack_by_name.get(n) {
            Some(&s) => Ok(s),
            None => j.err(format!("unknown header union stack {n:?}")),
        }
    }

    /// The member stack of union stack `us` holding member `m` (a name).
    pub(super) fn union_stack_member(&self, us: u32, m: &J) -> R<u32> {
        let name = m.str()?;
        match self.union_stack_members[us as usize]
            .iter()
            .position(|x| x == name)
        {
            Some(i) => Ok(self.p.union_stacks[us as usize].members[i]),
            None => m.err(format!("the union stack's union has no member {name:?}")),
        }
    }

    /// The next-index counter slot of a `header_stack` or
    /// `header_union_stack` (type-value object).
    pub(super) fn stack_counter(&self, j: &J) -> R<u32> {
        let v = j.get("value")?;
        if j.get("type")?.str()? == "header_union_stack" {
            return Ok(self.p.union_stacks[self.union_stack(&v)? as usize].counter);
        }
        Ok(self.p.stacks[self.stack(&v)? as usize].counter)
    }

    pub(super) fn union(&self, j: &J) -> R<u32> {
        let n = j.str()?;
        match self.union_by_name.get(n) {
            Some(&s) => Ok(s),
            None => j.err(format!("unknown header union {n:?}")),
        }
    }

    /// A static field reference `[header, field]` (aliases allowed).
    pub(super) fn field(&self, j: &J) -> R<u32> {
        let (h, f) = j.pair()?;
        let full = format!("{h}.{f}");
        if let Some(&i) = self.p.field_by_name.get(&full) {
            return Ok(i);
        }
        if let Some(i) = self.std_field(&full) {
            return Ok(i);
        }
        if !self.p.header_by_name.contains_key(h) {
            return j.err(format!("unknown header {h:?}"));
        }
        if let Some((_, w)) = self.wide.get(&full) {
            return j.err(format!(
                "field {full:?} is {w} bits wide: fields wider than 128 bits can only be \
                 extracted, emitted, checksummed, copied whole or set to a constant"
            ));
        }
        j.err(format!("header {h:?} has no field {f:?}"))
    }

    /// The PHV fields of `[header, field]`: one, or the chunks of a field
    /// wider than 128 bits.
    pub(super) fn field_chunks(&self, j: &J) -> R<Vec<u32>> {
        let (h, f) = j.pair()?;
        if let Some((chunks, _)) = self.wide.get(&format!("{h}.{f}")) {
            return Ok(chunks.clone());
        }
        Ok(vec![self.field(j)?])
    }

    /// Calculation inputs for `[header, field]` (wide fields: every chunk;
    /// a varbit field: its bytes as extracted).
    pub(super) fn calc_fields(&self, j: &J) -> R<Vec<CalcIn>> {
        let (h, f) = j.pair()?;
        if let Some(&hidx) = self.varbit_fields.get(&format!("{h}.{f}")) {
            return Ok(vec![CalcIn::Varbit(hidx)]);
        }
        Ok(self
            .field_chunks(j)?
            .into_iter()
            .map(|f| {
                let fi = &self.p.fields[f as usize];
                let h = if self.p.headers[fi.header as usize].metadata {
                    u32::MAX
                } else {
                    fi.header
                };
                CalcIn::Field(f, fi.width, h)
            })
            .collect())
    }

    /// `assign` to a field wider than 128 bits, if `dst` is one: from a
    /// field of the same width or from a constant.
    pub(super) fn wide_assign(&self, dst: &J, src: &J) -> R<Option<Prim>> {
        if dst.get("type")?.str()? != "field" {
            return Ok(None);
        }
        let dv = dst.get("value")?;
        let (h, f) = dv.pair()?;
        let Some((chunks, w)) = self.wide.get(&format!("{h}.{f}")) else {
            return Ok(None);
        };
        let sv = src.get("value")?;
        let srcs: Vec<Expr> = match src.get("type")?.str()? {
            "field" => {
                let (sh, sf) = sv.pair()?;
                match self.wide.get(&format!("{sh}.{sf}")) {
                    Some((sc, sw)) if sw == w => sc.iter().map(|&c| Expr::Field(c)).collect(),
                    _ => return sv.err(format!("expected a field of {w} bits")),
                }
            }
            "hexstr" => {
                let Some(v) = sv.v.as_str().and_then(|s| wide_hex(s, *w)) else {
                    return sv.err(format!(
                        "expected a non-negative hexstr of at most {w} bits"
                    ));
                };
                // v holds 128-bit words, least significant first.
                chunks
                    .iter()
                    .rev()
                    .enumerate()
                    .map(|(i, _)| Expr::Const(v.get(i).copied().unwrap_or(0) as Val))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect()
            }
            t => {
                return src.err(format!(
                    "a {w}-bit field can only be assigned from a field of the same width \
                     or a constant, not {t:?}"
                ))
            }
        };
        let pairs = chunks
            .iter()
            .zip(srcs)
            .map(|(&c, e)| {
                (
                    LField::Static {
                        f: c,
                        mask: self.p.field_masks[c as usize],
                    },
                    e.into(),
                )
            })
            .collect();
        Ok(Some(Prim::AssignMany(pairs)))
    }

    pub(super) fn field_offset_in_stack(&self, s: u32, fname: &str, j: &J) -> R<u32> {
        let Some(&h0) = self.p.stacks[s as usize].headers.first() else {
            return j.err("empty header stack");
        };
        let hi = &self.p.headers[h0 as usize];
        let prefix = format!("{}.{}", hi.name, fname);
        match self.p.field_by_name.get(&prefix) {
            Some(&f) => Ok(f - hi.first_field),
            None => j.err(format!("stack element has no field {fname:?}")),
        }
    }

    pub(super) fn lfield_of(&self, r: FieldRef) -> LField {
        match r {
            FieldRef::Static(f) => LField::Static {
                f,
                mask: self.p.field_masks[f as usize],
            },
            r => LField::Ref(r),
        }
    }

    /// A field destination (type-value object).
    pub(super) fn lfield(&self, j: &J, np: usize) -> R<LField> {
        Ok(self.lfield_of(self.field_ref(j, np)?))
    }

    pub(super) fn field_ref(&self, j: &J, np: usize) -> R<FieldRef> {
        let tj = j.get("type")?;
        let v = j.get("value")?;
        match tj.str()? {
            "field" => {
                let (_, f) = v.pair()?;
                if f == "$valid$" {
                    return v.err("$valid$ is read-only");
                }
                Ok(FieldRef::Static(self.field(&v)?))
            }
            "stack_field" => {
                let (s, f) = v.pair()?;
                let a = v.arr()?;
                let _ = s;
                let st = self.stack(&a[0])?;
                let off = self.field_offset_in_stack(st, f, &a[1])?;
                Ok(FieldRef::StackLast { stack: st, off })
            }
            "union_stack_field" => {
                let a = v.arr()?;
                if a.len() != 3 {
                    return v.err("a union_stack_field is [union stack, member, field]");
                }
                let us = self.union_stack(&a[0])?;
                let st = self.union_stack_member(us, &a[1])?;
                let off = self.field_offset_in_stack(st, a[2].str()?, &a[2])?;
                Ok(FieldRef::StackLast { stack: st, off })
            }
            "expression" => {
                let inner = if v.opt("op").is_some() {
                    v
                } else {
                    return self.field_ref(&v, np);
                };
                let (op, l, r) = op_parts(&inner)?;
                if op != "access_field" {
                    return inner.err(format!("expected a field, got operation {op:?}"));
                }
                let (Some(l), Some(r)) = (l, r) else {
                    return inner.err("access_field needs left and right");
                };
                let pos = r.u64()? as usize;
                let hdr = self.hdr_ref(&l, np)?;
                let h0 = match &hdr {
                    HdrRef::Static(h) => *h,
                    HdrRef::Dyn { stack, .. } => self.p.stacks[*stack as usize].headers[0],
                };
                let Some(Some(off)) = self.pos_to_off[h0 as usize].get(pos).copied() else {
                    return r.err(format!("field offset {pos} out of range"));
                };
                let next = self.pos_to_off[h0 as usize].get(pos + 1).copied().flatten();
                let hi = &self.p.headers[h0 as usize];
                if next.unwrap_or(hi.nfields) - off != 1 {
                    return r.err("access to a field wider than 128 bits");
                }
                match hdr {
                    HdrRef::Static(h) => {
                        let hi = &self.p.headers[h as usize];
                        if off >= hi.nfields {
                            return r.err(format!("field offset {off} out of range"));
                        }
                        Ok(FieldRef::Static(hi.first_field + off))
                    }
                    HdrRef::Dyn { stack, idx } => {
                        let h0 = self.p.stacks[stack as usize].headers[0];
                        if off >= self.p.headers[h0 as usize].nfields {
                            return r.err(format!("field offset {off} out of range"));
                        }
                        Ok(FieldRef::Dyn { stack, idx, off })
                    }
                }
            }
            t => tj.err(format!("expected a field reference, got type {t:?}")),
        }
    }

    /// A header reference (type-value object).
    pub(super) fn hdr_ref(&self, j: &J, np: usize) -> R<HdrRef> {
        let tj = j.get("type")?;
        let v = j.get("value")?;
        match tj.str()? {
            "header" => Ok(HdrRef::Static(self.header(&v)?)),
            "expression" => {
                if v.opt("op").is_none() {
                    return self.hdr_ref(&v, np);
                }
                let (op, l, r) = op_parts(&v)?;
                if op == "access_union_header" {
                    return self.union_stack_header(&v, l, r, np);
                }
                if op != "dereference_header_stack" {
                    return v.err(format!("expected a header, got operation {op:?}"));
                }
                let (Some(l), Some(r)) = (l, r) else {
                    return v.err("dereference_header_stack needs left and right");
                };
                let stack = self.stack(&l.get("value")?)?;
                let idx = self.expr(&r, np)?;
                self.stack_element(stack, idx, &r, "stack")
            }
            t => tj.err(format!("expected a header, got type {t:?}")),
        }
    }

    /// Element `idx` of header stack `stack`: a constant index is checked
    /// against the stack's size (the error at `at` names `what` was indexed)
    /// and resolved now; any other is resolved per packet.
    fn stack_element(&self, stack: u32, idx: Expr, at: &J, what: &str) -> R<HdrRef> {
        if let Expr::Const(i) = idx {
            let hs = &self.p.stacks[stack as usize].headers;
            if i < 0 || i as usize >= hs.len() {
                return at.err(format!("{what} index {i} out of range"));
            }
            return Ok(HdrRef::Static(hs[i as usize]));
        }
        Ok(HdrRef::Dyn {
            stack,
            idx: Box::new(idx),
        })
    }

    /// `access_union_header(dereference_union_stack(us, idx), m)`: member
    /// `m` of element `idx` of a union stack, as an element of the member's
    /// stack.
    fn union_stack_header(&self, v: &J, l: Option<J>, r: Option<J>, np: usize) -> R<HdrRef> {
        let (Some(l), Some(r)) = (l, r) else {
            return v.err("access_union_header needs left and right");
        };
        let (us, idx) = self.union_stack_element(&l, np)?;
        let m = r.u64()? as usize;
        let Some(&stack) = self.p.union_stacks[us as usize].members.get(m) else {
            return r.err(format!("union member offset {m} out of range"));
        };
        self.stack_element(stack, idx, &l, "union stack")
    }

    /// `dereference_union_stack(us, idx)` (type-value object): the union
    /// stack and the index expression.
    fn union_stack_element(&self, j: &J, np: usize) -> R<(u32, Expr)> {
        let v = j.get("value")?;
        if j.get("type")?.str()? != "expression" {
            return j.err("expected a union stack element (dereference_union_stack)");
        }
        let (op, l, r) = op_parts(&v)?;
        if op != "dereference_union_stack" {
            return v.err(format!("expected dereference_union_stack, got {op:?}"));
        }
        let (Some(l), Some(r)) = (l, r) else {
            return v.err("dereference_union_stack needs left and right");
        };
        let us = self.union_stack(&l.get("value")?)?;
        Ok((us, self.expr(&r, np)?))
    }

    /// An rvalue (type-value object). `np` is the number of action
    /// parameters in scope.
    pub(super) fn expr(&self, j: &J, np: usize) -> R<Expr> {
        let tj = j.get("type")?;
        let t = tj.str()?;
        let v = j.get("value")?;
        Ok(match t {
            "hexstr" => Expr::Const(v.hexstr()?),
            "bool" => Expr::Const(v.bool()? as Val),
            "field" => {
                let (h, f) = v.pair()?;
                if f == "$valid$" {
                    let a = v.arr()?;
                    return Ok(Expr::Valid(HdrRef::Static(self.header(&a[0])?)));
                }
                let _ = h;
                let fi = self.field(&v)?;
                let info = &self.p.fields[fi as usize];
                if info.signed {
                    Expr::SField(fi, info.width)
                } else {
                    Expr::Field(fi)
                }
            }
            "runtime_data" | "local" => {
                let i = v.u64()? as usize;
                if i >= np {
                    return v.err(format!("parameter index {i} out of range ({np} in scope)"));
                }
                Expr::Local(i as u32)
            }
            "stack_field" | "union_stack_field" => Expr::FieldRef(self.field_ref(j, np)?),
            "expression" => {
                if v.opt("op").is_none() {
                    return self.expr(&v, np);
                }
                self.op_expr(&v, np)?
            }
            other => return tj.err(format!("type {other:?} is not a value")),
        })
    }

    pub(super) fn op_expr<'a>(&self, v: &J<'a>, np: usize) -> R<Expr> {
        let (op, l, r) = op_parts(v)?;
        let need = |x: &Option<J<'a>>, side: &str| -> R<J<'a>> {
            match x {
                Some(x) => Ok(x.clone()),
                None => v.err(format!("operation {op:?} needs \"{side}\"")),
            }
        };
        let bin = |b: BinOp| -> R<Expr> {
            let lj = need(&l, "left")?;
            let rj = need(&r, "right")?;
            Ok(Expr::Bin(
                b,
                Box::new(self.expr(&lj, np)?),
                Box::new(self.expr(&rj, np)?),
            ))
        };
        let un = |f: fn(Box<Expr>) -> Expr| -> R<Expr> {
            let rj = need(&r, "right")?;
            Ok(f(Box::new(self.expr(&rj, np)?)))
        };
        if let ("==" | "!=", Some(lj)) = (op, &l) {
            if let Some(eq) = self.aggregate_eq(lj, &need(&r, "right")?, np)? {
                return Ok(if op == "==" {
                    eq
                } else {
                    Expr::Not(Box::new(eq))
                });
            }
        }
        Ok(match op {
            "+" => bin(BinOp::Add)?,
            "-" if l.is_none() => un(Expr::Neg)?,
            "-" => bin(BinOp::Sub)?,
            "*" => bin(BinOp::Mul)?,
            "/" => bin(BinOp::Div)?,
            "%" => bin(BinOp::Mod)?,
            "<<" => bin(BinOp::Shl)?,
            ">>" => bin(BinOp::Shr)?,
            "&" => bin(BinOp::And)?,
            "|" => bin(BinOp::Or)?,
            "^" => bin(BinOp::Xor)?,
            "==" => bin(BinOp::Eq)?,
            "!=" => bin(BinOp::Ne)?,
            "<" => bin(BinOp::Lt)?,
            ">" => bin(BinOp::Gt)?,
            "<=" => bin(BinOp::Le)?,
            ">=" => bin(BinOp::Ge)?,
            "and" => bin(BinOp::LAnd)?,
            "or" => bin(BinOp::LOr)?,
            "not" => un(Expr::Not)?,
            "~" => un(Expr::BitNot)?,
            "d2b" => un(Expr::D2B)?,
            "b2d" => {
                let rj = need(&r, "right")?;
                self.expr(&rj, np)?
            }
            "valid" => Expr::Valid(self.hdr_ref(&need(&r, "right")?, np)?),
            "valid_union" => {
                let rj = need(&r, "right")?;
                if rj.get("type")?.str()? == "expression" {
                    // An element of a union stack: valid when a member is.
                    let (us, idx) = self.union_stack_element(&rj, np)?;
                    let members = &self.p.union_stacks[us as usize].members;
                    let valid = |&stack: &u32| {
                        Expr::Valid(HdrRef::Dyn {
                            stack,
                            idx: Box::new(idx.clone()),
                        })
                    };
                    let mut e = valid(&members[0]);
                    for m in &members[1..] {
                        e = Expr::Bin(BinOp::LOr, Box::new(e), Box::new(valid(m)));
                    }
                    e
                } else {
                    Expr::ValidUnion(self.union(&rj.get("value")?)?)
                }
            }
            "?" => {
                let c = v.get("cond")?;
                Expr::Cond(
                    Box::new(self.expr(&c, np)?),
                    Box::new(self.expr(&need(&l, "left")?, np)?),
                    Box::new(self.expr(&need(&r, "right")?, np)?),
                )
            }
            "two_comp_mod" | "sat_cast" | "usat_cast" => {
                let a = Box::new(self.expr(&need(&l, "left")?, np)?);
                let w = Box::new(self.expr(&need(&r, "right")?, np)?);
                match op {
                    "two_comp_mod" => Expr::TwoCompMod(a, w),
                    "sat_cast" => Expr::SatCast(a, w),
                    _ => Expr::USatCast(a, w),
                }
            }
            "last_stack_index" | "size_stack" => {
                let rj = need(&r, "right")?;
                let s = self.stack_counter(&rj)?;
                if op == "size_stack" {
                    Expr::SizeStack(s)
                } else {
                    Expr::LastStackIndex(s)
                }
            }
            "access_field" => {
                let wrapped = serde_json::json!({"type": "expression", "value": v.v});
                let jj = J {
                    v: &wrapped,
                    path: v.path.clone(),
                };
                let fr = self.field_ref(&jj, np)?;
                match fr {
                    FieldRef::Static(f) => {
                        let info = &self.p.fields[f as usize];
                        if info.signed {
                            Expr::SField(f, info.width)
                        } else {
                            Expr::Field(f)
                        }
                    }
                    r => Expr::FieldRef(r),
                }
            }
            "dereference_header_stack" => {
                return v.err("a header is not a value (dereference_header_stack)")
            }
            other => return v.get("op")?.err(format!("unknown operation {other:?}")),
        })
    }
}

/// What kind of operand a comparison has: headers and unions compare as a
/// whole (BMv2's `==h` and `==u`), everything else as a value.
enum Aggregate {
    Header(HdrRef),
    Union(u32),
    Stack,
    /// A variable-length field (its header's index).
    Varbit(u32),
    /// A field wider than 128 bits: its chunks and width.
    Wide(Vec<u32>, u32),
    Value,
}

impl Ld {
    fn aggregate(&self, j: &J, np: usize) -> R<Aggregate> {
        let v = j.get("value")?;
        Ok(match j.get("type")?.str()? {
            "header" => Aggregate::Header(self.hdr_ref(j, np)?),
            "header_union" => Aggregate::Union(self.union(&v)?),
            "header_stack" => Aggregate::Stack,
            "field" => {
                let (h, f) = v.pair()?;
                let full = format!("{h}.{f}");
                if let Some(&hidx) = self.varbit_fields.get(&full) {
                    Aggregate::Varbit(hidx)
                } else if let Some((chunks, w)) = self.wide.get(&full) {
                    Aggregate::Wide(chunks.clone(), *w)
                } else {
                    Aggregate::Value
                }
            }
            "header_union_stack" => Aggregate::Stack,
            "expression" => match v.opt("op").and_then(|o| o.v.as_str()) {
                Some("dereference_header_stack" | "access_union_header") => {
                    Aggregate::Header(self.hdr_ref(j, np)?)
                }
                Some("dereference_union_stack") => {
                    return v.err("== on a header union stack element is not supported");
                }
                _ => Aggregate::Value,
            },
            _ => Aggregate::Value,
        })
    }

    /// `l == r` on two headers or two header unions, as BMv2 evaluates it;
    /// `None` when the operands are values.
    fn aggregate_eq(&self, l: &J, r: &J, np: usize) -> R<Option<Expr>> {
        let (a, z) = (self.aggregate(l, np)?, self.aggregate(r, np)?);
        Ok(Some(match (a, z) {
            (Aggregate::Value, Aggregate::Value) => return Ok(None),
            (Aggregate::Header(a), Aggregate::Header(z)) => Expr::HdrEq(Box::new((a, z))),
            (Aggregate::Union(a), Aggregate::Union(z)) => Expr::UnionEq(a, z),
            // p4c compares headers field by field, variable-length and wide
            // fields included.
            (Aggregate::Varbit(a), Aggregate::Varbit(z)) => Expr::VarbitEq(a, z),
            (Aggregate::Wide(a, wa), Aggregate::Wide(z, wz)) if wa == wz => (a.iter().zip(&z))
                .map(|(&x, &y)| {
                    Expr::Bin(
                        BinOp::Eq,
                        Box::new(Expr::Field(x)),
                        Box::new(Expr::Field(y)),
                    )
                })
                .reduce(|x, y| Expr::Bin(BinOp::LAnd, Box::new(x), Box::new(y)))
                .unwrap_or(Expr::Const(1)),
            (Aggregate::Stack, _) => {
                return l.err("header stacks cannot be compared (BMv2 has no stack equality)")
            }
            (_, Aggregate::Stack) => {
                return r.err("header stacks cannot be compared (BMv2 has no stack equality)")
            }
            _ => return r.err("the two sides of the comparison are of different kinds"),
        }))
    }
}

/// Parses a non-negative hexstr of at most `w` bits into 128-bit words,
/// least significant first.
fn wide_hex(s: &str, w: u32) -> Option<Vec<u128>> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    let h = h.trim_start_matches('0');
    if !h.bytes().all(|b| b.is_ascii_hexdigit()) || h.len() * 4 > w.div_ceil(4) as usize * 4 {
        return None;
    }
    let mut words = Vec::new();
    let mut end = h.len();
    while end > 0 {
        let start = end.saturating_sub(32);
        words.push(u128::from_str_radix(&h[start..end], 16).ok()?);
        end = start;
    }
    if let Some(top) = words.last() {
        let top_bits = 128 * (words.len() as u32 - 1) + (128 - top.leading_zeros());
        if top_bits > w {
            return None;
        }
    }
    Some(words)
}
