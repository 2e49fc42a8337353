//! The control API of [`Switch`]: tables, action profiles, externs,
//! replication, ports, names.

use super::*;
use crate::calc::{Algo, Crc, CrcParams};
use crate::phv::mask;
use crate::program::ActionEntry;

/// Keeps the jitter generators' streams apart from the program's `random`.
const JITTER_STREAM: u64 = 0x6a69_7474_6572; // "jitter"

impl Switch {
    // ================================================================ ports, replication

    fn port_mut(&mut self, port: u32) -> Result<&mut Port, ControlError> {
        self.ports
            .get_mut(port as usize)
            .ok_or(ControlError::OutOfRange(
                "port".into(),
                port as u64,
                MAX_PORTS as u64,
            ))
    }

    /// Sets a port's queue depth limit in packets (default 64).
    pub fn set_queue_depth(&mut self, port: u32, packets: usize) -> Result<(), ControlError> {
        self.port_mut(port)?.depth = packets;
        Ok(())
    }

    /// Gives a port `n` (1..=8) strict-priority queues, as simple_switch
    /// with `--priority-queues`: a packet goes to queue
    /// `min(standard_metadata.priority, n - 1)`, and the highest-numbered
    /// queue with a packet is served first. Each queue has the port's depth
    /// limit; `enq_qdepth` / `deq_qdepth` count the packet's own queue.
    /// Refused while packets are queued on the port.
    pub fn set_priority_queues(&mut self, port: u32, n: usize) -> Result<(), ControlError> {
        if !(1..=8).contains(&n) {
            return Err(ControlError::InvalidArgument(format!(
                "{n} priority queues (1..=8)"
            )));
        }
        let p = self.port_mut(port)?;
        if p.qs.iter().any(|q| !q.is_empty()) {
            return Err(ControlError::InvalidArgument(format!(
                "port {port} has queued packets"
            )));
        }
        p.qs = (0..n).map(|_| VecDeque::new()).collect();
        Ok(())
    }

    /// Sets a port's drain rate. Applies from the next dequeue on.
    pub fn set_port_rate(&mut self, port: u32, rate: Rate) -> Result<(), ControlError> {
        self.port_mut(port)?.rate = rate;
        Ok(())
    }

    /// Makes a port's capacity follow a mahimahi trace (`None`: back to its
    /// rate), the trace's time 0 being engine time `start_us`; the trace
    /// then overrides the port's rate. A dequeued frame waits for the
    /// opportunities that carry its bytes (1,500 per opportunity, shared by
    /// small frames, `crate::trace`) and leaves the engine when the last of
    /// them comes (plus the link delay): [`Frame::emit_us`]; the next
    /// frame is dequeued then.
    pub fn set_port_trace(
        &mut self,
        port: u32,
        trace: Option<std::sync::Arc<Trace>>,
        start_us: u64,
    ) -> Result<(), ControlError> {
        self.port_mut(port)?.trace = trace.map(|t| (TraceCursor::new(t, 1000), start_us));
        Ok(())
    }

    /// The trace a port follows, if any.
    pub fn port_trace(&self, port: u32) -> Option<&std::sync::Arc<Trace>> {
        self.ports
            .get(port as usize)
            .and_then(|p| p.trace.as_ref().map(|(c, _)| c.trace()))
    }

    /// Sets a port's link propagation delay in µs (0 removes it). A frame
    /// dequeued at `t_deq` then leaves the engine at `t_deq` + transmission
    /// time at the port's rate + `delay_us`; frames dequeued before the change
    /// keep their time, and a port's frames never overtake each other.
    pub fn set_link_delay(&mut self, port: u32, delay_us: u64) -> Result<(), ControlError> {
        self.port_mut(port)?.delay = delay_us;
        Ok(())
    }

    /// A port's link delay in µs (0: none).
    pub fn link_delay(&self, port: u32) -> u64 {
        self.ports.get(port as usize).map_or(0, |p| p.delay)
    }

    /// Sets a port's link jitter in µs (0 removes it): each frame dequeued
    /// from then on reaches the far end a uniform random 0..=`jitter_us`
    /// later than its delay alone would make it, but never before the frame
    /// ahead of it (a link does not reorder). The draws come from a
    /// generator seeded by the switch's seed and the port, restarted by
    /// each call, so a run repeats exactly. Random timing at a drop-tail
    /// bottleneck breaks the phase effects of a jitter-free one (docs/NET.md
    /// "Jitter").
    pub fn set_link_jitter(&mut self, port: u32, jitter_us: u64) -> Result<(), ControlError> {
        let seed = Rng::new(self.seed ^ (u64::from(port) << 48) ^ JITTER_STREAM).next_u64();
        let pt = self.port_mut(port)?;
        pt.jitter = jitter_us;
        pt.jitter_rng = Rng::new(seed);
        Ok(())
    }

    /// A port's link jitter in µs (0: none).
    pub fn link_jitter(&self, port: u32) -> u64 {
        self.ports.get(port as usize).map_or(0, |p| p.jitter)
    }

