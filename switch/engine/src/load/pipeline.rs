//! Pipelines: tables, conditionals, action calls, action profiles.

use super::*;

impl Ld {
    // ------------------------------------------------------------ pipelines
    pub(super) fn pipelines(&mut self, root: &J) -> R<()> {
        let pls = root.get("pipelines")?.arr()?;
        for pl in &pls {
            // Node names are per pipeline.
            let mut names: HashMap<String, Node> = HashMap::new();
            let tables = pl.get("tables")?.arr()?;
            let conds = pl.opt_arr("conditionals")?;
            let calls = pl.opt_arr("action_calls")?;
            let mut profile_by_name: HashMap<String, u32> = HashMap::new();
            for pa in pl.opt_arr("action_profiles")? {
                let name = pa.name()?.to_string();
                let max_size = match pa.opt("max_size") {
                    Some(m) => m.u64()? as usize,
                    None => 1024,
                };
                let selector = match pa.opt("selector") {
                    None => None,
                    Some(sel) => {
                        let aj = sel.get("algo")?;
                        let an = aj.str()?;
                        let Some(algo) = Algo::by_name(an) else {
                            return aj.err(format!("unknown hash algorithm {an:?}"));
                        };
                        let mut inputs = Vec::new();
                        for i in sel.get("input")?.arr()? {
                            inputs.extend(self.calc_fields(&i.get("value")?)?);
                        }
                        self.p
                            .calcs
                            .push(Calculation::new(algo, inputs, &self.p.headers));
                        Some(self.p.calcs.len() as u32 - 1)
                    }
                };
                let idx = self.p.profiles.len() as u32;
                unique(&mut profile_by_name, &name, idx, &pa)?;
                self.p.profiles.push(ProfileDef {
                    name,
                    max_size,
                    selector,
                    actions: Vec::new(),
                });
            }
            let t0 = self.p.tables.len() as u32;
            let c0 = self.p.conds.len() as u32;
            let a0 = self.p.calls.len() as u32;
            for (i, t) in tables.iter().enumerate() {
                unique(&mut names, t.name()?, Node::Table(t0 + i as u32), t)?;
            }
            for (i, c) in conds.iter().enumerate() {
                unique(&mut names, c.name()?, Node::Cond(c0 + i as u32), c)?;
            }
            for (i, c) in calls.iter().enumerate() {
                unique(&mut names, c.name()?, Node::Call(a0 + i as u32), c)?;
            }
            let node = |j: Option<J>| -> R<Option<Node>> {
                match j {
                    None => Ok(None),
                    Some(j) => {
                        let n = j.str()?;
                        match names.get(n) {
                            Some(&x) => Ok(Some(x)),
                            None => j.err(format!("unknown table or conditional {n:?}")),
                        }
                    }
                }
            };
            let init = node(pl.opt("init_table"))?;
            match pl.name()? {
                "ingress" => self.p.ingress = init,
                "egress" => self.p.egress = init,
                other => {
                    return pl.get("name")?.err(format!(
                        "unknown pipeline {other:?} (v1model has \"ingress\" and \"egress\")"
                    ))
                }
            }
            for t in &tables {
                let mut def = self.table(t, &node)?;
                let ty = t
                    .opt("type")
                    .map(|x| x.str())
                    .transpose()?
                    .unwrap_or("simple");
                if ty == "indirect" || ty == "indirect_ws" {
                    let pj = t.get("action_profile")?;
                    let pn = pj.str()?;
                    let Some(&pi) = profile_by_name.get(pn) else {
                        return pj.err(format!("unknown action profile {pn:?}"));
                    };
                    let prof = &mut self.p.profiles[pi as usize];
                    if ty == "indirect_ws" && prof.selector.is_none() {
                        return pj.err(format!("action profile {pn:?} has no selector"));
                    }
                    for &a in &def.actions {
                        if !prof.actions.contains(&a) {
                            prof.actions.push(a);
                        }
                    }
                    if def.const_entries.is_some() {
                        return t
                            .get("entries")?
                            .err("const entries in indirect tables are not supported");
                    }
                    def.profile = Some(pi);
                }
                def.fixed = def.fixed_apply();
                let idx = self.p.tables.len() as u32;
                unique(&mut self.p.table_by_name, &def.name.clone(), idx, t)?;
                self.p.tables.push(def);
            }
            for c in &conds {
                let expr = self.expr(&c.get("expression")?, 0)?.into();
                self.p.conds.push(Conditional {
                    expr,
                    t: node(c.opt("true_next"))?,
                    f: node(c.opt("false_next"))?,
                });
            }
            for c in &calls {
                let aj = c.get("action_id")?;
                let action = self.action_id(&aj)?;
                if !self.p.actions[action as usize].params.is_empty() {
                    return aj.err("an action call's action must take no parameters");
                }
                self.p.calls.push(ActionCall {
                    action,
                    next: node(c.opt("next_node"))?,
                });
            }
        }
        // Direct counters / meters.
        for (i, c) in root.opt_arr("counter_arrays")?.iter().enumerate() {
            if c.opt_bool("is_direct", false)? {
                let bj = c.get("binding")?;
                let n = bj.str()?;
                match self.p.table_by_name.get(n) {
                    Some(&t) => self.p.counters[i].direct_table = Some(t),
                    None => return bj.err(format!("unknown table {n:?}")),
                }
            }
        }
        for (i, m) in root.opt_arr("meter_arrays")?.iter().enumerate() {
            if m.opt_bool("is_direct", false)? {
                let bj = m.get("binding")?;
                let n = bj.str()?;
                match self.p.table_by_name.get(n) {
                    Some(&t) => {
                        self.p.meters[i].direct_table = Some(t);
                        self.p.tables[t as usize].direct_meter = Some(i as u32);
                    }
                    None => return bj.err(format!("unknown table {n:?}")),
                }
            }
        }
        Ok(())
    }

