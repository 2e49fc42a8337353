//! Match units: match keys, entries and the lookup structures.
//!
//! The lookup structure is chosen from the key's match kinds and is separate
//! from entry storage (a slab indexed by handle):
//!
//! * only `exact` / `valid` components: one hash map;
//! * one `lpm` component, the rest exact: one hash map per prefix length in
//!   use, probed longest first (cost grows with the number of distinct prefix
//!   lengths, not with the number of entries);
//! * anything with `ternary`, `range`, `optional` (or several `lpm`):
//!   tuple-space search. Entries are grouped by their mask vector; each group
//!   is a hash map from masked key to the entries with that key, ordered by
//!   priority. Groups are probed in order of the best priority they hold, and
//!   the search stops as soon as no remaining group can beat the best match
//!   found. `range` components are wildcards in the hash key and checked on the
//!   (few) entries of the probed bucket.
//!
//! Priorities follow BMv2: a numerically **lower** priority wins. Ties go to
//! the entry added first (lower handle).

use crate::error::ControlError;
use crate::phv::mask;
use crate::program::{ActionRef, KeyField, MatchKind};
use rustc_hash::FxHashMap;

/// One component of an entry's match key, as the control plane gives it.
/// Values are bit patterns of the key field's width.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MatchValue {
    /// `exact`: the value.
    Exact(u128),
    /// `lpm`: value and prefix length in bits.
    Lpm(u128, u32),
    /// `ternary`: value and mask.
    Ternary(u128, u128),
    /// `range`: inclusive low and high bounds.
    Range(u128, u128),
    /// `optional`: a value, or `None` for a wildcard.
    Optional(Option<u128>),
    /// `valid`: whether the header must be valid.
    Valid(bool),
}

/// Meter state (two-rate three-color marker, RFC 2698, color-blind).
#[derive(Debug, Clone, Default)]
pub struct MeterState {
    /// Committed rate in units (bytes or packets) per second; `None` = not
    /// configured (every packet is green).
    pub rates: Option<[(u64, u64); 2]>,
    /// Committed / peak buckets in micro-units.
    tc: u128,
    tp: u128,
    last_us: u64,
}

/// Meter colors as BMv2 writes them.
pub const GREEN: u128 = 0;
/// Yellow.
pub const YELLOW: u128 = 1;
/// Red.
pub const RED: u128 = 2;

impl MeterState {
    /// Sets `[(cir, cburst), (pir, pburst)]` (units/s, units) and fills the
    /// buckets.
    pub fn set_rates(&mut self, rates: [(u64, u64); 2], now_us: u64) {
        self.rates = Some(rates);
        self.tc = rates[0].1 as u128 * 1_000_000;
        self.tp = rates[1].1 as u128 * 1_000_000;
        self.last_us = now_us;
    }

    /// Unconfigures the meter.
    pub fn reset(&mut self) {
        *self = MeterState::default();
    }

    /// Marks a packet of `units` (bytes or 1) arriving at `now_us`.
    pub fn execute(&mut self, units: u64, now_us: u64) -> u128 {
        let Some([(cir, cbs), (pir, pbs)]) = self.rates else {
            return GREEN;
        };
        let dt = now_us.saturating_sub(self.last_us) as u128;
        self.last_us = self.last_us.max(now_us);
        self.tc = (self.tc + dt * cir as u128).min(cbs as u128 * 1_000_000);
        self.tp = (self.tp + dt * pir as u128).min(pbs as u128 * 1_000_000);
        let b = units as u128 * 1_000_000;
        if self.tp < b {
            RED
        } else if self.tc < b {
            self.tp -= b;
            YELLOW
        } else {
            self.tp -= b;
            self.tc -= b;
            GREEN
        }
    }
}

/// A stored entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: Vec<MatchValue>,
    pub priority: i32,
    pub action: ActionRef,
    pub packets: u64,
    pub bytes: u64,
    /// Time (µs) of the last hit, for entry ageing done by the caller.
    pub last_hit_us: Option<u64>,
    pub meter: MeterState,
    /// Masked key values per component (0 for ranges).
    norm: Box<[u128]>,
    masks: Box<[u128]>,
    ranges: Option<Ranges>,
    lpm_len: u32,
}

