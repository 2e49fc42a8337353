//! Loader: BMv2 JSON text -> [`Program`]. Every refusal names the JSON path
//! of the offending item. This file: the document, headers, metadata,
//! externs and checksums; `refs.rs`: field/header references and
//! expressions; `actions.rs`: primitives; `parser.rs`: parser and deparser;
//! `pipeline.rs`: control flow, tables, action profiles.

mod actions;
mod parser;
mod pipeline;
mod refs;

use crate::calc::Algo;
use crate::error::LoadError;
use crate::json::{J, R};
use crate::phv::{mask, Val};
use crate::program::*;
use crate::table::MatchValue;
use serde_json::Value;
use std::collections::HashMap;

/// Widest field accepted (bits). Fields above 128 bits are stored as chunks
/// and can only be moved whole (see `refs.rs`).
const MAX_WIDE: u64 = 4096;

/// Largest register / counter array accepted (entries); meters: a quarter.
const MAX_ARRAY: usize = 1 << 22;

struct Ld {
    p: Program,
    aliases: HashMap<String, (String, String)>,
    stack_by_name: HashMap<String, u32>,
    union_by_name: HashMap<String, u32>,
    union_stack_by_name: HashMap<String, u32>,
    /// Per union stack: its union type's member names, in order.
    union_stack_members: Vec<Vec<String>>,
    /// `header_union_types`: name -> member names, in order.
    union_members: HashMap<String, Vec<String>>,
    reg_by_name: HashMap<String, u32>,
    ctr_by_name: HashMap<String, u32>,
    meter_by_name: HashMap<String, u32>,
    vset_by_name: HashMap<String, u32>,
    action_by_id: HashMap<u64, u32>,
    /// Length in bits of the field a varbit header has, keyed by header.
    header_type_of: Vec<String>,
    /// Fields wider than 128 bits: "h.f" -> (PHV chunks, most significant
    /// first; total width).
    wide: HashMap<String, (Vec<u32>, u32)>,
    /// Variable-length fields: "h.f" -> header index.
    varbit_fields: HashMap<String, u32>,
    /// Per header: PHV offset (from `first_field`) of each JSON field
    /// position (`None` for the variable-length field).
    pos_to_off: Vec<Vec<Option<u32>>>,
}

/// Loads and validates a BMv2 JSON program.
pub(crate) fn load(text: &str) -> Result<Program, LoadError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| LoadError::new("", format!("not valid JSON: {e}")))?;
    let root = J::root(&v);
    if !v.is_object() {
        return root.err("the program must be a JSON object");
    }
    if let Some(meta) = root.opt("__meta__") {
        if let Some(ver) = meta.opt("version") {
            let a = ver.arr()?;
            if a.is_empty() || a[0].u64()? != 2 {
                return ver.err("unsupported BMv2 JSON major version (expected 2)");
            }
        }
    }
    let mut ld = Ld {
        p: Program {
            fields: Vec::new(),
            field_masks: Vec::new(),
            field_by_name: HashMap::new(),
            headers: Vec::new(),
            header_by_name: HashMap::new(),
            valid_init: Vec::new(),
            stacks: Vec::new(),
            unions: Vec::new(),
            union_stacks: Vec::new(),
            n_varbits: 0,
            errors: Vec::new(),
            err: ErrCodes {
                no_error: 0,
                packet_too_short: 1,
                no_match: 2,
                stack_oob: 3,
                header_too_short: 4,
                invalid_arg: 6,
            },
            states: Vec::new(),
            parser_init: None,
            deparser: Vec::new(),
            actions: Vec::new(),
            action_by_name: HashMap::new(),
            tables: Vec::new(),
            table_by_name: HashMap::new(),
            conds: Vec::new(),
            calls: Vec::new(),
            ingress: None,
            egress: None,
            calcs: Vec::new(),
            profiles: Vec::new(),
            calc_by_name: HashMap::new(),
            checksums: Vec::new(),
            registers: Vec::new(),
            counters: Vec::new(),
            meters: Vec::new(),
            vsets: Vec::new(),
            field_lists: HashMap::new(),
            learn_lists: HashMap::new(),
            sm: StdMeta::default(),
        },
        aliases: HashMap::new(),
        varbit_fields: HashMap::new(),
        stack_by_name: HashMap::new(),
        union_by_name: HashMap::new(),
        union_stack_by_name: HashMap::new(),
        union_stack_members: Vec::new(),
        union_members: HashMap::new(),
        reg_by_name: HashMap::new(),
        ctr_by_name: HashMap::new(),
        meter_by_name: HashMap::new(),
        vset_by_name: HashMap::new(),
        action_by_id: HashMap::new(),
        header_type_of: Vec::new(),
        wide: HashMap::new(),
        pos_to_off: Vec::new(),
    };
    ld.headers(&root)?;
    ld.misc(&root)?;
    ld.externs(&root)?;
    ld.actions(&root)?;
    ld.parser(&root)?;
    ld.deparser(&root)?;
    ld.pipelines(&root)?;
    ld.checksums(&root)?;
    for h in &mut ld.p.headers {
        let first = h.first_field as usize;
        h.wire = crate::wire::layout(first, &ld.p.fields[first..first + h.nfields as usize]);
    }
    let steps: Vec<_> = (ld.p.actions.iter())
        .map(|a| crate::steps::compile_steps(&ld.p, &a.prims))
        .collect();
    for (a, s) in ld.p.actions.iter_mut().zip(steps) {
        a.steps = s;
    }
    Ok(ld.p)
}