    /// Frames transmitted on a port's delayed link that have not reached
    /// its far end yet.
    pub fn in_flight(&self, port: u32) -> usize {
        self.ports.get(port as usize).map_or(0, |p| p.line.len())
    }

    /// Sets a port's MTU in bytes (0 = no limit, the default). Larger
    /// frames are dropped and counted in [`PortStats::mtu_drops`].
    pub fn set_port_mtu(&mut self, port: u32, mtu: usize) -> Result<(), ControlError> {
        self.port_mut(port)?.mtu = mtu;
        Ok(())
    }

    /// Packets waiting in a port's queue.
    pub fn queue_len(&self, port: u32) -> usize {
        self.ports
            .get(port as usize)
            .map_or(0, |p| p.qs.iter().map(|q| q.len()).sum())
    }

    /// A port's counters.
    pub fn port_stats(&self, port: u32) -> PortStats {
        self.ports
            .get(port as usize)
            .map_or(PortStats::default(), |p| p.stats)
    }

    /// Switch-wide counters.
    pub fn stats(&self) -> SwitchStats {
        self.stats
    }

    /// Creates or replaces multicast group `group` (non-zero).
    pub fn mc_group_set(&mut self, group: u32, replicas: Vec<Replica>) -> Result<(), ControlError> {
        if group == 0 {
            return Err(ControlError::InvalidArgument(
                "multicast group 0 is reserved".into(),
            ));
        }
        if let Some(r) = replicas.iter().find(|r| r.port as usize >= MAX_PORTS) {
            return Err(ControlError::OutOfRange(
                "port".into(),
                r.port as u64,
                MAX_PORTS as u64,
            ));
        }
        self.mc_groups.insert(group, replicas);
        Ok(())
    }

    /// Deletes a multicast group.
    pub fn mc_group_delete(&mut self, group: u32) -> Result<(), ControlError> {
        match self.mc_groups.remove(&group) {
            Some(_) => Ok(()),
            None => nf("multicast group", &group.to_string()),
        }
    }

    /// A multicast group's replicas.
    pub fn mc_group_get(&self, group: u32) -> Option<&[Replica]> {
        self.mc_groups.get(&group).map(|v| v.as_slice())
    }

    /// Creates or replaces clone session `id`.
    pub fn clone_session_set(&mut self, id: u32, s: CloneSession) -> Result<(), ControlError> {
        if let Some(r) = s.replicas.iter().find(|r| r.port as usize >= MAX_PORTS) {
            return Err(ControlError::OutOfRange(
                "port".into(),
                r.port as u64,
                MAX_PORTS as u64,
            ));
        }
        self.clone_sessions.insert(id, s);
        Ok(())
    }

    /// Deletes a clone session.
    pub fn clone_session_delete(&mut self, id: u32) -> Result<(), ControlError> {
        match self.clone_sessions.remove(&id) {
            Some(_) => Ok(()),
            None => nf("clone session", &id.to_string()),
        }
    }

    /// A clone session.
    pub fn clone_session_get(&self, id: u32) -> Option<&CloneSession> {
        self.clone_sessions.get(&id)
    }

    /// Digests produced since the last call.
    pub fn take_digests(&mut self) -> Vec<Digest> {
        std::mem::take(&mut self.st.digests)
    }

    /// Turns capture of `log_msg` output on or off (off by default: no cost).
    pub fn set_log_capture(&mut self, on: bool) {
        self.st.logs = if on { Some(Vec::new()) } else { None };
    }

    /// `log_msg` lines captured since the last call.
    pub fn take_logs(&mut self) -> Vec<String> {
        match &mut self.st.logs {
            Some(l) => std::mem::take(l),
            None => Vec::new(),
        }
    }

    // ================================================================ names