/// Per-component inclusive ranges (`None` for non-range components).
type Ranges = Box<[Option<(u128, u128)>]>;
/// Masked key -> entry handle.
type KeyMap = FxHashMap<Box<[u128]>, u32>;

enum Index {
    Exact(FxHashMap<Box<[u128]>, u32>),
    /// Single-component exact key (no slice hashing).
    Exact1(FxHashMap<u128, u32>),
    Lpm {
        comp: usize,
        width: u32,
        /// (prefix length, map), longest first.
        lens: Vec<(u32, KeyMap)>,
    },
    /// Single-component LPM key: (prefix length, prefix mask, map), longest first.
    Lpm1 {
        width: u32,
        lens: Vec<(u32, u128, FxHashMap<u128, u32>)>,
    },
    Tss(Vec<Group>),
}

struct Group {
    masks: Box<[u128]>,
    best: (i32, u32),
    map: FxHashMap<Box<[u128]>, Vec<(i32, u32)>>,
    count: usize,
}

/// Entries of one table and their lookup structure.
pub(crate) struct MatchTable {
    kinds: Vec<(MatchKind, u32, u128)>,
    pub entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    pub count: usize,
    index: Index,
    pub max_size: usize,
}

fn prefix_mask(len: u32, width: u32) -> u128 {
    if len == 0 {
        0
    } else {
        mask(width) & !mask(width - len.min(width))
    }
}