/// The indices a list of JSON ids (`list`) stands for in `by_id`; an unknown
/// one is an error naming `what` it should be the id of.
fn ids(list: &J, by_id: &HashMap<u64, u32>, what: &str) -> R<Vec<u32>> {
    let mut out = Vec::new();
    for j in list.arr()? {
        let id = j.u64()?;
        match by_id.get(&id) {
            Some(&i) => out.push(i),
            None => return j.err(format!("unknown {what} id {id}")),
        }
    }
    Ok(out)
}

fn unique<T>(map: &mut HashMap<String, T>, name: &str, v: T, j: &J) -> R<()> {
    if map.insert(name.to_string(), v).is_some() {
        return j.err(format!("duplicate name {name:?}"));
    }
    Ok(())
}

/// (op, left, right, cond) of an expression object.
fn op_parts<'a>(j: &J<'a>) -> R<(&'a str, Option<J<'a>>, Option<J<'a>>)> {
    let op = j.get("op")?.str()?;
    Ok((op, j.opt("left"), j.opt("right")))
}

impl Ld {
    // ------------------------------------------------------------ headers
    fn headers(&mut self, root: &J) -> R<()> {
        struct HT<'a> {
            fields: Vec<(String, Option<u32>, bool, J<'a>)>,
            max_length: Option<u64>,
            /// Index in document order: headers of one type compare equal.
            id: u32,
        }
        let mut types: HashMap<String, HT> = HashMap::new();
        for t in root.get("header_types")?.arr()? {
            let name = t.name()?;
            let mut fields = Vec::new();
            let mut n_var = 0;
            for f in t.get("fields")?.arr()? {
                let a = f.arr()?;
                if a.len() < 2 || a.len() > 3 {
                    return f.err("a field is [name, width] or [name, width, signed]");
                }
                let fname = a[0].str()?.to_string();
                let width = if a[1].v.as_str() == Some("*") {
                    n_var += 1;
                    None
                } else {
                    let w = a[1].u64()?;
                    if w == 0 || w > MAX_WIDE {
                        return a[1].err(format!(
                            "field width {w} not supported (1..={MAX_WIDE} bits)"
                        ));
                    }
                    if w > 128 && a.len() == 3 && a[2].flag()? {
                        return a[2].err("signed fields wider than 128 bits are not supported");
                    }
                    Some(w as u32)
                };
                let signed = if a.len() == 3 { a[2].flag()? } else { false };
                if signed && width.is_some_and(|w| w < 2) {
                    return a[2].err("a signed field needs at least 2 bits");
                }
                fields.push((fname, width, signed, f.clone()));
            }
            if n_var > 1 {
                return t.err("more than one variable-length field");
            }
            if n_var == 1 && fields.last().is_some_and(|f| f.1.is_some()) {
                return t.err("the variable-length field must be the last field");
            }
            let max_length = match t.opt("max_length") {
                Some(m) => Some(m.u64()?),
                None => None,
            };
            if n_var == 1 && max_length.is_none() {
                return t.err("a header type with a variable-length field needs max_length");
            }
            let id = types.len() as u32;
            let ht = HT {
                fields,
                max_length,
                id,
            };
            if types.insert(name.to_string(), ht).is_some() {
                return t.err(format!("duplicate header type {name:?}"));
            }
        }
        let mut by_id: HashMap<u64, u32> = HashMap::new();
        for h in root.get("headers")?.arr()? {
            let name = h.name()?.to_string();
            let id = h.get("id")?.u64()?;
            let tj = h.get("header_type")?;
            let tname = tj.str()?;
            let Some(ht) = types.get(tname) else {
                return tj.err(format!("unknown header type {tname:?}"));
            };
            let metadata = h.opt_bool("metadata", false)?;
            let hidx = self.p.headers.len() as u32;
            let first_field = self.p.fields.len() as u32;
            let mut off = 0u32;
            let mut varbit = None;
            let mut pos_to_off = Vec::new();
            for (fname, width, signed, _fj) in &ht.fields {
                match width {
                    Some(w) => {
                        let full = format!("{name}.{fname}");
                        pos_to_off.push(Some(self.p.fields.len() as u32 - first_field));
                        // Wider than 128 bits: consecutive chunks of at most
                        // 128 bits, the first one holding the top bits.
                        let k = w.div_ceil(128);
                        let mut chunks = Vec::new();
                        for i in 0..k {
                            let cw = if i == 0 { w - 128 * (k - 1) } else { 128 };
                            chunks.push(self.p.fields.len() as u32);
                            self.p.fields.push(FieldInfo {
                                header: hidx,
                                offset: off,
                                width: cw,
                                signed: *signed,
                            });
                            self.p.field_masks.push(mask(cw));
                            off += cw;
                        }
                        if k == 1 {
                            self.p.field_by_name.insert(full, chunks[0]);
                        } else {
                            self.wide.insert(full, (chunks, *w));
                        }
                    }
                    None => {
                        pos_to_off.push(None);
                        self.varbit_fields.insert(format!("{name}.{fname}"), hidx);
                        let max_bytes = ht.max_length.unwrap_or(0) as u32;
                        let max_bits = max_bytes.saturating_mul(8).saturating_sub(off);
                        varbit = Some(VarbitInfo {
                            slot: self.p.n_varbits as u32,
                            max_bits,
                        });
                        self.p.n_varbits += 1;
                    }
                }
            }
            if !metadata && !off.is_multiple_of(8) {
                return h.err(format!(
                    "header {name:?} is {off} bits wide, not a whole number of bytes"
                ));
            }
            if by_id.insert(id, hidx).is_some() {
                return h.get("id")?.err(format!("duplicate header id {id}"));
            }
            unique(&mut self.p.header_by_name, &name, hidx, &h)?;
            self.p.headers.push(HeaderInfo {
                name,
                first_field,
                nfields: self.p.fields.len() as u32 - first_field,
                bits: off,
                metadata,
                varbit,
                union: None,
                wire: None,
                type_id: ht.id,
            });
            self.p.valid_init.push(metadata);
            self.pos_to_off.push(pos_to_off);
            self.header_type_of.push(tname.to_string());
        }
        for s in root.opt_arr("header_stacks")? {
            let name = s.name()?.to_string();
            let headers = ids(&s.get("header_ids")?, &by_id, "header")?;
            if headers.is_empty() {
                return s
                    .get("header_ids")?
                    .err("a header stack needs at least one element");
            }
            let t0 = headers
                .first()
                .map(|&h| self.header_type_of[h as usize].clone());
            if headers
                .iter()
                .any(|&h| Some(&self.header_type_of[h as usize]) != t0.as_ref())
            {
                return s.err("stack elements of different header types");
            }
            let idx = self.p.stacks.len() as u32;
            unique(&mut self.stack_by_name, &name, idx, &s)?;
            self.p.stacks.push(StackInfo {
                headers,
                counter: idx,
            });
        }
        for t in root.opt_arr("header_union_types")? {
            let mut names = Vec::new();
            for m in t.get("headers")?.arr()? {
                names.push(m.pair()?.0.to_string());
            }
            self.union_members.insert(t.name()?.to_string(), names);
        }
        let mut union_by_id = HashMap::new();
        for u in root.opt_arr("header_unions")? {
            let name = u.name()?.to_string();
            union_by_id.insert(u.get("id")?.u64()?, self.p.unions.len() as u32);
            let idx = self.p.unions.len() as u32;
            let headers = ids(&u.get("header_ids")?, &by_id, "header")?;
            for &h in &headers {
                self.p.headers[h as usize].union = Some(idx);
            }
            unique(&mut self.union_by_name, &name, idx, &u)?;
            self.p.unions.push(UnionInfo { headers });
        }
        for us in root.opt_arr("header_union_stacks")? {
            self.load_union_stack(&us, &union_by_id)?;
        }
        for a in root.opt_arr("field_aliases")? {
            let parts = a.arr()?;
            if parts.len() != 2 {
                return a.err("a field alias is [name, [header, field]]");
            }
            let (h, f) = parts[1].pair()?;
            self.aliases
                .insert(parts[0].str()?.to_string(), (h.to_string(), f.to_string()));
        }
        Ok(())
    }