    /// Names of all tables (including compiler-made `tbl_*` ones).
    pub fn table_names(&self) -> Vec<String> {
        self.prog.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// Names of all actions.
    pub fn action_names(&self) -> Vec<String> {
        self.prog.actions.iter().map(|a| a.name.clone()).collect()
    }

    /// Names of all counter arrays (direct ones included).
    pub fn counter_names(&self) -> Vec<String> {
        self.prog.counters.iter().map(|a| a.name.clone()).collect()
    }

    /// Names of all meter arrays (direct ones included).
    pub fn meter_names(&self) -> Vec<String> {
        self.prog.meters.iter().map(|a| a.name.clone()).collect()
    }

    /// Names of all register arrays.
    pub fn register_names(&self) -> Vec<String> {
        self.prog.registers.iter().map(|a| a.name.clone()).collect()
    }

    /// Names of all parser value sets.
    pub fn value_set_names(&self) -> Vec<String> {
        self.prog.vsets.iter().map(|a| a.name.clone()).collect()
    }

    /// Description of an action.
    pub fn action_info(&self, name: &str) -> Result<ActionInfo, ControlError> {
        let Some(&a) = self.prog.action_by_name.get(name) else {
            return nf("action", name);
        };
        let a = &self.prog.actions[a as usize];
        Ok(ActionInfo {
            name: a.name.clone(),
            id: a.id,
            params: a.params.clone(),
        })
    }

    fn table_idx(&self, name: &str) -> Result<usize, ControlError> {
        match self.prog.table_by_name.get(name) {
            Some(&t) => Ok(t as usize),
            None => nf("table", name),
        }
    }

    /// Description of a table.
    pub fn table_info(&self, table: &str) -> Result<TableInfo, ControlError> {
        let ti = self.table_idx(table)?;
        let t = &self.prog.tables[ti];
        Ok(TableInfo {
            name: t.name.clone(),
            id: t.id,
            key: t
                .keys
                .iter()
                .map(|k| KeyInfo {
                    name: k.name.clone(),
                    kind: k.kind,
                    width: k.width,
                })
                .collect(),
            actions: t
                .actions
                .iter()
                .map(|&a| self.prog.actions[a as usize].name.clone())
                .collect(),
            max_size: t.max_size,
            uses_priority: self.st.tables[ti].mt.uses_priority(),
            const_entries: t.const_entries.is_some(),
            const_default: t.default_const,
            with_counters: t.with_counters,
            action_profile: t
                .profile
                .map(|p| self.prog.profiles[p as usize].name.clone()),
            direct_meter: t
                .direct_meter
                .map(|m| self.prog.meters[m as usize].name.clone()),
            entries: self.st.tables[ti].mt.count,
        })
    }

    // ================================================================ tables

    fn action_entry(
        &self,
        ti: usize,
        action: &str,
        params: &[u128],
    ) -> Result<ActionEntry, ControlError> {
        let t = &self.prog.tables[ti];
        self.make_action(&t.actions, &t.name, action, params)
    }

    fn make_action(
        &self,
        allowed: &[u32],
        owner: &str,
        action: &str,
        params: &[u128],
    ) -> Result<ActionEntry, ControlError> {
        let Some(a) = allowed
            .iter()
            .copied()
            .find(|&a| self.prog.actions[a as usize].name == action)
        else {
            return Err(ControlError::InvalidArgument(format!(
                "{owner:?} has no action {action:?}"
            )));
        };
        let ps = &self.prog.actions[a as usize].params;
        if ps.len() != params.len() {
            return Err(ControlError::InvalidArgument(format!(
                "action {action:?} takes {} parameters, {} given",
                ps.len(),
                params.len()
            )));
        }
        for ((n, w), v) in ps.iter().zip(params) {
            if v & !mask(*w) != 0 {
                return Err(ControlError::InvalidArgument(format!(
                    "parameter {n:?} of {action:?}: value {v:#x} wider than {w} bits"
                )));
            }
        }
        Ok(ActionEntry {
            action: a,
            data: params.iter().map(|&v| v as Val).collect(),
        })
    }

    fn mutable(&self, ti: usize) -> Result<(), ControlError> {
        let t = &self.prog.tables[ti];
        if t.const_entries.is_some() {
            return Err(ControlError::Immutable(format!(
                "table {:?} has const entries",
                t.name
            )));
        }
        Ok(())
    }

    fn direct_table(&self, ti: usize) -> Result<(), ControlError> {
        if self.prog.tables[ti].profile.is_some() {
            return Err(ControlError::InvalidArgument(format!(
                "table {:?} uses an action profile: give a member or group",
                self.prog.tables[ti].name
            )));
        }
        Ok(())
    }

    /// Adjusts the reference count of the member / group an entry uses.
    fn adjust_refs(&mut self, ti: usize, r: &ActionRef, up: bool) {
        let Some(pi) = self.prog.tables[ti].profile else {
            return;
        };
        let ps = &mut self.st.profiles[pi as usize];
        let refs = match r {
            ActionRef::Member(m) => ps
                .members
                .get_mut(*m as usize)
                .and_then(|x| x.as_mut())
                .map(|m| &mut m.refs),
            ActionRef::Group(g) => ps
                .groups
                .get_mut(*g as usize)
                .and_then(|x| x.as_mut())
                .map(|g| &mut g.refs),
            ActionRef::Direct(_) => None,
        };
        if let Some(c) = refs {
            *c = if up { *c + 1 } else { c.saturating_sub(1) };
        }
    }

    /// Checks that a member / group exists in the table's profile.
    fn indirect_ref(&self, ti: usize, r: ActionRef) -> Result<ActionRef, ControlError> {
        let t = &self.prog.tables[ti];
        let Some(pi) = t.profile else {
            return Err(ControlError::InvalidArgument(format!(
                "table {:?} has no action profile",
                t.name
            )));
        };
        let pd = &self.prog.profiles[pi as usize];
        let ps = &self.st.profiles[pi as usize];
        let (ok, h) = match r {
            ActionRef::Member(m) => (ps.members.get(m as usize).is_some_and(|x| x.is_some()), m),
            ActionRef::Group(g) => {
                if pd.selector.is_none() {
                    return Err(ControlError::InvalidArgument(format!(
                        "action profile {:?} has no selector (no groups)",
                        pd.name
                    )));
                }
                (ps.groups.get(g as usize).is_some_and(|x| x.is_some()), g)
            }
            ActionRef::Direct(_) => (true, 0),
        };
        if !ok {
            return Err(ControlError::BadHandle(pd.name.clone(), h));
        }
        Ok(r)
    }

    fn add_entry(
        &mut self,
        table: &str,
        ti: usize,
        key: Vec<MatchValue>,
        r: ActionRef,
        priority: i32,
    ) -> Result<u32, ControlError> {
        let h = self.st.tables[ti]
            .mt
            .add(key, priority, r.clone())
            .map_err(|e| match e {
                ControlError::Full(_) => ControlError::Full(table.to_string()),
                e => e,
            })?;
        self.adjust_refs(ti, &r, true);
        Ok(h)
    }

    fn modify_entry(
        &mut self,
        table: &str,
        ti: usize,
        handle: u32,
        r: ActionRef,
    ) -> Result<(), ControlError> {
        let Some(e) = self.st.tables[ti].mt.get_mut(handle) else {
            return Err(ControlError::BadHandle(table.to_string(), handle));
        };
        let old = std::mem::replace(&mut e.action, r.clone());
        self.adjust_refs(ti, &old, false);
        self.adjust_refs(ti, &r, true);
        Ok(())
    }

    /// Adds an entry to an indirect table, running action profile `member`.
    pub fn table_add_member(
        &mut self,
        table: &str,
        key: Vec<MatchValue>,
        member: u32,
        priority: i32,
    ) -> Result<u32, ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        let r = self.indirect_ref(ti, ActionRef::Member(member))?;
        self.add_entry(table, ti, key, r, priority)
    }