    pub(super) fn action_id(&self, j: &J) -> R<u32> {
        let id = j.u64()?;
        match self.action_by_id.get(&id) {
            Some(&a) => Ok(a),
            None => j.err(format!("unknown action id {id}")),
        }
    }

    pub(super) fn action_data(&self, j: Option<J>, action: u32, at: &J) -> R<Box<[Val]>> {
        let params = &self.p.actions[action as usize].params;
        let vals = match j {
            Some(j) => j.arr()?,
            None => Vec::new(),
        };
        if vals.len() != params.len() {
            return at.err(format!(
                "action {:?} takes {} parameters, {} given",
                self.p.actions[action as usize].name,
                params.len(),
                vals.len()
            ));
        }
        let mut out = Vec::new();
        for (v, (_, w)) in vals.iter().zip(params) {
            out.push((v.hexstr()? as u128 & mask(*w)) as Val);
        }
        Ok(out.into())
    }

    pub(super) fn table(&self, t: &J, node: &dyn Fn(Option<J>) -> R<Option<Node>>) -> R<TableDef> {
        let name = t.name()?.to_string();
        let id = t.get("id")?.u64()?;
        let ty = t
            .opt("type")
            .map(|x| x.str())
            .transpose()?
            .unwrap_or("simple");
        if !matches!(ty, "simple" | "indirect" | "indirect_ws") {
            return t.get("type")?.err(format!("unknown table type {ty:?}"));
        }
        let mut keys = Vec::new();
        for k in t.get("key")?.arr()? {
            let mj = k.get("match_type")?;
            let kind = match mj.str()? {
                "exact" => MatchKind::Exact,
                "lpm" => MatchKind::Lpm,
                "ternary" => MatchKind::Ternary,
                "range" => MatchKind::Range,
                "optional" => MatchKind::Optional,
                "valid" => MatchKind::Valid,
                other => return mj.err(format!("unknown match_type {other:?}")),
            };
            let target = k.get("target")?;
            let (src, width) = if kind == MatchKind::Valid {
                (KeySrc::Valid(HdrRef::Static(self.header(&target)?)), 1)
            } else {
                let (h, f) = target.pair()?;
                if f == "$valid$" {
                    let a = target.arr()?;
                    (KeySrc::Valid(HdrRef::Static(self.header(&a[0])?)), 1)
                } else {
                    let _ = h;
                    let fi = self.field(&target)?;
                    (
                        KeySrc::Field(FieldRef::Static(fi)),
                        self.p.fields[fi as usize].width,
                    )
                }
            };
            let static_mask = match k.opt("mask") {
                Some(m) => m.hexstr()? as u128 & mask(width),
                None => mask(width),
            };
            let kname = match k.opt("name") {
                Some(n) => n.str()?.to_string(),
                None => format!("{:?}", target.v),
            };
            keys.push(KeyField {
                name: kname,
                kind,
                src,
                width,
                static_mask,
            });
        }
        let mut actions = Vec::new();
        let ids = t.opt_arr("action_ids")?;
        if !ids.is_empty() {
            for a in &ids {
                actions.push(self.action_id(a)?);
            }
        } else {
            for a in t.opt_arr("actions")? {
                let n = a.str()?;
                match self.p.action_by_name.get(n) {
                    Some(&i) => actions.push(i),
                    None => return a.err(format!("unknown action {n:?}")),
                }
            }
        }
        let mut next_by_action: Vec<(u32, Option<Node>)> = Vec::new();
        let mut next_hit = None;
        let mut next_miss = None;
        if let Some(nt) = t.opt("next_tables") {
            let Value::Object(m) = nt.v else {
                return nt.err("expected an object");
            };
            for (k, v) in m {
                let vj = J {
                    v,
                    path: format!("{}.{}", nt.path, k),
                };
                let target = if v.is_null() {
                    None
                } else {
                    node(Some(vj.clone()))?
                };
                match k.as_str() {
                    "__HIT__" => next_hit = Some(target),
                    "__MISS__" => next_miss = Some(target),
                    an => {
                        let Some(a) = actions
                            .iter()
                            .copied()
                            .find(|&a| self.p.actions[a as usize].name == an)
                        else {
                            return vj.err(format!(
                                "next_tables names action {an:?} the table does not have"
                            ));
                        };
                        match next_by_action.iter_mut().find(|(x, _)| *x == a) {
                            Some(slot) => slot.1 = target,
                            None => next_by_action.push((a, target)),
                        }
                    }
                }
            }
        }
        let base_next = node(t.opt("base_default_next"))?;
        let mut default_entry = None;
        let mut default_const = false;
        // `default_action`: the older name (JSON of P4_14 compilers).
        if let Some(d) = t.opt("default_entry").or_else(|| t.opt("default_action")) {
            let aj = d.get("action_id")?;
            let a = self.action_id(&aj)?;
            if !actions.contains(&a) {
                return aj.err("default action is not one of the table's actions");
            }
            let data = self.action_data(d.opt("action_data"), a, &d)?;
            default_const = d.opt_bool("action_const", false)?;
            default_entry = Some(ActionEntry { action: a, data });
        }
        let const_entries = match t.opt("entries") {
            None => None,
            Some(es) => {
                let mut out = Vec::new();
                for e in es.arr()? {
                    let mk = e.get("match_key")?.arr()?;
                    if mk.len() != keys.len() {
                        return e.get("match_key")?.err(format!(
                            "{} key components, the table has {}",
                            mk.len(),
                            keys.len()
                        ));
                    }
                    let mut key = Vec::new();
                    for (m, kf) in mk.iter().zip(&keys) {
                        let mj = m.get("match_type")?;
                        let mv = match mj.str()? {
                            "exact" => MatchValue::Exact(m.get("key")?.hexstr()? as u128),
                            "valid" => MatchValue::Valid(m.get("key")?.bool()?),
                            "lpm" => MatchValue::Lpm(
                                m.get("key")?.hexstr()? as u128,
                                m.get("prefix_length")?.u64()? as u32,
                            ),
                            "ternary" => MatchValue::Ternary(
                                m.get("key")?.hexstr()? as u128,
                                m.get("mask")?.hexstr()? as u128,
                            ),
                            "optional" => {
                                MatchValue::Optional(Some(m.get("key")?.hexstr()? as u128))
                            }
                            "range" => MatchValue::Range(
                                m.get("start")?.hexstr()? as u128,
                                m.get("end")?.hexstr()? as u128,
                            ),
                            other => return mj.err(format!("unknown match_type {other:?}")),
                        };
                        let ok = matches!(
                            (kf.kind, &mv),
                            (MatchKind::Exact, MatchValue::Exact(_))
                                | (MatchKind::Valid, MatchValue::Valid(_))
                                | (MatchKind::Lpm, MatchValue::Lpm(..))
                                | (MatchKind::Ternary, MatchValue::Ternary(..))
                                | (MatchKind::Optional, MatchValue::Optional(_))
                                | (MatchKind::Optional, MatchValue::Ternary(..))
                                | (MatchKind::Range, MatchValue::Range(..))
                        );
                        if !ok {
                            return mj.err(format!(
                                "match_type does not fit the table key ({:?})",
                                kf.kind
                            ));
                        }
                        key.push(mv);
                    }
                    let ae = e.get("action_entry")?;
                    let aj = ae.get("action_id")?;
                    let a = self.action_id(&aj)?;
                    let data = self.action_data(ae.opt("action_data"), a, &ae)?;
                    let priority = match e.opt("priority") {
                        Some(p) => p.i64()? as i32,
                        None => 0,
                    };
                    out.push(ConstEntry {
                        key,
                        priority,
                        action: ActionEntry { action: a, data },
                    });
                }
                Some(out)
            }
        };
        let max_size = match t.opt("max_size") {
            Some(m) => m.u64()? as usize,
            None => 1024,
        };
        Ok(TableDef {
            name,
            id,
            keys,
            actions,
            next_by_action: next_by_action.into_boxed_slice(),
            fixed: None,
            base_next,
            next_hit,
            next_miss,
            default_entry,
            default_const,
            const_entries,
            with_counters: t.opt_bool("with_counters", false)?,
            direct_meter: None,
            max_size,
            profile: None,
        })
    }
}
