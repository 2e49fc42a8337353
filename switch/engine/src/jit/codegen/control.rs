//! The ingress and egress control graphs: conditions, tables, actions.

use super::*;

impl<'ctx, 'a> Gen<'ctx, 'a> {
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

    fn goto(&self, fr: &Frame<'ctx>, n: Option<Node>) -> Result<(), String> {
        let target = n.map_or(fr.end, |n| fr.blocks[&n]);
        self.b.build_unconditional_branch(target).map_err(err)?;
        Ok(())
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
        let code = self.call_int(self.h_select, &args, "next")?;
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
        self.interpreted_action(fr, a, SELECTED, after)?;
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

    /// Runs action `a` (an `i32`) through the interpreter with the data of
    /// `site`, then goes on to `then`, or to the end when it ran `exit`.
    fn interpreted_action(
        &self,
        fr: &Frame<'ctx>,
        a: IntValue<'ctx>,
        site: u32,
        then: BasicBlock<'ctx>,
    ) -> Result<(), String> {
        let args = [fr.env.into(), a.into(), self.i32(site).into()];
        let exited = self.call_int(self.h_action, &args, "exited")?;
        let stop = self
            .b
            .build_int_compare(IntPredicate::NE, exited, self.i32(0), "stop")
            .map_err(err)?;
        self.b
            .build_conditional_branch(stop, fr.end, then)
            .map_err(err)?;
        Ok(())
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
            let go_on = self
                .ctx
                .append_basic_block(self.current_function()?, "after_action");
            self.interpreted_action(fr, self.i32(a), site, go_on)?;
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
}

/// The nodes a table can go on to.
fn table_successors(p: &Program, t: u32) -> Vec<Node> {
    let t = &p.tables[t as usize];
    let mut out: Vec<Node> = [t.next_hit.flatten(), t.next_miss.flatten(), t.base_next]
        .into_iter()
        .flatten()
        .chain(t.next_by_action.iter().filter_map(|&(_, n)| n))
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