    /// One `header_union_stacks` entry: a header stack per member of its
    /// union type, sharing one next-index counter.
    fn load_union_stack(&mut self, us: &J, union_by_id: &HashMap<u64, u32>) -> R<()> {
        let name = us.name()?.to_string();
        let unions = ids(&us.get("header_union_ids")?, union_by_id, "header union")?;
        let Some(&u0) = unions.first() else {
            return us
                .get("header_union_ids")?
                .err("a header union stack needs at least one element");
        };
        let types = |u: u32| -> Vec<String> {
            (self.p.unions[u as usize].headers.iter())
                .map(|&h| self.header_type_of[h as usize].clone())
                .collect()
        };
        let t0 = types(u0);
        if unions.iter().any(|&u| types(u) != t0) {
            return us.err("union stack elements of different header union types");
        }
        let member_names = match self.union_members.get(us.get("union_type")?.str()?) {
            Some(m) if m.len() == t0.len() => m.clone(),
            Some(_) => return us.err("union_type's members do not match the elements' headers"),
            None => return us.get("union_type")?.err("unknown header union type"),
        };
        let counter = self.p.stacks.len() as u32;
        let mut members = Vec::new();
        for m in 0..t0.len() {
            let idx = self.p.stacks.len() as u32;
            let headers = (unions.iter())
                .map(|&u| self.p.unions[u as usize].headers[m])
                .collect();
            self.p.stacks.push(StackInfo { headers, counter });
            members.push(idx);
        }
        let idx = self.p.union_stacks.len() as u32;
        unique(&mut self.union_stack_by_name, &name, idx, us)?;
        self.union_stack_members.push(member_names);
        self.p
            .union_stacks
            .push(UnionStackInfo { members, counter });
        Ok(())
    }