    /// Adds an entry to an indirect table with a selector, running `group`.
    pub fn table_add_group(
        &mut self,
        table: &str,
        key: Vec<MatchValue>,
        group: u32,
        priority: i32,
    ) -> Result<u32, ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        let r = self.indirect_ref(ti, ActionRef::Group(group))?;
        self.add_entry(table, ti, key, r, priority)
    }

    /// Points an indirect entry at another member.
    pub fn table_modify_member(
        &mut self,
        table: &str,
        handle: u32,
        member: u32,
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        let r = self.indirect_ref(ti, ActionRef::Member(member))?;
        self.modify_entry(table, ti, handle, r)
    }

    /// Points an indirect entry at another group.
    pub fn table_modify_group(
        &mut self,
        table: &str,
        handle: u32,
        group: u32,
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        let r = self.indirect_ref(ti, ActionRef::Group(group))?;
        self.modify_entry(table, ti, handle, r)
    }

    /// Sets an indirect table's default entry to a member.
    pub fn table_set_default_member(
        &mut self,
        table: &str,
        member: u32,
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        if self.prog.tables[ti].default_const {
            return Err(ControlError::Immutable(format!(
                "table {table:?} has a const default action"
            )));
        }
        let r = self.indirect_ref(ti, ActionRef::Member(member))?;
        if let Some(old) = self.st.tables[ti].default.replace(r.clone()) {
            self.adjust_refs(ti, &old, false);
        }
        self.adjust_refs(ti, &r, true);
        Ok(())
    }

    // ================================================================ action profiles

    fn profile_idx(&self, name: &str) -> Result<usize, ControlError> {
        match self.prog.profiles.iter().position(|p| p.name == name) {
            Some(i) => Ok(i),
            None => nf("action profile", name),
        }
    }

    /// Names of all action profiles / selectors.
    pub fn action_profile_names(&self) -> Vec<String> {
        self.prog.profiles.iter().map(|p| p.name.clone()).collect()
    }

    /// Whether an action profile has a selector (supports groups).
    pub fn action_profile_has_selector(&self, profile: &str) -> Result<bool, ControlError> {
        Ok(self.prog.profiles[self.profile_idx(profile)?]
            .selector
            .is_some())
    }

    /// Adds a member (an action with its parameters); returns its handle.
    pub fn ap_member_add(
        &mut self,
        profile: &str,
        action: &str,
        params: &[u128],
    ) -> Result<u32, ControlError> {
        let pi = self.profile_idx(profile)?;
        let pd = &self.prog.profiles[pi];
        let ae = self.make_action(&pd.actions, &pd.name, action, params)?;
        let max = pd.max_size;
        let ps = &mut self.st.profiles[pi];
        if ps.members.iter().filter(|m| m.is_some()).count() >= max {
            return Err(ControlError::Full(profile.to_string()));
        }
        let m = exec::Member {
            action: ae,
            refs: 0,
        };
        match ps.members.iter().position(|m| m.is_none()) {
            Some(i) => {
                ps.members[i] = Some(m);
                Ok(i as u32)
            }
            None => {
                ps.members.push(Some(m));
                Ok(ps.members.len() as u32 - 1)
            }
        }
    }

    /// Changes a member's action.
    pub fn ap_member_modify(
        &mut self,
        profile: &str,
        member: u32,
        action: &str,
        params: &[u128],
    ) -> Result<(), ControlError> {
        let pi = self.profile_idx(profile)?;
        let pd = &self.prog.profiles[pi];
        let ae = self.make_action(&pd.actions, &pd.name, action, params)?;
        match self.st.profiles[pi]
            .members
            .get_mut(member as usize)
            .and_then(|m| m.as_mut())
        {
            Some(m) => {
                m.action = ae;
                Ok(())
            }
            None => Err(ControlError::BadHandle(profile.to_string(), member)),
        }
    }

    /// Deletes a member (refused while entries or groups use it).
    pub fn ap_member_delete(&mut self, profile: &str, member: u32) -> Result<(), ControlError> {
        let pi = self.profile_idx(profile)?;
        match self.st.profiles[pi].members.get_mut(member as usize) {
            Some(slot @ Some(_)) => {
                if slot.as_ref().is_some_and(|m| m.refs > 0) {
                    return Err(ControlError::InvalidArgument(format!(
                        "member {member} of {profile:?} is in use"
                    )));
                }
                *slot = None;
                Ok(())
            }
            _ => Err(ControlError::BadHandle(profile.to_string(), member)),
        }
    }

    /// A member's action and parameters.
    pub fn ap_member_get(
        &self,
        profile: &str,
        member: u32,
    ) -> Result<(String, Vec<u128>), ControlError> {
        let pi = self.profile_idx(profile)?;
        match self.st.profiles[pi]
            .members
            .get(member as usize)
            .and_then(|m| m.as_ref())
        {
            Some(m) => Ok((
                self.prog.actions[m.action.action as usize].name.clone(),
                m.action.data.iter().map(|&v| v as u128).collect(),
            )),
            None => Err(ControlError::BadHandle(profile.to_string(), member)),
        }
    }

    /// Handles of all members.
    pub fn ap_members(&self, profile: &str) -> Result<Vec<u32>, ControlError> {
        let pi = self.profile_idx(profile)?;
        Ok(self.st.profiles[pi]
            .members
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.as_ref().map(|_| i as u32))
            .collect())
    }

    /// Creates an empty group (profiles with a selector); returns its handle.
    pub fn ap_group_create(&mut self, profile: &str) -> Result<u32, ControlError> {
        let pi = self.profile_idx(profile)?;
        if self.prog.profiles[pi].selector.is_none() {
            return Err(ControlError::InvalidArgument(format!(
                "{profile:?} has no selector"
            )));
        }
        let gs = &mut self.st.profiles[pi].groups;
        match gs.iter().position(|g| g.is_none()) {
            Some(i) => {
                gs[i] = Some(exec::Group::default());
                Ok(i as u32)
            }
            None => {
                gs.push(Some(exec::Group::default()));
                Ok(gs.len() as u32 - 1)
            }
        }
    }

    /// Deletes a group (refused while entries use it).
    pub fn ap_group_delete(&mut self, profile: &str, group: u32) -> Result<(), ControlError> {
        let pi = self.profile_idx(profile)?;
        let Some(g) = self.st.profiles[pi]
            .groups
            .get(group as usize)
            .and_then(|g| g.clone())
        else {
            return Err(ControlError::BadHandle(profile.to_string(), group));
        };
        if g.refs > 0 {
            return Err(ControlError::InvalidArgument(format!(
                "group {group} of {profile:?} is in use"
            )));
        }
        for m in g.members {
            if let Some(Some(m)) = self.st.profiles[pi].members.get_mut(m as usize) {
                m.refs = m.refs.saturating_sub(1);
            }
        }
        self.st.profiles[pi].groups[group as usize] = None;
        Ok(())
    }

    /// Replaces a group's members (selection uses this order).
    pub fn ap_group_set_members(
        &mut self,
        profile: &str,
        group: u32,
        members: &[u32],
    ) -> Result<(), ControlError> {
        let pi = self.profile_idx(profile)?;
        let ps = &mut self.st.profiles[pi];
        if ps
            .groups
            .get(group as usize)
            .and_then(|g| g.as_ref())
            .is_none()
        {
            return Err(ControlError::BadHandle(profile.to_string(), group));
        }
        if let Some(&m) = members.iter().find(|&&m| {
            ps.members
                .get(m as usize)
                .and_then(|x| x.as_ref())
                .is_none()
        }) {
            return Err(ControlError::BadHandle(profile.to_string(), m));
        }
        let old = match ps.groups[group as usize].as_mut() {
            Some(g) => std::mem::replace(&mut g.members, members.to_vec()),
            None => Vec::new(),
        };
        for m in old {
            if let Some(Some(m)) = ps.members.get_mut(m as usize) {
                m.refs = m.refs.saturating_sub(1);
            }
        }
        for &m in members {
            if let Some(Some(m)) = ps.members.get_mut(m as usize) {
                m.refs += 1;
            }
        }
        Ok(())
    }

    /// A group's members.
    pub fn ap_group_members(&self, profile: &str, group: u32) -> Result<Vec<u32>, ControlError> {
        let pi = self.profile_idx(profile)?;
        match self.st.profiles[pi]
            .groups
            .get(group as usize)
            .and_then(|g| g.as_ref())
        {
            Some(g) => Ok(g.members.clone()),
            None => Err(ControlError::BadHandle(profile.to_string(), group)),
        }
    }

    /// Adds an entry; returns its handle. `priority` follows BMv2 (lower
    /// wins) and is ignored by tables without priorities.
    pub fn table_add(
        &mut self,
        table: &str,
        key: Vec<MatchValue>,
        action: &str,
        params: &[u128],
        priority: i32,
    ) -> Result<u32, ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        self.direct_table(ti)?;
        let ae = self.action_entry(ti, action, params)?;
        self.add_entry(table, ti, key, ActionRef::Direct(ae), priority)
    }

    /// Changes an entry's action.
    pub fn table_modify(
        &mut self,
        table: &str,
        handle: u32,
        action: &str,
        params: &[u128],
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        self.direct_table(ti)?;
        let ae = self.action_entry(ti, action, params)?;
        self.modify_entry(table, ti, handle, ActionRef::Direct(ae))
    }

    /// Deletes an entry.
    pub fn table_delete(&mut self, table: &str, handle: u32) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        match self.st.tables[ti].mt.delete(handle) {
            Some(e) => {
                self.adjust_refs(ti, &e.action, false);
                Ok(())
            }
            None => Err(ControlError::BadHandle(table.to_string(), handle)),
        }
    }

    /// The handle of the entry with this key (and priority), if any.
    pub fn table_find(
        &self,
        table: &str,
        key: &[MatchValue],
        priority: i32,
    ) -> Result<Option<u32>, ControlError> {
        let ti = self.table_idx(table)?;
        let pr = if self.st.tables[ti].mt.uses_priority() {
            priority
        } else {
            0
        };
        self.st.tables[ti].mt.find(key, pr)
    }

    fn entry_info(&self, ti: usize, h: u32) -> Option<EntryInfo> {
        let e = self.st.tables[ti].mt.get(h)?;
        let (action, params, member, group) = match &e.action {
            ActionRef::Direct(a) => (
                self.prog.actions[a.action as usize].name.clone(),
                a.data.iter().map(|&v| v as u128).collect(),
                None,
                None,
            ),
            ActionRef::Member(m) => (String::new(), Vec::new(), Some(*m), None),
            ActionRef::Group(g) => (String::new(), Vec::new(), None, Some(*g)),
        };
        Some(EntryInfo {
            handle: h,
            key: e.key.clone(),
            priority: e.priority,
            action,
            params,
            packets: e.packets,
            bytes: e.bytes,
            last_hit_us: e.last_hit_us,
            member,
            group,
        })
    }

    /// One entry.
    pub fn table_entry(&self, table: &str, handle: u32) -> Result<EntryInfo, ControlError> {
        let ti = self.table_idx(table)?;
        self.entry_info(ti, handle)
            .ok_or(ControlError::BadHandle(table.to_string(), handle))
    }

    /// All entries, in handle order.
    pub fn table_entries(&self, table: &str) -> Result<Vec<EntryInfo>, ControlError> {
        let ti = self.table_idx(table)?;
        Ok(self.st.tables[ti]
            .mt
            .handles()
            .into_iter()
            .filter_map(|h| self.entry_info(ti, h))
            .collect())
    }

    /// Removes all entries (refused for tables with const entries).
    pub fn table_clear(&mut self, table: &str) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        self.mutable(ti)?;
        for h in self.st.tables[ti].mt.handles() {
            if let Some(e) = self.st.tables[ti].mt.delete(h) {
                self.adjust_refs(ti, &e.action, false);
            }
        }
        self.st.tables[ti].mt.clear();
        Ok(())
    }

    /// Sets the default (miss) action.
    pub fn table_set_default(
        &mut self,
        table: &str,
        action: &str,
        params: &[u128],
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        if self.prog.tables[ti].default_const {
            return Err(ControlError::Immutable(format!(
                "table {table:?} has a const default action"
            )));
        }
        let ae = self.action_entry(ti, action, params)?;
        if let Some(old) = self.st.tables[ti].default.replace(ActionRef::Direct(ae)) {
            self.adjust_refs(ti, &old, false);
        }
        Ok(())
    }

    /// Restores the program's default action.
    pub fn table_reset_default(&mut self, table: &str) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        let d = self.prog.tables[ti]
            .default_entry
            .clone()
            .map(ActionRef::Direct);
        if let Some(old) = std::mem::replace(&mut self.st.tables[ti].default, d) {
            self.adjust_refs(ti, &old, false);
        }
        Ok(())
    }

    /// The current default action and its parameters (for an indirect
    /// default: the member's action).
    pub fn table_get_default(
        &self,
        table: &str,
    ) -> Result<Option<(String, Vec<u128>)>, ControlError> {
        let ti = self.table_idx(table)?;
        let ae = match &self.st.tables[ti].default {
            Some(ActionRef::Direct(d)) => Some(d),
            Some(ActionRef::Member(m)) => self.prog.tables[ti].profile.and_then(|pi| {
                self.st.profiles[pi as usize].members[*m as usize]
                    .as_ref()
                    .map(|m| &m.action)
            }),
            _ => None,
        };
        Ok(ae.map(|d| {
            (
                self.prog.actions[d.action as usize].name.clone(),
                d.data.iter().map(|&v| v as u128).collect(),
            )
        }))
    }

    /// Direct counter of an entry: (packets, bytes).
    pub fn table_entry_counter(
        &self,
        table: &str,
        handle: u32,
    ) -> Result<(u64, u64), ControlError> {
        let e = self.table_entry(table, handle)?;
        Ok((e.packets, e.bytes))
    }

    /// Sets an entry's direct counter.
    pub fn table_set_entry_counter(
        &mut self,
        table: &str,
        handle: u32,
        packets: u64,
        bytes: u64,
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        match self.st.tables[ti].mt.get_mut(handle) {
            Some(e) => {
                e.packets = packets;
                e.bytes = bytes;
                Ok(())
            }
            None => Err(ControlError::BadHandle(table.to_string(), handle)),
        }
    }

    /// Configures an entry's direct meter: `[(cir, cburst), (pir, pburst)]`
    /// in units (bytes or packets, per the meter) per second and units.
    pub fn table_set_entry_meter(
        &mut self,
        table: &str,
        handle: u32,
        rates: [(u64, u64); 2],
    ) -> Result<(), ControlError> {
        let ti = self.table_idx(table)?;
        if self.prog.tables[ti].direct_meter.is_none() {
            return Err(ControlError::InvalidArgument(format!(
                "table {table:?} has no direct meter"
            )));
        }
        check_rates(&rates)?;
        let now = self.now;
        match self.st.tables[ti].mt.get_mut(handle) {
            Some(e) => {
                e.meter.set_rates(rates, now);
                Ok(())
            }
            None => Err(ControlError::BadHandle(table.to_string(), handle)),
        }
    }

    // ================================================================ externs

    fn counter_idx(&self, name: &str) -> Result<usize, ControlError> {
        match self.prog.counters.iter().position(|c| c.name == name) {
            Some(i) => {
                if self.prog.counters[i].direct_table.is_some() {
                    return Err(ControlError::InvalidArgument(format!(
                        "{name:?} is a direct counter: use table_entry_counter"
                    )));
                }
                Ok(i)
            }
            None => nf("counter", name),
        }
    }

    /// Reads counter `name[index]`: (packets, bytes).
    pub fn counter_read(&self, name: &str, index: usize) -> Result<(u64, u64), ControlError> {
        let c = self.counter_idx(name)?;
        self.st.counters[c]
            .get(index)
            .copied()
            .ok_or(ControlError::OutOfRange(
                name.into(),
                index as u64,
                self.prog.counters[c].size as u64,
            ))
    }

    /// Writes counter `name[index]`.
    pub fn counter_write(
        &mut self,
        name: &str,
        index: usize,
        packets: u64,
        bytes: u64,
    ) -> Result<(), ControlError> {
        let c = self.counter_idx(name)?;
        let size = self.prog.counters[c].size as u64;
        match self.st.counters[c].get_mut(index) {
            Some(e) => {
                *e = (packets, bytes);
                Ok(())
            }
            None => Err(ControlError::OutOfRange(name.into(), index as u64, size)),
        }
    }

    /// Zeroes a whole counter array.
    pub fn counter_reset(&mut self, name: &str) -> Result<(), ControlError> {
        let c = self.counter_idx(name)?;
        self.st.counters[c].iter_mut().for_each(|e| *e = (0, 0));
        Ok(())
    }

    /// Size of a counter array.
    pub fn counter_size(&self, name: &str) -> Result<usize, ControlError> {
        Ok(self.prog.counters[self.counter_idx(name)?].size)
    }

    fn register_idx(&self, name: &str) -> Result<usize, ControlError> {
        match self.prog.registers.iter().position(|c| c.name == name) {
            Some(i) => Ok(i),
            None => nf("register", name),
        }
    }

    /// Reads register `name[index]`.
    pub fn register_read(&self, name: &str, index: usize) -> Result<u128, ControlError> {
        let r = self.register_idx(name)?;
        self.st.registers[r]
            .get(index)
            .copied()
            .ok_or(ControlError::OutOfRange(
                name.into(),
                index as u64,
                self.prog.registers[r].size as u64,
            ))
    }

    /// Writes register `name[index]` (value must fit the register width).
    pub fn register_write(
        &mut self,
        name: &str,
        index: usize,
        value: u128,
    ) -> Result<(), ControlError> {
        let r = self.register_idx(name)?;
        let def = &self.prog.registers[r];
        if value & !mask(def.width) != 0 {
            return Err(ControlError::InvalidArgument(format!(
                "value {value:#x} wider than register {name:?} ({} bits)",
                def.width
            )));
        }
        let size = def.size as u64;
        match self.st.registers[r].get_mut(index) {
            Some(e) => {
                *e = value;
                Ok(())
            }
            None => Err(ControlError::OutOfRange(name.into(), index as u64, size)),
        }
    }

    /// Zeroes a register array.
    pub fn register_reset(&mut self, name: &str) -> Result<(), ControlError> {
        let r = self.register_idx(name)?;
        self.st.registers[r].iter_mut().for_each(|e| *e = 0);
        Ok(())
    }

    /// Size and width of a register array.
    pub fn register_shape(&self, name: &str) -> Result<(usize, u32), ControlError> {
        let r = &self.prog.registers[self.register_idx(name)?];
        Ok((r.size, r.width))
    }

    /// Configures meter `name[index]`: `[(cir, cburst), (pir, pburst)]` in
    /// units per second and units (bytes or packets, per the meter type).
    pub fn meter_set_rates(
        &mut self,
        name: &str,
        index: usize,
        rates: [(u64, u64); 2],
    ) -> Result<(), ControlError> {
        let Some(m) = self.prog.meters.iter().position(|c| c.name == name) else {
            return nf("meter", name);
        };
        if self.prog.meters[m].direct_table.is_some() {
            return Err(ControlError::InvalidArgument(format!(
                "{name:?} is a direct meter: use table_set_entry_meter"
            )));
        }
        check_rates(&rates)?;
        let size = self.prog.meters[m].size as u64;
        let now = self.now;
        match self.st.meters[m].get_mut(index) {
            Some(ms) => {
                ms.set_rates(rates, now);
                Ok(())
            }
            None => Err(ControlError::OutOfRange(name.into(), index as u64, size)),
        }
    }

    /// Unconfigures meter `name[index]` (every packet green again).
    pub fn meter_reset(&mut self, name: &str, index: usize) -> Result<(), ControlError> {
        let Some(m) = self.prog.meters.iter().position(|c| c.name == name) else {
            return nf("meter", name);
        };
        let size = self.st.meters[m].len() as u64;
        match self.st.meters[m].get_mut(index) {
            Some(ms) => {
                ms.reset();
                Ok(())
            }
            None => Err(ControlError::OutOfRange(name.into(), index as u64, size)),
        }
    }

    /// Current rates of meter `name[index]` (`None` = unconfigured).
    pub fn meter_get_rates(
        &self,
        name: &str,
        index: usize,
    ) -> Result<Option<[(u64, u64); 2]>, ControlError> {
        let Some(m) = self.prog.meters.iter().position(|c| c.name == name) else {
            return nf("meter", name);
        };
        match self.st.meters[m].get(index) {
            Some(ms) => Ok(ms.rates),
            None => Err(ControlError::OutOfRange(
                name.into(),
                index as u64,
                self.st.meters[m].len() as u64,
            )),
        }
    }

    fn vset_idx(&self, name: &str) -> Result<usize, ControlError> {
        match self.prog.vsets.iter().position(|c| c.name == name) {
            Some(i) => Ok(i),
            None => nf("parser value set", name),
        }
    }

    /// Adds a value to a parser value set (idempotent).
    pub fn value_set_add(&mut self, name: &str, value: u128) -> Result<(), ControlError> {
        let v = self.vset_idx(name)?;
        let w = self.prog.vsets[v].width;
        if value & !mask(w) != 0 {
            return Err(ControlError::InvalidArgument(format!(
                "value {value:#x} wider than {w} bits"
            )));
        }
        if !self.st.vsets[v].contains(&value) {
            self.st.vsets[v].push(value);
        }
        Ok(())
    }

    /// Removes a value from a parser value set.
    pub fn value_set_remove(&mut self, name: &str, value: u128) -> Result<(), ControlError> {
        let v = self.vset_idx(name)?;
        let before = self.st.vsets[v].len();
        self.st.vsets[v].retain(|&x| x != value);
        if self.st.vsets[v].len() == before {
            return Err(ControlError::NotFound(
                "value in value set",
                format!("{name}:{value:#x}"),
            ));
        }
        Ok(())
    }

    /// Values of a parser value set.
    pub fn value_set_values(&self, name: &str) -> Result<Vec<u128>, ControlError> {
        Ok(self.st.vsets[self.vset_idx(name)?].clone())
    }

    /// Changes the parameters of a `crc16_custom` / `crc32_custom`
    /// calculation (by calculation name).
    pub fn set_crc_params(
        &mut self,
        calculation: &str,
        params: CrcParams,
    ) -> Result<(), ControlError> {
        let Some(&c) = self.prog.calc_by_name.get(calculation) else {
            return nf("calculation", calculation);
        };
        if !matches!(self.st.calc_algos[c as usize], Algo::Crc(_)) {
            return Err(ControlError::InvalidArgument(format!(
                "{calculation:?} is not a CRC"
            )));
        }
        if !(8..=32).contains(&params.width) {
            return Err(ControlError::InvalidArgument(
                "CRC width must be 8..=32".into(),
            ));
        }
        self.st.calc_algos[c as usize] = Algo::Crc(Crc::new(params));
        Ok(())
    }
}

fn check_rates(r: &[(u64, u64); 2]) -> Result<(), ControlError> {
    if r[0].0 > r[1].0 {
        return Err(ControlError::InvalidArgument(
            "committed rate above peak rate".into(),
        ));
    }
    Ok(())
}