impl MatchTable {
    pub fn new(keys: &[KeyField], max_size: usize) -> MatchTable {
        let kinds: Vec<(MatchKind, u32, u128)> = keys
            .iter()
            .map(|k| (k.kind, k.width, k.static_mask))
            .collect();
        let n_lpm = kinds.iter().filter(|k| k.0 == MatchKind::Lpm).count();
        let needs_tss = kinds.iter().any(|k| {
            matches!(
                k.0,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        }) || n_lpm > 1;
        let index = if needs_tss {
            Index::Tss(Vec::new())
        } else if n_lpm == 1 && kinds.len() == 1 {
            Index::Lpm1 {
                width: kinds[0].1,
                lens: Vec::new(),
            }
        } else if kinds.len() == 1 {
            Index::Exact1(FxHashMap::default())
        } else if n_lpm == 1 {
            let comp = kinds
                .iter()
                .position(|k| k.0 == MatchKind::Lpm)
                .unwrap_or(0);
            Index::Lpm {
                comp,
                width: kinds[comp].1,
                lens: Vec::new(),
            }
        } else {
            Index::Exact(FxHashMap::default())
        };
        MatchTable {
            kinds,
            entries: Vec::new(),
            free: Vec::new(),
            count: 0,
            index,
            max_size,
        }
    }

    /// Whether entries carry priorities (tuple-space tables).
    pub fn uses_priority(&self) -> bool {
        matches!(self.index, Index::Tss(_))
    }

    /// Checks a key against the table's key format and normalises it.
    #[allow(clippy::type_complexity)]
    fn normalize(
        &self,
        key: &[MatchValue],
    ) -> Result<
        (
            Box<[u128]>,
            Box<[u128]>,
            Option<Box<[Option<(u128, u128)>]>>,
            u32,
        ),
        ControlError,
    > {
        if key.len() != self.kinds.len() {
            return Err(ControlError::InvalidArgument(format!(
                "match key has {} components, the table has {}",
                key.len(),
                self.kinds.len()
            )));
        }
        let mut norm = Vec::with_capacity(key.len());
        let mut masks = Vec::with_capacity(key.len());
        let mut ranges: Vec<Option<(u128, u128)>> = Vec::new();
        let mut any_range = false;
        let mut lpm_len = 0;
        for (i, (mv, &(kind, width, smask))) in key.iter().zip(&self.kinds).enumerate() {
            let full = mask(width) & smask;
            let fits = |v: u128| -> Result<(), ControlError> {
                if v & !mask(width) != 0 {
                    Err(ControlError::InvalidArgument(format!(
                        "key component {i}: value {v:#x} wider than {width} bits"
                    )))
                } else {
                    Ok(())
                }
            };
            let (v, m, r) = match (kind, mv) {
                (MatchKind::Exact, MatchValue::Exact(v)) => {
                    fits(*v)?;
                    (*v & full, full, None)
                }
                (MatchKind::Valid, MatchValue::Valid(b)) => (*b as u128, 1, None),
                (MatchKind::Valid, MatchValue::Exact(v)) if *v <= 1 => (*v, 1, None),
                (MatchKind::Lpm, MatchValue::Lpm(v, len)) => {
                    fits(*v)?;
                    if *len > width {
                        return Err(ControlError::InvalidArgument(format!(
                            "key component {i}: prefix length {len} > width {width}"
                        )));
                    }
                    lpm_len = *len;
                    let pm = prefix_mask(*len, width) & smask;
                    (*v & pm, pm, None)
                }
                (MatchKind::Ternary, MatchValue::Ternary(v, m)) => {
                    fits(*v)?;
                    fits(*m)?;
                    (*v & *m & smask, *m & smask, None)
                }
                (MatchKind::Ternary, MatchValue::Exact(v)) => {
                    fits(*v)?;
                    (*v & full, full, None)
                }
                (MatchKind::Optional, MatchValue::Optional(o)) => match o {
                    Some(v) => {
                        fits(*v)?;
                        (*v & full, full, None)
                    }
                    None => (0, 0, None),
                },
                (MatchKind::Optional, MatchValue::Exact(v)) => {
                    fits(*v)?;
                    (*v & full, full, None)
                }
                (MatchKind::Range, MatchValue::Range(lo, hi)) => {
                    fits(*lo)?;
                    fits(*hi)?;
                    if lo > hi {
                        return Err(ControlError::InvalidArgument(format!(
                            "key component {i}: range low {lo:#x} > high {hi:#x}"
                        )));
                    }
                    any_range = true;
                    (0, 0, Some((*lo, *hi)))
                }
                (kind, mv) => {
                    return Err(ControlError::InvalidArgument(format!(
                        "key component {i}: {mv:?} does not fit match kind {kind:?}"
                    )))
                }
            };
            norm.push(v);
            masks.push(m);
            ranges.push(r);
        }
        let ranges = if any_range {
            Some(ranges.into_boxed_slice())
        } else {
            None
        };
        Ok((norm.into(), masks.into(), ranges, lpm_len))
    }

    /// Finds the handle of the entry with exactly this key (and priority, for
    /// tables with priorities).
    pub fn find(&self, key: &[MatchValue], priority: i32) -> Result<Option<u32>, ControlError> {
        let (norm, masks, ranges, lpm_len) = self.normalize(key)?;
        Ok(match &self.index {
            Index::Exact(m) => m.get(&norm).copied(),
            Index::Exact1(m) => m.get(&norm[0]).copied(),
            Index::Lpm { lens, .. } => lens
                .iter()
                .find(|(l, _)| *l == lpm_len)
                .and_then(|(_, m)| m.get(&norm).copied()),
            Index::Lpm1 { lens, .. } => lens
                .iter()
                .find(|(l, _, _)| *l == lpm_len)
                .and_then(|(_, _, m)| m.get(&norm[0]).copied()),
            Index::Tss(groups) => groups
                .iter()
                .find(|g| g.masks == masks)
                .and_then(|g| g.map.get(&norm))
                .and_then(|v| {
                    v.iter().map(|&(_, h)| h).find(|&h| {
                        let e = self.entries[h as usize].as_ref().expect("indexed entry");
                        e.priority == priority && e.ranges == ranges
                    })
                }),
        })
    }

    /// Adds an entry; returns its handle.
    pub fn add(
        &mut self,
        key: Vec<MatchValue>,
        priority: i32,
        action: ActionRef,
    ) -> Result<u32, ControlError> {
        if self.find(&key, priority)?.is_some() {
            return Err(ControlError::Duplicate(format!("{key:?}")));
        }
        if self.count >= self.max_size {
            return Err(ControlError::Full(String::new()));
        }
        let (norm, masks, ranges, lpm_len) = self.normalize(&key)?;
        let priority = if self.uses_priority() { priority } else { 0 };
        let handle = match self.free.pop() {
            Some(h) => h,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        match &mut self.index {
            Index::Exact(m) => {
                m.insert(norm.clone(), handle);
            }
            Index::Exact1(m) => {
                m.insert(norm[0], handle);
            }
            Index::Lpm1 { width, lens } => {
                let pos = match lens.iter().position(|(l, _, _)| *l <= lpm_len) {
                    Some(p) if lens[p].0 == lpm_len => p,
                    Some(p) => {
                        lens.insert(
                            p,
                            (lpm_len, prefix_mask(lpm_len, *width), FxHashMap::default()),
                        );
                        p
                    }
                    None => {
                        lens.push((lpm_len, prefix_mask(lpm_len, *width), FxHashMap::default()));
                        lens.len() - 1
                    }
                };
                lens[pos].2.insert(norm[0], handle);
            }
            Index::Lpm { lens, .. } => {
                let pos = match lens.iter().position(|(l, _)| *l <= lpm_len) {
                    Some(p) if lens[p].0 == lpm_len => p,
                    Some(p) => {
                        lens.insert(p, (lpm_len, FxHashMap::default()));
                        p
                    }
                    None => {
                        lens.push((lpm_len, FxHashMap::default()));
                        lens.len() - 1
                    }
                };
                lens[pos].1.insert(norm.clone(), handle);
            }
            Index::Tss(groups) => {
                let gi = match groups.iter().position(|g| g.masks == masks) {
                    Some(i) => i,
                    None => {
                        groups.push(Group {
                            masks: masks.clone(),
                            best: (i32::MAX, u32::MAX),
                            map: FxHashMap::default(),
                            count: 0,
                        });
                        groups.len() - 1
                    }
                };
                let g = &mut groups[gi];
                let v = g.map.entry(norm.clone()).or_default();
                let pos = v.partition_point(|&p| p < (priority, handle));
                v.insert(pos, (priority, handle));
                g.count += 1;
                g.best = g.best.min((priority, handle));
                groups.sort_by_key(|g| g.best);
            }
        }
        self.entries[handle as usize] = Some(Entry {
            key,
            priority,
            action,
            packets: 0,
            last_hit_us: None,
            bytes: 0,
            meter: MeterState::default(),
            norm,
            masks,
            ranges,
            lpm_len,
        });
        self.count += 1;
        Ok(handle)
    }

    pub fn get(&self, handle: u32) -> Option<&Entry> {
        self.entries.get(handle as usize).and_then(|e| e.as_ref())
    }

    pub fn get_mut(&mut self, handle: u32) -> Option<&mut Entry> {
        self.entries
            .get_mut(handle as usize)
            .and_then(|e| e.as_mut())
    }

    /// Removes an entry.
    pub fn delete(&mut self, handle: u32) -> Option<Entry> {
        let e = self.entries.get_mut(handle as usize)?.take()?;
        match &mut self.index {
            Index::Exact(m) => {
                m.remove(&e.norm);
            }
            Index::Exact1(m) => {
                m.remove(&e.norm[0]);
            }
            Index::Lpm1 { lens, .. } => {
                if let Some(p) = lens.iter().position(|(l, _, _)| *l == e.lpm_len) {
                    lens[p].2.remove(&e.norm[0]);
                    if lens[p].2.is_empty() {
                        lens.remove(p);
                    }
                }
            }
            Index::Lpm { lens, .. } => {
                if let Some(p) = lens.iter().position(|(l, _)| *l == e.lpm_len) {
                    lens[p].1.remove(&e.norm);
                    if lens[p].1.is_empty() {
                        lens.remove(p);
                    }
                }
            }
            Index::Tss(groups) => {
                if let Some(gi) = groups.iter().position(|g| g.masks == e.masks) {
                    let g = &mut groups[gi];
                    if let Some(v) = g.map.get_mut(&e.norm) {
                        v.retain(|&(_, h)| h != handle);
                        if v.is_empty() {
                            g.map.remove(&e.norm);
                        }
                    }
                    g.count -= 1;
                    if g.count == 0 {
                        groups.remove(gi);
                    } else {
                        g.best = g
                            .map
                            .values()
                            .filter_map(|v| v.first().copied())
                            .min()
                            .unwrap_or((i32::MAX, u32::MAX));
                    }
                    groups.sort_by_key(|g| g.best);
                }
            }
        }
        self.free.push(handle);
        self.count -= 1;
        Some(e)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.count = 0;
        self.index = match &self.index {
            Index::Exact(_) => Index::Exact(FxHashMap::default()),
            Index::Exact1(_) => Index::Exact1(FxHashMap::default()),
            Index::Lpm1 { width, .. } => Index::Lpm1 {
                width: *width,
                lens: Vec::new(),
            },
            Index::Lpm { comp, width, .. } => Index::Lpm {
                comp: *comp,
                width: *width,
                lens: Vec::new(),
            },
            Index::Tss(_) => Index::Tss(Vec::new()),
        };
    }

    /// Looks up a packet key (one value per component, static masks
    /// applied). `scratch` is a reusable buffer.
    #[inline]
    pub fn lookup(&self, key: &[u128], scratch: &mut Vec<u128>) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        match &self.index {
            Index::Exact(m) => m.get(key).copied(),
            Index::Exact1(m) => m.get(&key[0]).copied(),
            Index::Lpm1 { lens, .. } => {
                let v = key[0];
                for (_, pm, m) in lens {
                    if let Some(&h) = m.get(&(v & pm)) {
                        return Some(h);
                    }
                }
                None
            }
            Index::Lpm { comp, width, lens } => {
                scratch.clear();
                scratch.extend_from_slice(key);
                let v = key[*comp];
                for (len, m) in lens {
                    scratch[*comp] = v & prefix_mask(*len, *width);
                    if let Some(&h) = m.get(scratch.as_slice()) {
                        return Some(h);
                    }
                }
                None
            }
            Index::Tss(groups) => {
                let mut best: Option<(i32, u32)> = None;
                for g in groups {
                    if let Some(b) = best {
                        if g.best >= b {
                            break;
                        }
                    }
                    scratch.clear();
                    scratch.extend(key.iter().zip(g.masks.iter()).map(|(k, m)| k & m));
                    if let Some(cands) = g.map.get(scratch.as_slice()) {
                        for &(p, h) in cands {
                            if let Some(b) = best {
                                if (p, h) >= b {
                                    break;
                                }
                            }
                            let e = self.entries[h as usize].as_ref().expect("indexed entry");
                            let ok = match &e.ranges {
                                None => true,
                                Some(r) => r.iter().zip(key).all(|(r, k)| match r {
                                    Some((lo, hi)) => lo <= k && k <= hi,
                                    None => true,
                                }),
                            };
                            if ok {
                                best = Some((p, h));
                                break;
                            }
                        }
                    }
                }
                best.map(|b| b.1)
            }
        }
    }

    /// Handles of all entries, in handle order.
    pub fn handles(&self) -> Vec<u32> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|_| i as u32))
            .collect()
    }
}