    /// Field index by "header.field", following `field_aliases`.
    fn std_field(&self, name: &str) -> Option<u32> {
        if let Some((h, f)) = self.aliases.get(name) {
            return self.p.field_by_name.get(&format!("{h}.{f}")).copied();
        }
        self.p.field_by_name.get(name).copied()
    }

    fn misc(&mut self, root: &J) -> R<()> {
        for e in root.opt_arr("errors")? {
            let a = e.arr()?;
            if a.len() != 2 {
                return e.err("an error is [name, value]");
            }
            let name = a[0].str()?.to_string();
            let v = a[1].u64()? as Val;
            match name.as_str() {
                "NoError" => self.p.err.no_error = v,
                "PacketTooShort" => self.p.err.packet_too_short = v,
                "NoMatch" => self.p.err.no_match = v,
                "StackOutOfBounds" => self.p.err.stack_oob = v,
                "HeaderTooShort" => self.p.err.header_too_short = v,
                "ParserInvalidArgument" => self.p.err.invalid_arg = v,
                _ => {}
            }
            self.p.errors.push((name, v));
        }
        for e in root.opt_arr("enums")? {
            e.name()?;
            for x in e.get("entries")?.arr()? {
                let a = x.arr()?;
                if a.len() != 2 {
                    return x.err("an enum entry is [name, value]");
                }
                a[0].str()?;
                a[1].u64()?;
            }
        }
        let sm = |n: &str| self.std_field(&format!("standard_metadata.{n}"));
        let q = |n: &str| {
            self.std_field(&format!("queueing_metadata.{n}"))
                .or_else(|| self.std_field(&format!("standard_metadata.{n}")))
        };
        let im = |n: &str| {
            self.std_field(&format!("intrinsic_metadata.{n}"))
                .or_else(|| self.std_field(&format!("standard_metadata.{n}")))
        };
        self.p.sm = StdMeta {
            ingress_port: sm("ingress_port"),
            egress_spec: sm("egress_spec"),
            egress_port: sm("egress_port"),
            instance_type: sm("instance_type"),
            packet_length: sm("packet_length"),
            enq_timestamp: q("enq_timestamp"),
            enq_qdepth: q("enq_qdepth"),
            deq_timedelta: q("deq_timedelta"),
            deq_qdepth: q("deq_qdepth"),
            ingress_global_timestamp: im("ingress_global_timestamp"),
            egress_global_timestamp: im("egress_global_timestamp"),
            mcast_grp: im("mcast_grp"),
            egress_rid: im("egress_rid"),
            checksum_error: sm("checksum_error"),
            parser_error: sm("parser_error"),
            priority: im("priority"),
        };
        for fl in root.opt_arr("field_lists")? {
            let id = fl.get("id")?.u64()?;
            let fields = self.field_list(&fl.get("elements")?)?;
            self.p.field_lists.insert(id, fields);
        }
        for fl in root.opt_arr("learn_lists")? {
            let id = fl.get("id")?.u64()?;
            let name = fl.name()?.to_string();
            let fields = self.field_list(&fl.get("elements")?)?;
            self.p.learn_lists.insert(id, LearnList { name, fields });
        }
        Ok(())
    }