/// Decides a lookup by scanning every entry (reference for tests).
#[cfg(test)]
pub(crate) fn linear_lookup(t: &MatchTable, key: &[u128]) -> Option<u32> {
    let mut best: Option<(i32, u32, u32)> = None; // (prio, -lpm_len as tiebreak, handle)
    for (h, e) in t.entries.iter().enumerate() {
        let Some(e) = e else { continue };
        let ok = key.iter().enumerate().all(|(i, k)| {
            let r = e.ranges.as_ref().and_then(|r| r[i]);
            match r {
                Some((lo, hi)) => lo <= *k && *k <= hi,
                None => k & e.masks[i] == e.norm[i],
            }
        });
        if ok {
            let cand = (e.priority, u32::MAX - e.lpm_len, h as u32);
            if best.is_none_or(|b| cand < b) {
                best = Some(cand);
            }
        }
    }
    best.map(|b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{FieldRef, KeySrc};
    use crate::rng::Rng;

    fn kf(kind: MatchKind, width: u32) -> KeyField {
        KeyField {
            name: "k".into(),
            kind,
            src: KeySrc::Field(FieldRef::Static(0)),
            width,
            static_mask: u128::MAX,
        }
    }

    fn act(n: u32) -> ActionRef {
        ActionRef::Direct(crate::program::ActionEntry {
            action: n,
            data: Box::new([]),
        })
    }

    #[test]
    fn exact_add_find_delete() {
        let mut t = MatchTable::new(&[kf(MatchKind::Exact, 16), kf(MatchKind::Valid, 1)], 10);
        let mut s = Vec::new();
        let h = t
            .add(
                vec![MatchValue::Exact(5), MatchValue::Valid(true)],
                0,
                act(1),
            )
            .unwrap();
        assert_eq!(t.lookup(&[5, 1], &mut s), Some(h));
        assert_eq!(t.lookup(&[5, 0], &mut s), None);
        assert!(matches!(
            t.add(
                vec![MatchValue::Exact(5), MatchValue::Valid(true)],
                0,
                act(2)
            ),
            Err(ControlError::Duplicate(_))
        ));
        assert!(matches!(
            t.add(
                vec![MatchValue::Exact(1 << 16), MatchValue::Valid(true)],
                0,
                act(2)
            ),
            Err(ControlError::InvalidArgument(_))
        ));
        assert!(matches!(
            t.add(
                vec![MatchValue::Lpm(1, 3), MatchValue::Valid(true)],
                0,
                act(2)
            ),
            Err(ControlError::InvalidArgument(_))
        ));
        assert!(t.delete(h).is_some());
        assert_eq!(t.lookup(&[5, 1], &mut s), None);
        assert!(t.delete(h).is_none());
    }

    #[test]
    fn lpm_longest_wins() {
        let mut t = MatchTable::new(&[kf(MatchKind::Lpm, 32)], 100);
        let mut s = Vec::new();
        let a = t
            .add(vec![MatchValue::Lpm(0x0a000000, 8)], 0, act(1))
            .unwrap();
        let b = t
            .add(vec![MatchValue::Lpm(0x0a010000, 16)], 0, act(2))
            .unwrap();
        let d = t.add(vec![MatchValue::Lpm(0, 0)], 0, act(3)).unwrap();
        assert_eq!(t.lookup(&[0x0a010203], &mut s), Some(b));
        assert_eq!(t.lookup(&[0x0a020203], &mut s), Some(a));
        assert_eq!(t.lookup(&[0x0b020203], &mut s), Some(d));
        t.delete(b);
        assert_eq!(t.lookup(&[0x0a010203], &mut s), Some(a));
        assert_eq!(
            t.find(&[MatchValue::Lpm(0x0a000000, 8)], 0).unwrap(),
            Some(a)
        );
        assert!(t.add(vec![MatchValue::Lpm(1, 33)], 0, act(1)).is_err());
    }

    #[test]
    fn lpm_with_exact_component() {
        let mut t = MatchTable::new(&[kf(MatchKind::Exact, 8), kf(MatchKind::Lpm, 32)], 100);
        let mut s = Vec::new();
        let a = t
            .add(
                vec![MatchValue::Exact(1), MatchValue::Lpm(0x0a000000, 8)],
                0,
                act(1),
            )
            .unwrap();
        let b = t
            .add(
                vec![MatchValue::Exact(2), MatchValue::Lpm(0x0a010000, 16)],
                0,
                act(2),
            )
            .unwrap();
        assert_eq!(t.lookup(&[1, 0x0a010203], &mut s), Some(a));
        assert_eq!(t.lookup(&[2, 0x0a010203], &mut s), Some(b));
        assert_eq!(t.lookup(&[2, 0x0a020203], &mut s), None);
        t.delete(a);
        assert_eq!(t.lookup(&[1, 0x0a010203], &mut s), None);
        t.clear();
        assert_eq!(t.lookup(&[2, 0x0a010203], &mut s), None);
        assert_eq!(t.count, 0);
    }

    #[test]
    fn ternary_priority_lowest_value_wins() {
        let mut t = MatchTable::new(&[kf(MatchKind::Ternary, 8)], 100);
        let mut s = Vec::new();
        let lo = t.add(vec![MatchValue::Ternary(0, 0)], 10, act(1)).unwrap();
        let hi = t
            .add(vec![MatchValue::Ternary(0x10, 0xf0)], 5, act(2))
            .unwrap();
        assert_eq!(t.lookup(&[0x12], &mut s), Some(hi));
        assert_eq!(t.lookup(&[0x22], &mut s), Some(lo));
        // same key, different priority: allowed
        let x = t
            .add(vec![MatchValue::Ternary(0x10, 0xf0)], 1, act(3))
            .unwrap();
        assert_eq!(t.lookup(&[0x12], &mut s), Some(x));
        assert!(t
            .add(vec![MatchValue::Ternary(0x10, 0xf0)], 1, act(3))
            .is_err());
        t.delete(x);
        assert_eq!(t.lookup(&[0x12], &mut s), Some(hi));
    }

    #[test]
    fn range_and_optional() {
        let mut t = MatchTable::new(&[kf(MatchKind::Range, 16), kf(MatchKind::Optional, 8)], 100);
        let mut s = Vec::new();
        let a = t
            .add(
                vec![MatchValue::Range(100, 200), MatchValue::Optional(None)],
                2,
                act(1),
            )
            .unwrap();
        let b = t
            .add(
                vec![MatchValue::Range(150, 160), MatchValue::Optional(Some(6))],
                1,
                act(2),
            )
            .unwrap();
        assert_eq!(t.lookup(&[155, 6], &mut s), Some(b));
        assert_eq!(t.lookup(&[155, 17], &mut s), Some(a));
        assert_eq!(t.lookup(&[99, 17], &mut s), None);
        assert_eq!(t.lookup(&[200, 17], &mut s), Some(a));
        assert!(t
            .add(
                vec![MatchValue::Range(5, 4), MatchValue::Optional(None)],
                1,
                act(2)
            )
            .is_err());
    }

    /// Random ternary/range tables agree with a linear scan.
    #[test]
    fn tss_matches_linear_scan() {
        let mut rng = Rng::new(7);
        for round in 0..20 {
            let mut t = MatchTable::new(
                &[
                    kf(MatchKind::Ternary, 8),
                    kf(MatchKind::Range, 8),
                    kf(MatchKind::Lpm, 8),
                ],
                1000,
            );
            let mut handles = Vec::new();
            for _ in 0..60 {
                let m = [0u128, 0xff, 0xf0, 0x0f, 0xaa][rng.range(0, 4) as usize];
                let v = rng.range(0, 255) & m;
                let lo = rng.range(0, 255);
                let hi = rng.range(lo, 255);
                let len = rng.range(0, 8) as u32;
                let p = rng.range(0, 20) as i32;
                let key = vec![
                    MatchValue::Ternary(v, m),
                    MatchValue::Range(lo, hi),
                    MatchValue::Lpm(rng.range(0, 255), len),
                ];
                if let Ok(h) = t.add(key, p, act(0)) {
                    handles.push(h);
                }
                if rng.range(0, 5) == 0 && !handles.is_empty() {
                    let i = rng.range(0, handles.len() as u128 - 1) as usize;
                    t.delete(handles.swap_remove(i));
                }
            }
            let mut s = Vec::new();
            for _ in 0..300 {
                let k = [rng.range(0, 255), rng.range(0, 255), rng.range(0, 255)];
                let got = t.lookup(&k, &mut s);
                let want = linear_lookup(&t, &k);
                // Equal priorities between different entries may tie: compare priorities.
                let pg = got.map(|h| t.get(h).unwrap().priority);
                let pw = want.map(|h| t.get(h).unwrap().priority);
                assert_eq!(pg, pw, "round {round} key {k:?}");
            }
        }
    }

    #[test]
    fn meter_trtcm() {
        let mut m = MeterState::default();
        assert_eq!(m.execute(100, 0), GREEN);
        // cir 1000 B/s burst 100 B, pir 2000 B/s burst 200 B
        m.set_rates([(1000, 100), (2000, 200)], 0);
        assert_eq!(m.execute(100, 0), GREEN); // tc 0, tp 100
        assert_eq!(m.execute(100, 0), YELLOW); // tp 0
        assert_eq!(m.execute(100, 0), RED);
        // 50 ms later: tc += 50, tp += 100
        assert_eq!(m.execute(100, 50_000), YELLOW);
        assert_eq!(m.execute(10, 50_000), RED);
        // 1 s later: both full
        assert_eq!(m.execute(100, 1_050_000), GREEN);
    }
}