    fn field_list(&self, elems: &J) -> R<Vec<u32>> {
        let mut out = Vec::new();
        for e in elems.arr()? {
            let t = e.get("type")?.str()?;
            if t != "field" {
                return e
                    .get("type")?
                    .err(format!("field list element of type {t:?} not supported"));
            }
            out.extend(self.field_chunks(&e.get("value")?)?);
        }
        Ok(out)
    }

    // ------------------------------------------------------------ externs
    fn externs(&mut self, root: &J) -> R<()> {
        for c in root.opt_arr("calculations")? {
            let name = c.name()?.to_string();
            let aj = c.get("algo")?;
            let algo_name = aj.str()?;
            let Some(algo) = Algo::by_name(algo_name) else {
                return aj.err(format!("unknown hash algorithm {algo_name:?}"));
            };
            let mut inputs = Vec::new();
            for i in c.get("input")?.arr()? {
                let tj = i.get("type")?;
                inputs.push(match tj.str()? {
                    "field" => {
                        inputs.extend(self.calc_fields(&i.get("value")?)?);
                        continue;
                    }
                    "hexstr" => {
                        let w = i.get("bitwidth")?.u64()? as u32;
                        if w == 0 || w > 128 {
                            return i.get("bitwidth")?.err("bitwidth must be 1..=128");
                        }
                        CalcIn::Const(i.get("value")?.hexstr()? as u128 & mask(w), w)
                    }
                    "header" => CalcIn::Header(self.header(&i.get("value")?)?),
                    "payload" => CalcIn::Payload,
                    t => return tj.err(format!("unknown calculation input type {t:?}")),
                });
            }
            let idx = self.p.calcs.len() as u32;
            unique(&mut self.p.calc_by_name, &name, idx, &c)?;
            self.p
                .calcs
                .push(Calculation::new(algo, inputs, &self.p.headers));
        }
        for r in root.opt_arr("register_arrays")? {
            let name = r.name()?.to_string();
            let size = r.get("size")?.u64()? as usize;
            let width = r.get("bitwidth")?.u64()? as u32;
            if width == 0 || width > 128 {
                return r.get("bitwidth")?.err("register width must be 1..=128");
            }
            if size > MAX_ARRAY {
                return r.get("size")?.err("register array too large");
            }
            let idx = self.p.registers.len() as u32;
            unique(&mut self.reg_by_name, &name, idx, &r)?;
            self.p.registers.push(RegisterDef { name, size, width });
        }
        for c in root.opt_arr("counter_arrays")? {
            let name = c.name()?.to_string();
            let size = match c.opt("size") {
                Some(s) => s.u64()? as usize,
                None if c.opt_bool("is_direct", false)? => 0,
                None => c.get("size")?.u64()? as usize,
            };
            if size > MAX_ARRAY {
                return c.get("size")?.err("counter array too large");
            }
            let idx = self.p.counters.len() as u32;
            unique(&mut self.ctr_by_name, &name, idx, &c)?;
            self.p.counters.push(CounterDef {
                name,
                size,
                direct_table: None,
            });
        }
        for m in root.opt_arr("meter_arrays")? {
            let name = m.name()?.to_string();
            let size = match m.opt("size") {
                Some(s) => s.u64()? as usize,
                None if m.opt_bool("is_direct", false)? => 0,
                None => m.get("size")?.u64()? as usize,
            };
            if size > MAX_ARRAY / 4 {
                return m.get("size")?.err("meter array too large");
            }
            let tj = m.get("type")?;
            let bytes = match tj.str()? {
                "bytes" => true,
                "packets" => false,
                t => return tj.err(format!("unknown meter type {t:?}")),
            };
            if let Some(rc) = m.opt("rate_count") {
                if rc.u64()? != 2 {
                    return rc.err("only 2-rate meters are supported");
                }
            }
            let result = match m.opt("result_target") {
                Some(t) if m.opt_bool("is_direct", false)? => {
                    let f = self.field(&t)?;
                    Some(LField::Static {
                        f,
                        mask: self.p.field_masks[f as usize],
                    })
                }
                _ => None,
            };
            let idx = self.p.meters.len() as u32;
            unique(&mut self.meter_by_name, &name, idx, &m)?;
            self.p.meters.push(MeterDef {
                name,
                size,
                bytes,
                direct_table: None,
                result,
            });
        }
        for v in root.opt_arr("parse_vsets")? {
            let name = v.name()?.to_string();
            let width = v.get("compressed_bitwidth")?.u64()? as u32;
            if width > 128 {
                return v
                    .get("compressed_bitwidth")?
                    .err("value sets wider than 128 bits are not supported");
            }
            let idx = self.p.vsets.len() as u32;
            unique(&mut self.vset_by_name, &name, idx, &v)?;
            self.p.vsets.push(VsetDef { name, width });
        }
        if let Some(e) = root.opt_arr("extern_instances")?.first() {
            let t = e.get("type")?;
            return t.err(format!("extern type {:?} is not supported", t.str()?));
        }
        Ok(())
    }

    fn checksums(&mut self, root: &J) -> R<()> {
        for c in root.opt_arr("checksums")? {
            let target = self.field(&c.get("target")?)?;
            let cj = c.get("calculation")?;
            let n = cj.str()?;
            let Some(&calc) = self.p.calc_by_name.get(n) else {
                return cj.err(format!("unknown calculation {n:?}"));
            };
            let cond = match c.opt("if_cond") {
                Some(e) => Some(self.expr(&e, 0)?.into()),
                None => None,
            };
            if let Some(t) = c.opt("type") {
                let ty = t.str()?;
                if ty != "generic" && ty != "ipv4" {
                    return t.err(format!("unknown checksum type {ty:?}"));
                }
            }
            self.p.checksums.push(Checksum {
                target,
                calc,
                verify: c.opt_bool("verify", true)?,
                update: c.opt_bool("update", true)?,
                cond,
            });
        }
        Ok(())
    }
}
